"""End to end over stdio: one real ``mdseek serve`` per module, driven by pytest-lsp,
on a private copy of the fixture workspace (fixtures/ itself is never written)."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import (
    config,
    fixture_queries,
    indexed_copy,
    initialize,
    open_doc,
    request,
    status,
    uri,
    utf16_col,
    wait_ready,
    wait_updates,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from waiting import until

pytestmark = pytest.mark.slow

QUERIES = fixture_queries()
INIT: dict = {}


@pytest.fixture(scope="module")
def ws(tmp_path_factory, request) -> Path:
    return indexed_copy(tmp_path_factory, "e2e", request)


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    t0 = time.perf_counter()
    INIT["result"] = await initialize(lsp_client, ws)
    INIT["seconds"] = time.perf_counter() - t0
    INIT["ws"] = ws
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
async def ready(client: LanguageClient) -> dict:
    return await wait_ready(client)


def link_col(line: str, kind: str) -> int:
    """A column inside the link on ``line`` (found without the code under test)."""
    if kind == "wiki":
        return line.index("[[") + 2
    m = re.search(r"\[[^\[\]]+\](\(|\[)", line)
    assert m, line
    return m.start() + 1


async def symbols(client: LanguageClient, query: str) -> list[types.SymbolInformation]:
    return list(await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)) or [])


# -- lifecycle --------------------------------------------------------------------


async def test_initialize_answers_at_once_with_capabilities(client: LanguageClient):
    caps = INIT["result"].capabilities
    assert INIT["seconds"] < 10  # no indexing or model load before the answer
    assert caps.workspace_symbol_provider and caps.document_symbol_provider
    assert caps.definition_provider and caps.hover_provider and caps.references_provider
    assert "#" in caps.completion_provider.trigger_characters
    assert caps.text_document_sync.save is not None
    assert caps.workspace.workspace_folders.change_notifications


async def test_progress_reported_with_counts(client: LanguageClient, ready: dict):
    reports = [r for vals in client.progress_reports.values() for r in vals]
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and "report" in kinds and kinds[-1] == "end"
    assert any(
        re.search(r"\d+ of \d+ files read", r.message or "") for r in reports if r.kind == "report"
    )
    words = " ".join(r.message or "" for r in reports)  # plain words: no internals
    assert not re.search(r"chunk|passage|embedded|texts", words), words
    end = [r for r in reports if r.kind == "end"][-1]
    assert end.message == f"ready: {ready['files']} files, {ready['chunks']} sections"


async def test_file_watcher_registered(client: LanguageClient, ready: dict):
    regs = [r for r in client.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    assert regs
    globs = [
        w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in _watchers(regs[0])
    ]
    assert "**/*.md" in globs


def _watchers(reg) -> list:
    opts = reg.register_options
    return opts["watchers"] if isinstance(opts, dict) else opts.watchers


async def test_status_ready(client: LanguageClient, ready: dict):
    assert ready["state"] == "ready"
    n_md = len(list(INIT["ws"].rglob("*.md")))
    assert ready["files"] == n_md
    assert ready["chunks"] > n_md
    assert ready["window_fit"] == 1.0
    assert ready["pending_embeds"] == 0
    assert ready["model"]


# -- workspace/symbol and mdseek/search ------------------------------------------------


async def test_workspace_symbol_finds_sections_by_paraphrase(client: LanguageClient, ready: dict):
    paraphrases = [q for q in QUERIES["queries"] if q["kind"] == "paraphrase"][::4]  # 10, for speed
    hits = 0
    misses = []
    for q in paraphrases:
        res = await symbols(client, q["query"])
        found = [(s.location.uri, s.name) for s in res[:10]]
        want = (uri(INIT["ws"] / q["path"]), q["heading"])
        if want in found:
            hits += 1
        else:
            misses.append(q["query"])
    assert hits / len(paraphrases) >= 0.7, misses
    # and the shape: heading as name, its parents as container (not the heading
    # again), heading line as range
    res = await symbols(client, paraphrases[0]["query"])
    s = res[0]
    assert s.kind in (types.SymbolKind.String, types.SymbolKind.Namespace)
    file = Path(s.location.uri[7:])
    assert s.container_name.startswith(file.name)  # the file first
    parents = s.container_name.removeprefix(file.name).removeprefix(" › ")
    assert not parents.endswith(s.name)  # the heading is not repeated
    assert all(p in file.read_text() for p in parents.split(" > "))
    line = Path(s.location.uri[7:]).read_text().split("\n")[s.location.range.start.line]
    assert s.name in line


async def test_workspace_symbol_empty_query_lists_headings_fast(
    client: LanguageClient, ready: dict
):
    # as VS Code's and marksman's: the headings, files in path order, the first
    # searchLimit (20); no search (README.md's fenced template is no heading)
    t0 = time.perf_counter()
    got = await symbols(client, "")
    assert time.perf_counter() - t0 < 1.0
    assert len(got) == 20
    assert [(s.name, s.location.range.start.line) for s in got[:9]] == [
        ("Lattice Labs Team Handbook", 0),
        ("Runbooks", 11),
        ("Architecture decisions", 26),
        ("How-to guides", 36),
        ("Onboarding", 43),
        ("Policies", 48),
        ("Meeting notes", 56),
        ("Adding a page", 62),
        ("ADR 0001: Use Postgres for job state", 7),
    ]
    assert got[8].location.uri.endswith("/adr/0001-use-postgres-for-job-state.md")
    assert (
        got[19].name == "Status"
        and got[19].container_name == "handbook/adr/0003-run-harbor-on-kubernetes.md"
    )


async def test_mdseek_search_shape(client: LanguageClient, ready: dict):
    q = next(q for q in QUERIES["queries"] if q["kind"] == "keyword")
    res = await request(client, "mdseek/search", {"query": q["query"], "limit": 5})
    assert res["mode"] == "hybrid"
    assert 0 < len(res["results"]) <= 5
    keys = {
        "uri",
        "path",
        "heading",
        "heading_text",
        "breadcrumb",
        "level",
        "range",
        "start_line",
        "end_line",
        "score",
        "snippet",
        "lexical_rank",
        "dense_rank",
    }
    for r in res["results"]:
        assert set(r) == keys
        assert r["uri"] == uri(INIT["ws"] / r["path"])
        # LSP's range is 0-based; start_line/end_line 1-based, inclusive (as CLI and MCP)
        assert r["range"]["start"]["line"] + 1 == r["start_line"] <= r["end_line"]
        assert r["range"]["start"]["character"] == 0
    assert [r["score"] for r in res["results"]] == sorted(
        (r["score"] for r in res["results"]), reverse=True
    )
    hit = [
        r for r in res["results"] if r["path"] == q["path"] and r["heading_text"] == q["heading"]
    ]
    assert hit, res["results"]
    # headings as written (inline markup kept), the plain text beside them
    res = await request(client, "mdseek/search", {"query": "undo the migrate command", "limit": 5})
    step2 = next(r for r in res["results"] if r["path"].endswith("writing-migrations.md"))
    assert (step2["start_line"], step2["heading"], step2["heading_text"]) == (
        104,
        'Rollback — step 2: "undo" the `migrate` command',
        'Rollback — step 2: "undo" the migrate command',
    )
    default = await request(client, "mdseek/search", {"query": "database"})
    assert len(default["results"]) == 20  # searchLimit default


async def test_cancellation_of_superseded_queries(client: LanguageClient, ready: dict):
    before = (await status(client))["cancelled"]
    words = "how do we promote a replica when the primary database fails".split()
    futures = []
    ids = []
    for n in range(1, len(words) + 1):
        msg_id = f"sym-{n}-{time.monotonic_ns()}"
        fut = asyncio.ensure_future(
            client.protocol.send_request_async(
                types.WORKSPACE_SYMBOL,
                types.WorkspaceSymbolParams(query=" ".join(words[:n])),
                msg_id=msg_id,
            )
        )
        await asyncio.sleep(0)  # the request is on the wire
        futures.append(fut)
        ids.append(msg_id)
        if n < len(words):  # a keystroke later, the client cancels the previous query
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    results = await asyncio.gather(*futures, return_exceptions=True)
    last = results[-1]
    assert isinstance(last, list) and last, last
    cancelled = [
        r for r in results[:-1] if isinstance(r, (JsonRpcException, asyncio.CancelledError))
    ]
    answered = [r for r in results[:-1] if isinstance(r, list)]
    assert len(cancelled) + len(answered) == len(results) - 1, results
    assert cancelled, "no superseded query was cancelled"
    after = (await status(client))["cancelled"]
    assert after > before
    # the server is still fine afterwards
    assert await symbols(client, "failover")


# -- documents ---------------------------------------------------------------------------


async def test_document_symbol_tree(client: LanguageClient, ready: dict):
    path = INIT["ws"] / "handbook/runbooks/database-failover.md"
    u = open_doc(client, path)
    res = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=u))
    )
    assert res and isinstance(res[0], types.DocumentSymbol)
    lines = path.read_text().split("\n")

    def walk(syms, parent=None):
        for s in syms:
            assert lines[s.selection_range.start.line].lstrip("# ").startswith(s.name.split(" ")[0])
            assert _contains(s.range, s.selection_range)
            if parent is not None:
                assert _contains(parent.range, s.range)
            walk(s.children or [], s)

    walk(res)
    names = _flatten(res)
    assert "Promote the replica" in names
    promote = _find(res, "Promote the replica")
    assert promote.selection_range.start.line == 206
    assert promote.range.end.line > 206
    assert any(s.children for s in res)  # hierarchical, not flat


def _contains(outer: types.Range, inner: types.Range) -> bool:
    a = (outer.start.line, outer.start.character) <= (inner.start.line, inner.start.character)
    b = (inner.end.line, inner.end.character) <= (outer.end.line, outer.end.character)
    return a and b


def _flatten(syms) -> list[str]:
    out = []
    for s in syms:
        out.append(s.name)
        out.extend(_flatten(s.children or []))
    return out


def _find(syms, name):
    for s in syms:
        if s.name == name:
            return s
        f = _find(s.children or [], name)
        if f:
            return f
    return None


async def test_document_symbols_follow_unsaved_buffer(client: LanguageClient, ready: dict):
    path = INIT["ws"] / "handbook/policies/travel.md"
    u = open_doc(client, path)
    text = path.read_text() + "\n## Unsaved buffer heading\n\nbody\n"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=u, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    res = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=u))
    )
    assert "Unsaved buffer heading" in _flatten(res)
    assert "Unsaved buffer heading" not in path.read_text()


# -- links ------------------------------------------------------------------------------


GOOD_LINKS = [
    e for e in QUERIES["links"] if e["target_path"] and not e["kind"].startswith("broken")
]


@pytest.mark.parametrize("entry", GOOD_LINKS, ids=lambda e: f"{e['kind']}:{e['path']}:{e['line']}")
async def test_definition(client: LanguageClient, ready: dict, entry: dict):
    path = INIT["ws"] / entry["path"]
    u = open_doc(client, path)
    line = path.read_text().split("\n")[entry["line"]]
    col = utf16_col(line, link_col(line, entry["kind"]))
    res = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=u),
            position=types.Position(line=entry["line"], character=col),
        )
    )
    assert isinstance(res, types.Location), res
    assert res.uri == uri(INIT["ws"] / entry["target_path"])
    assert res.range.start.line == (entry["target_line"] or 0)


async def test_hover_on_link_previews_target(client: LanguageClient, ready: dict):
    entry = next(e for e in GOOD_LINKS if e["target_heading"] == "Promote the replica")
    path = INIT["ws"] / entry["path"]
    u = open_doc(client, path)
    line = path.read_text().split("\n")[entry["line"]]
    res = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=u),
            position=types.Position(
                line=entry["line"], character=utf16_col(line, link_col(line, "relative"))
            ),
        )
    )
    assert isinstance(res.contents, types.MarkupContent)
    assert res.contents.kind == types.MarkupKind.Markdown
    md = res.contents.value
    assert "**Promote the replica**" in md
    assert "Database Failover" in md  # breadcrumb
    assert entry["target_path"] in md
    assert f"`{entry['target_path']}:{entry['target_line'] + 1}`" in md  # as text: one link
    target_lines = (INIT["ws"] / entry["target_path"]).read_text().split("\n")
    body = next(ln for ln in target_lines[entry["target_line"] + 1 :] if ln.strip())
    assert body.strip()[:30] in md
    assert len(md) < 1500
    assert "command:" not in md


async def test_hover_on_heading_lists_related_sections(client: LanguageClient, ready: dict):
    path = INIT["ws"] / "handbook/runbooks/database-failover.md"
    u = open_doc(client, path)
    res = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=u),
            position=types.Position(line=206, character=5),
        )
    )
    md = res.contents.value
    assert "**Database Failover > Manual failover > Promote the replica**" in md
    links = re.findall(r"\]\((file://[^)]+)\)", md)
    assert 1 <= len(links) <= 5
    for link in links:
        assert re.search(r"\.md#L\d+$", link)
        assert "database-failover.md" not in link  # elsewhere in the workspace
    assert "command:" not in md
    assert res.range.start.line == 206


async def test_hover_and_definition_never_leave_the_workspace(client: LanguageClient, ready: dict):
    ws = INIT["ws"]
    secret = ws.parent / "secret.md"
    secret.write_text("# Secret\n\nTOP-SECRET-CONTENT\n")
    doc = ws / "handbook/notes/escape.md"
    line = (
        "[a](../../../secret.md) and [b](../../../../../../../../etc/passwd) [[../../../secret]]"
        " and [c](../policies/travel.md)"
    )
    text = f"# Escape\n\n{line}\n"
    doc.write_text(text)
    u = open_doc(client, doc, text)
    tid = types.TextDocumentIdentifier(uri=u)

    async def probe(target: str) -> tuple:
        pos = types.Position(line=2, character=line.index(target) + 2)  # inside that link
        hov = await client.text_document_hover_async(
            types.HoverParams(text_document=tid, position=pos)
        )
        d = await client.text_document_definition_async(
            types.DefinitionParams(text_document=tid, position=pos)
        )
        return hov, d

    # the same probe on a link inside the workspace answers (it is on a link)
    hov, d = await probe("policies/travel.md")
    assert hov is not None and isinstance(d, types.Location) and d.uri.endswith("travel.md")
    for target in ("secret.md", "etc/passwd", "[[../../../secret"):
        hov, d = await probe(target)
        assert hov is None or (
            "TOP-SECRET" not in hov.contents.value and "root:" not in hov.contents.value
        ), target
        assert d is None, target


async def test_references_to_a_heading(client: LanguageClient, ready: dict):
    path = INIT["ws"] / "handbook/runbooks/database-failover.md"
    u = open_doc(client, path)
    res = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=u),
            position=types.Position(line=206, character=4),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    got = {(r.uri, r.range.start.line) for r in res}
    want = {
        (uri(INIT["ws"] / e["path"]), e["line"])
        for e in QUERIES["links"]
        if e["target_heading"] == "Promote the replica"
    }
    assert want <= got


async def test_anchor_completion(client: LanguageClient, ready: dict):
    doc = INIT["ws"] / "handbook/notes/completion.md"
    text = "# C\n\nsee [x](../runbooks/database-failover.md#pro\nand [[database-failover#Prom\n"
    u = open_doc(client, doc, text)
    for line, label in ((2, "promote-the-replica"), (3, "Promote the replica")):
        ln = text.split("\n")[line]
        res = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=u),
                position=types.Position(line=line, character=len(ln)),
            )
        )
        labels = [i.label for i in res.items]
        assert label in labels
        item = next(i for i in res.items if i.label == label)
        assert item.text_edit.range.start.character == ln.rindex("#") + 1


async def test_broken_link_diagnostics(client: LanguageClient, ready: dict):
    broken = [e for e in QUERIES["links"] if e["kind"].startswith("broken")]
    for e in broken:
        u = open_doc(client, INIT["ws"] / e["path"])
        deadline = time.monotonic() + 10
        while u not in client.diagnostics and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        lines = {d.range.start.line for d in client.diagnostics.get(u, [])}
        assert e["line"] in lines, (e, client.diagnostics.get(u))
    good = INIT["ws"] / GOOD_LINKS[0]["path"]
    u = open_doc(client, good)
    deadline = time.monotonic() + 10
    while u not in client.diagnostics and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert GOOD_LINKS[0]["line"] not in {d.range.start.line for d in client.diagnostics.get(u, [])}


# -- keeping the index current ---------------------------------------------------------------------


def _indexed_hashes(ws: Path, rel: str) -> list[str]:
    db = sqlite3.connect(ws / ".mdseek/index.sqlite", timeout=30)
    try:
        rows = db.execute(
            "SELECT c.text_hash FROM chunks c JOIN documents d ON d.id = c.doc_id"
            " WHERE d.path = ? ORDER BY c.ordinal",
            (rel,),
        ).fetchall()
    finally:
        db.close()
    return [r[0] for r in rows]


def _save(client: LanguageClient, path: Path) -> None:
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri(path)))
    )


async def test_save_reindexes_only_the_changed_chunk(client: LanguageClient, ready: dict, chunker):
    from mdseek.index.text.parse import parse_bytes

    rel = "handbook/runbooks/database-failover.md"
    path = INIT["ws"] / rel
    open_doc(client, path)
    st0 = await status(client)
    lines = path.read_text().split("\n")
    lines[209] = lines[209] + " Remember the zanzibarquokka checklist."
    path.write_text("\n".join(lines))
    _save(client, path)
    st1 = await wait_updates(client, st0["updates_done"])
    res = await symbols(client, "zanzibarquokka")
    assert res and res[0].location.uri == uri(path)
    assert res[0].name == "Promote the replica"
    new = [c.text_hash for c in chunker.chunk(parse_bytes(path.read_bytes(), rel))]
    assert _indexed_hashes(INIT["ws"], rel) == new
    # one paragraph: its chunk at once, then the passage holding it in the background
    assert st1["embedded_total"] - st0["embedded_total"] in (1, 2)
    deadline = time.monotonic() + 30
    while (st2 := await status(client))["pending_embeds"] and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert st2["pending_embeds"] == 0
    assert st2["embedded_total"] - st0["embedded_total"] == 2


async def test_rapid_saves_coalesce_and_end_current(client: LanguageClient, ready: dict, chunker):
    from mdseek.index.text.parse import parse_bytes

    rel = "handbook/howto/releasing.md"
    path = INIT["ws"] / rel
    st0 = await status(client)
    original = path.read_text()
    for n in range(6):
        path.write_text(original + f"\n## Save number {n}\n\nsavecount{n} text\n")
        _save(client, path)
    st1 = await wait_updates(client, st0["updates_done"])
    # Six saves in one burst (no pause between them: a pause let a starved test process
    # space them out past the server's update, and the count rose to 3 at load 19):
    # the first is indexed at once, the five in its wake coalesce into one.
    assert st1["updates_done"] - st0["updates_done"] <= 2
    new = [c.text_hash for c in chunker.chunk(parse_bytes(path.read_bytes(), rel))]
    assert _indexed_hashes(INIT["ws"], rel) == new
    res = await request(client, "mdseek/search", {"query": "savecount5", "limit": 3})
    assert res["results"] and res["results"][0]["heading"] == "Save number 5"
    res = await request(client, "mdseek/search", {"query": "savecount2", "limit": 3})
    assert not [r for r in res["results"] if r["heading"] == "Save number 2"]


async def test_external_delete_and_rename_via_watched_files(client: LanguageClient, ready: dict):
    ws = INIT["ws"]
    st0 = await status(client)
    gone = ws / "handbook/policies/leave.md"
    heading = "leave"
    gone.unlink()
    src = ws / "handbook/policies/travel.md"
    dst = ws / "handbook/policies/travel-and-trips.md"
    src.rename(dst)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=uri(gone), type=types.FileChangeType.Deleted),
                types.FileEvent(uri=uri(src), type=types.FileChangeType.Deleted),
                types.FileEvent(uri=uri(dst), type=types.FileChangeType.Created),
            ]
        )
    )
    st1 = await wait_updates(client, st0["updates_done"])
    assert st1["files"] == st0["files"] - 1
    res = await request(client, "mdseek/search", {"query": heading, "limit": 50})
    paths = {r["path"] for r in res["results"]}
    assert "handbook/policies/leave.md" not in paths
    res = await request(client, "mdseek/search", {"query": "travel", "limit": 50})
    paths = {r["path"] for r in res["results"]}
    assert "handbook/policies/travel-and-trips.md" in paths
    assert "handbook/policies/travel.md" not in paths


async def test_folder_deleted_outside_the_editor(client: LanguageClient, ready: dict):
    import shutil

    ws = INIT["ws"]
    st0 = await status(client)
    adr = ws / "handbook/adr"
    n = len(list(adr.glob("*.md")))
    shutil.rmtree(adr)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(adr), type=types.FileChangeType.Deleted)]
        )
    )
    st1 = await wait_updates(client, st0["updates_done"])
    assert n and st1["files"] == len(list(ws.rglob("*.md")))  # a full reconcile: files on disk
    res = await request(
        client, "mdseek/search", {"query": "ADR decision postgres redis", "limit": 50}
    )
    assert not [r for r in res["results"] if r["path"].startswith("handbook/adr/")]


async def test_workspace_folders_added_and_removed(
    client: LanguageClient, ready: dict, tmp_path: Path
):
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "garden.md").write_text(
        "# Garden\n\n## Watering the tomatoes\n\nWater the tomatoes at dawn.\n"
    )
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=uri(extra), name="extra")], removed=[]
            )
        )
    )
    await until(lambda: status(client), lambda st: len(st["roots"]) == 2, what="two roots")
    st = await wait_ready(client)
    assert len(st["roots"]) == 2
    res = await request(client, "mdseek/search", {"query": "watering tomatoes", "limit": 5})
    assert res["results"][0]["uri"] == uri(extra / "garden.md")
    res = await request(client, "mdseek/search", {"query": "database failover", "limit": 5})
    assert res["results"][0]["path"].startswith("handbook/")  # merged across both roots
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=uri(extra), name="extra")]
            )
        )
    )
    st = await until(lambda: status(client), lambda st: len(st["roots"]) == 1, what="one root")
    res = await request(client, "mdseek/search", {"query": "watering tomatoes", "limit": 5})
    assert all("garden.md" not in r["uri"] for r in res["results"])


async def test_reindex_request(client: LanguageClient, ready: dict):
    """mdseek/reindex reconciles with the disk: a file written and one deleted
    without any notice to the server are in its answer and in search."""
    ws = INIT["ws"]

    def on_disk() -> int:
        return len([p for p in ws.rglob("*") if p.suffix.lower() in (".md", ".markdown")])

    new = ws / "handbook/notes/reindex-probe.md"
    new.write_text("# Reindex probe\n\n## Marmalade\n\nThe quokkaflange rule.\n")
    gone = ws / "handbook/notes/2026-03 retro.md"
    gone_text = gone.read_text()
    gone.unlink()
    try:
        res = await request(client, "mdseek/reindex", {})
        assert res["files"] == on_disk()
        await until(lambda: status(client), lambda st: st["pending_embeds"] == 0, timeout=120)
        found = await request(client, "mdseek/search", {"query": "quokkaflange rule", "limit": 5})
        assert "handbook/notes/reindex-probe.md" in [r["path"] for r in found["results"]]
        retro = await request(client, "mdseek/search", {"query": "retro", "limit": 50})
        assert all(r["path"] != "handbook/notes/2026-03 retro.md" for r in retro["results"])
        new.unlink()
        again = await request(client, "mdseek/reindex", {})
        assert again["files"] == res["files"] - 1 == on_disk()
        assert again["chunks"] < res["chunks"]
    finally:
        gone.write_text(gone_text)
        new.unlink(missing_ok=True)
    res = await request(client, "mdseek/reindex", {})
    st = await status(client)
    assert res == {"files": st["files"], "chunks": st["chunks"]} and res["files"] == on_disk()
