"""Linking by meaning, end to end over stdio (pytest-lsp): the "Link to related
section" code action and target completion after ``](`` and ``[[`` insert links
that go-to-definition resolves to the suggested heading."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import (
    FIXTURES,
    config,
    indexed_copy,
    initialize,
    open_doc,
    status,
    uri,
    wait_ready,
    wait_updates,
)
from lsprotocol import types
from pytest_lsp import LanguageClient
from rename_check import apply_edits as apply
from waiting import until

pytestmark = pytest.mark.slow

WS: dict = {}
FAILOVER = "handbook/runbooks/database-failover.md"
DRAFT = (
    "# Draft\n"
    "\n"
    "When the main database machine dies and nothing took over by itself, we choose\n"
    "the most caught-up standby copy and make it the new writer for the cluster.\n"
    "\n"
    "```\n"
    "the database machine died, pick a standby\n"
    "```\n"
)


@pytest.fixture(scope="module")
def ws(tmp_path_factory, request) -> Path:
    return indexed_copy(tmp_path_factory, "links", request)


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    WS["ws"] = ws
    await initialize(lsp_client, ws)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
async def ready(client: LanguageClient) -> dict:
    return await wait_ready(client)


def change(client: LanguageClient, u: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=u, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def actions(
    client: LanguageClient,
    u: str,
    start: tuple[int, int],
    end: tuple[int, int] | None = None,
    trigger=types.CodeActionTriggerKind.Invoked,
    only=None,
) -> list[types.CodeAction]:
    end = end or start
    res = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=u),
            range=types.Range(
                start=types.Position(line=start[0], character=start[1]),
                end=types.Position(line=end[0], character=end[1]),
            ),
            context=types.CodeActionContext(diagnostics=[], trigger_kind=trigger, only=only),
        )
    )
    return [a for a in res or [] if isinstance(a, types.CodeAction)]


async def definition_at(client: LanguageClient, u: str, line: int, col: int) -> types.Location:
    loc = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=u),
            position=types.Position(line=line, character=col),
        )
    )
    assert isinstance(loc, types.Location), loc
    return loc


# The headings of two fixture files: (0-based line, text, GitHub slug), written
# by hand from the files (``#`` lines inside code fences are not headings).
HEADINGS = {
    "handbook/runbooks/database-failover.md": [
        (7, "Database Failover", "database-failover"),
        (26, "Overview", "overview"),
        (48, "Topology", "topology"),
        (95, "Primary and replicas", "primary-and-replicas"),
        (110, "Connection routing through PgBouncer", "connection-routing-through-pgbouncer"),
        (125, "Detecting a failed primary", "detecting-a-failed-primary"),
        (143, "Symptoms", "symptoms"),
        (157, "Verification", "verification"),
        (168, "Automatic failover with Patroni", "automatic-failover-with-patroni"),
        (172, "Verification", "verification-1"),
        (181, "Manual failover", "manual-failover"),
        (189, "Freeze the scheduler", "freeze-the-scheduler"),
        (206, "Promote the replica", "promote-the-replica"),
        (233, "Repoint PgBouncer", "repoint-pgbouncer"),
        (252, "Unfreeze the scheduler", "unfreeze-the-scheduler"),
        (261, "Verification", "verification-2"),
        (274, "Rebuilding the old primary", "rebuilding-the-old-primary"),
        (278, "Split-brain", "split-brain"),
        (285, "How it happens", "how-it-happens"),
        (301, "Fencing the stale primary", "fencing-the-stale-primary"),
        (307, "Using the cloud console", "using-the-cloud-console"),
        (314, "Using the API", "using-the-api"),
        (328, "Data loss assessment", "data-loss-assessment"),
        (360, "Replication lag thresholds", "replication-lag-thresholds"),
        (381, "Practice drills", "practice-drills"),
        (402, "Appendix: the `pg-harbor-2` exception", "appendix-the-pg-harbor-2-exception"),
        (416, "Appendix: glossary", "appendix-glossary"),
    ],
    "handbook/howto/releasing.md": [
        (5, "Releasing Harbor", "releasing-harbor"),
        (12, "Release cadence", "release-cadence"),
        (23, "Cutting a release", "cutting-a-release"),
        (42, "Canary", "canary"),
        (51, "Full rollout", "full-rollout"),
        (58, "Rolling back a release", "rolling-back-a-release"),
        (66, "Hotfixes", "hotfixes"),
        (76, "Release freezes", "release-freezes"),
    ],
}


def heading_line(rel: str, slug: str) -> int:
    return next(line for line, _, s in HEADINGS[rel] if s == slug)


def heading_line_of_text(rel: str, text: str) -> int:
    return next(line for line, t, _ in HEADINGS[rel] if t == text)


def test_hand_written_headings_match_the_files():
    for rel, heads in HEADINGS.items():
        lines = (FIXTURES / rel).read_text().split("\n")
        assert [lines[n] for n, _, _ in heads] == [
            lines[n][: lines[n].index(" ")] + " " + t for n, t, _ in heads
        ]


async def test_code_action_inserts_a_link_that_resolves(client: LanguageClient, ready: dict):
    ws = WS["ws"]
    doc = ws / "handbook/notes/draft.md"
    doc.write_text(DRAFT)
    u = open_doc(client, doc, DRAFT)
    line3 = DRAFT.split("\n")[3]
    found = await actions(client, u, (3, len(line3)))
    assert 1 <= len(found) <= 5
    assert all(
        a.title.startswith("Link to related section: ") and a.kind == "refactor.rewrite"
        for a in found
    )
    assert all("handbook/notes/draft.md" not in a.title for a in found)  # elsewhere only
    act = next(a for a in found if FAILOVER in a.title)  # the section this paragraph is about
    (edit,) = act.edit.changes[u]
    assert edit.range.start == edit.range.end == types.Position(line=3, character=len(line3))
    assert edit.new_text.startswith(" [") and "](../runbooks/database-failover.md#" in edit.new_text
    new = apply(DRAFT, [edit])
    change(client, u, new, 2)
    ln = new.split("\n")[3]
    slug = edit.new_text.split("#", 1)[1].rstrip(")")
    loc = await definition_at(client, u, 3, ln.index("](") - 2)
    assert loc.uri == uri(ws / FAILOVER)
    assert loc.range.start.line == heading_line(FAILOVER, slug)
    # the paragraph now links there: that section is not offered again
    again = await actions(client, u, (3, 0))
    assert all(a.edit.changes[u][0].new_text != edit.new_text for a in again)


async def test_code_action_wraps_a_selection(client: LanguageClient, ready: dict):
    ws = WS["ws"]
    doc = ws / "handbook/notes/draft2.md"
    doc.write_text(DRAFT)
    u = open_doc(client, doc, DRAFT)
    line3 = DRAFT.split("\n")[3]
    a, b = line3.index("standby copy"), line3.index("standby copy") + len("standby copy")
    found = await actions(client, u, (3, a), (3, b))
    act = next(x for x in found if FAILOVER in x.title)
    (edit,) = act.edit.changes[u]
    assert edit.new_text.startswith("[standby copy](../runbooks/database-failover.md#")
    new = apply(DRAFT, [edit])
    change(client, u, new, 2)
    loc = await definition_at(client, u, 3, a + 2)
    assert loc.uri == uri(ws / FAILOVER)
    slug = edit.new_text.split("#", 1)[1].rstrip(")")
    assert loc.range.start.line == heading_line(FAILOVER, slug)


async def test_code_action_only_when_asked_and_only_in_prose(client: LanguageClient, ready: dict):
    ws = WS["ws"]
    u = open_doc(client, ws / "handbook/notes/draft3.md", DRAFT)
    assert await actions(client, u, (3, 5), trigger=types.CodeActionTriggerKind.Automatic) == []
    assert await actions(client, u, (3, 5), only=[types.CodeActionKind.QuickFix]) == []
    assert await actions(client, u, (3, 5), only=[types.CodeActionKind.Refactor])
    assert await actions(client, u, (6, 3)) == []  # inside a code fence
    assert await actions(client, u, (0, 3)) == []  # on a heading
    assert await actions(client, u, (1, 0)) == []  # on a blank line


async def complete(client: LanguageClient, u: str, line: int, col: int) -> types.CompletionList:
    res = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=u),
            position=types.Position(line=line, character=col),
            context=types.CompletionContext(
                trigger_kind=types.CompletionTriggerKind.TriggerCharacter, trigger_character="("
            ),
        )
    )
    assert isinstance(res, types.CompletionList)
    return res


async def test_completion_by_meaning_after_link_opener(client: LanguageClient, ready: dict):
    ws = WS["ws"]
    doc = ws / "handbook/notes/draft4.md"
    text = (
        "# Draft\n\nIf the new release misbehaves in production, undo it first and look into it\n"
        "afterwards: see [the rollback steps]()\n"
    )
    doc.write_text(text)
    u = open_doc(client, doc, text)
    ln = text.split("\n")[3]
    col = ln.index("]()") + 2
    res = await complete(client, u, 3, col)
    assert res.is_incomplete  # ranked by meaning: asked again as the user types
    kinds = [i.kind for i in res.items]
    sections = [i for i in res.items if i.kind == types.CompletionItemKind.Reference]
    assert sections and kinds.index(types.CompletionItemKind.File) > kinds.index(
        types.CompletionItemKind.Reference
    )
    assert all(i.text_edit.new_text.count("#") == 1 for i in sections)
    files = {i.text_edit.new_text for i in res.items if i.kind == types.CompletionItemKind.File}
    assert "../howto/releasing.md" in files and "draft4.md" not in files
    top = next(i for i in sections if "howto/releasing.md" in i.text_edit.new_text)
    assert sections.index(top) < 3
    edit = top.text_edit
    assert edit.range.start.character == col and edit.range.end.character == col
    new = apply(text, [edit])
    change(client, u, new, 2)
    slug = edit.new_text.split("#", 1)[1]
    loc = await definition_at(client, u, 3, new.split("\n")[3].index("[the") + 2)
    assert loc.uri == uri(ws / "handbook/howto/releasing.md")
    assert loc.range.start.line == heading_line("handbook/howto/releasing.md", slug)
    # typed words steer the ranking; the typed prefix is what gets replaced
    new2 = text.replace("]()", "](rollback)")
    change(client, u, new2, 3)
    col2 = new2.split("\n")[3].index("rollback)") + len("rollback")
    res2 = await complete(client, u, 3, col2)
    sec2 = [i for i in res2.items if i.kind == types.CompletionItemKind.Reference]
    assert sec2 and all(
        i.filter_text == "rollback" and i.text_edit.range.start.character == col2 - 8 for i in sec2
    )


async def test_completion_by_meaning_in_wiki_links(client: LanguageClient, ready: dict):
    ws = WS["ws"]
    doc = ws / "handbook/notes/draft5.md"
    text = "# Draft\n\nThe main database machine died and no standby took over: [[\n"
    doc.write_text(text)
    u = open_doc(client, doc, text)
    res = await complete(client, u, 2, len(text.split("\n")[2]))
    sections = [i for i in res.items if i.kind == types.CompletionItemKind.Reference]
    item = next(i for i in sections if i.text_edit.new_text.startswith("database-failover#"))
    assert item.text_edit.new_text.endswith("]]")  # closes the link
    new = apply(text, [item.text_edit])
    change(client, u, new, 2)
    ln = new.split("\n")[2]
    loc = await definition_at(client, u, 2, ln.index("[[") + 3)
    heading = item.text_edit.new_text.split("#", 1)[1][:-2]
    assert loc.uri == uri(ws / FAILOVER)
    assert loc.range.start.line == heading_line_of_text(FAILOVER, heading)
    files = {i.text_edit.new_text for i in res.items if i.kind == types.CompletionItemKind.File}
    assert "releasing]]" in files


async def test_links_to_non_ascii_headings_use_the_index_slug(client: LanguageClient, ready: dict):
    ws = WS["ws"]
    target = ws / "handbook/café notes/über.md"
    target.parent.mkdir()
    target.write_text(
        "# Über\n\n## Crème brûlée für Käsekuchen-Fans\n\n"
        "Caramelise the custard with a blowtorch until the sugar crackles; chill the ramekins first.\n"
    )
    st0 = await status(client)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri(target)))
    )
    await wait_updates(client, st0["updates_done"])
    await until(lambda: status(client), lambda st: st["pending_embeds"] == 0, timeout=60)
    doc = ws / "handbook/notes/dessert.md"
    text = (
        "# Dessert\n\nFor the custard, caramelise the sugar with a blowtorch until it crackles.\n"
    )
    doc.write_text(text)
    u = open_doc(client, doc, text)
    found = await actions(client, u, (2, 10))
    act = next(a for a in found if "Crème brûlée" in a.title)
    (edit,) = act.edit.changes[u]
    want_slug = "crème-brûlée-für-käsekuchen-fans"  # GitHub's slug: letters kept, lower-cased
    assert (
        edit.new_text == f" [Crème brûlée für Käsekuchen-Fans](../café%20notes/über.md#{want_slug})"
    )
    new = apply(text, [edit])
    change(client, u, new, 2)
    ln = new.split("\n")[2]
    loc = await definition_at(client, u, 2, ln.index(" [") + 3)
    assert loc.uri == uri(target) and loc.range.start.line == 2
