"""Front-matter aliases over stdio (pytest-lsp): ``[[Alias]]``, ``[[Alias#Heading]]``
and ``[[Alias|text]]`` reach the note that declares the alias, for definition,
diagnostics, references, document links, completion and rename; a file name
wins over an alias, and an alias two notes claim is reported, never picked.
Every expected value is written by hand from the fixture below."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
import rename_check as rc
from lsp_support import config, initialize, open_doc, rename_capabilities, uri, wait_ready
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

FILES = {
    "ops/incident response.md": (
        "---\n"
        "aliases: [IR, Outage playbook]\n"
        "---\n"
        "# Incident response\n"
        "\n"
        "Who is paged when production is down.\n"
        "\n"
        "## Paging\n"
        "\n"
        "Page the on-call engineer first.\n"
    ),
    "notes/on call.md": (
        "---\nalias:\n  - Pager rota\n---\n# On call\n\nThe weekly rota of engineers.\n"
    ),
    "a.md": "---\naliases: [Shared]\n---\n# A\n\nFirst.\n",
    "b.md": "---\naliases:\n  - Shared\n  - setup\n---\n# B\n\nSecond.\n",
    "setup.md": "# Setup\n\nInstall it.\n",
    "vault.md": (
        "# Vault\n"
        "\n"
        "[[IR]] and [[IR#Paging]] and [[Outage playbook|the playbook]] and [[pager rota]]\n"
        "\n"
        "[[Shared]] then [[setup]] then [[Nope]]\n"
        "\n"
        "[[incident response]]\n"
    ),
}
INCIDENT = "ops/incident response.md"


def make_ws(dest: Path) -> Path:
    for rel, text in FILES.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text)
    return dest


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_ws(tmp_path / "ws")


@pytest_lsp.fixture(config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    await initialize(lsp_client, ws, caps=rename_capabilities())
    yield
    await lsp_client.shutdown_session()


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def rng(a: int, b: int, c: int, d: int) -> types.Range:
    return types.Range(start=pos(a, b), end=pos(c, d))


def doc_id(path: Path) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri(path))


async def diagnostics(client: LanguageClient, u: str) -> list[tuple[int, int, str]]:
    deadline = asyncio.get_running_loop().time() + 30
    while u not in client.diagnostics and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    return sorted(
        (d.range.start.line, d.range.start.character, d.message) for d in client.diagnostics[u]
    )


async def test_diagnostics_know_aliases_and_report_ambiguous_ones(client: LanguageClient, ws: Path):
    assert await diagnostics(client, open_doc(client, ws / "vault.md")) == [
        (4, 0, "Ambiguous link: 'Shared' is an alias of a.md and b.md"),
        (4, 31, "No such note: Nope.md"),
    ]  # nothing on line 2 (every alias resolves), [[setup]] is setup.md
    assert await diagnostics(client, open_doc(client, ws / "b.md")) == [
        (2, 4, "Alias 'Shared' leads nowhere: a.md declares it too, so [[Shared]] is ambiguous"),
        (
            3,
            4,
            "Alias 'setup' leads nowhere: [[setup]] leads to setup.md (a file name wins over an alias)",
        ),
    ]


async def test_definition_through_an_alias(client: LanguageClient, ws: Path):
    vault = open_doc(client, ws / "vault.md")

    async def definition(col: int, line: int = 2):
        return await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=vault), position=pos(line, col)
            )
        )

    incident = uri(ws / INCIDENT)
    assert await definition(3) == types.Location(uri=incident, range=rng(0, 0, 0, 0))
    assert await definition(16) == types.Location(
        uri=incident, range=rng(7, 0, 7, 9)
    )  # [[IR#Paging]]
    assert await definition(35) == types.Location(uri=incident, range=rng(0, 0, 0, 0))
    assert await definition(75) == types.Location(
        uri=uri(ws / "notes/on call.md"), range=rng(0, 0, 0, 0)
    )
    # [[Shared]]: both notes that claim it, for the user to choose from
    assert await definition(3, line=4) == [
        types.Location(uri=uri(ws / "a.md"), range=rng(0, 0, 0, 0)),
        types.Location(uri=uri(ws / "b.md"), range=rng(0, 0, 0, 0)),
    ]


async def test_references_and_document_links_count_alias_links(client: LanguageClient, ws: Path):
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc_id(ws / INCIDENT),
            position=pos(7, 4),  # ## Paging
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert [(r.uri, r.range) for r in refs] == [(uri(ws / "vault.md"), rng(2, 11, 2, 24))]
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=doc_id(ws / "vault.md"))
    )
    targets = sorted((r.range.start.line, r.range.start.character, r.target) for r in links)
    incident = uri(ws / INCIDENT)
    assert targets == [
        (2, 0, incident),
        (2, 11, incident + "#L8"),
        (2, 29, incident),
        (2, 66, uri(ws / "notes/on call.md")),
        (4, 16, uri(ws / "setup.md")),
        (6, 0, incident),
    ]  # no link for the ambiguous [[Shared]] nor the missing [[Nope]]


async def test_completion_offers_aliases_that_lead_somewhere(client: LanguageClient, ws: Path):
    draft = ws / "draft.md"
    line = "Who is paged when production is down? See [["
    text = f"# Draft\n\n{line}\n"
    draft.write_text(text)
    open_doc(client, draft, text)
    await wait_ready(client)
    res = await client.text_document_completion_async(
        types.CompletionParams(text_document=doc_id(draft), position=pos(2, len(line)))
    )
    assert res is not None
    items = res.items if isinstance(res, types.CompletionList) else res
    aliases = sorted((i.label, i.detail) for i in items if (i.detail or "").startswith("alias of"))
    assert aliases == [
        ("IR", "alias of ops/incident response.md"),
        ("Outage playbook", "alias of ops/incident response.md"),
        ("Pager rota", "alias of notes/on call.md"),
    ]  # not Shared (two notes claim it) nor setup (setup.md has that name)
    ir = next(i for i in items if i.label == "IR")
    assert ir.text_edit is not None and ir.text_edit.new_text == "IR]]"


async def test_renaming_an_alias_from_a_link_renames_it_everywhere(
    client: LanguageClient, ws: Path
):
    prep = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=doc_id(ws / "vault.md"), position=pos(2, 3))
    )
    assert isinstance(prep, types.PrepareRenamePlaceholder)
    assert (prep.placeholder, prep.range) == ("IR", rng(2, 2, 2, 4))
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=doc_id(ws / "vault.md"), position=pos(2, 3), new_name="Incidents: P1"
        )
    )
    rc.apply_workspace_edit(edit)
    assert (ws / INCIDENT).read_text().split("\n")[
        1
    ] == 'aliases: ["Incidents: P1", Outage playbook]'
    assert (ws / "vault.md").read_text().split("\n")[2] == (
        "[[Incidents: P1]] and [[Incidents: P1#Paging]] and [[Outage playbook|the playbook]] and [[pager rota]]"
    )
    with pytest.raises(Exception, match="already an alias of notes/on call.md"):
        await client.text_document_rename_async(
            types.RenameParams(
                text_document=doc_id(ws / INCIDENT), position=pos(1, 35), new_name="pager ROTA"
            )
        )


async def test_heading_rename_and_file_move_keep_alias_links(client: LanguageClient, ws: Path):
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=doc_id(ws / INCIDENT), position=pos(7, 4), new_name="Who to page"
        )
    )
    rc.apply_workspace_edit(edit)
    assert "[[IR#Who to page]]" in (ws / "vault.md").read_text()
    before = (ws / "vault.md").read_text()
    moved = await client.workspace_will_rename_files_async(
        types.RenameFilesParams(
            files=[
                types.FileRename(old_uri=uri(ws / INCIDENT), new_uri=uri(ws / "archive/ir-2024.md"))
            ]
        )
    )
    rc.apply_workspace_edit(moved)
    after = (ws / "vault.md").read_text().split("\n")
    # by hand: the link by file name follows the move; the links by alias stay as they are
    assert after == [*before.split("\n")[:6], "[[ir-2024]]", ""]
