"""A folder's first index is useful before it is finished: every file is
searchable by keywords once chunked, a save made meanwhile is searchable after
one slice of embedding (not after all of it), the open file's sections get
their vectors first, and search is hybrid over the vectors made so far."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, initialize, open_doc, request, status, uri
from lsprotocol import types
from pytest_lsp import LanguageClient
from waiting import until

pytestmark = pytest.mark.slow

FILES = 30
SECTIONS = 30  # 900 short sections: minutes of embedding on 2 cores, so the first index is long
WORDS = (
    "harbour lantern orchard granite meadow copper willow falcon ember quarry tundra "
    "saffron cobalt juniper marble thistle canyon pewter sorrel basalt"
).split()


def _vault(root: Path) -> None:
    for f in range(FILES):
        parts = [f"# Ledger {f}", ""]
        for s in range(SECTIONS):
            a, b, c = (WORDS[(f * 7 + s * k) % len(WORDS)] for k in (1, 3, 5))
            parts += [
                f"## Entry {f}-{s}",
                "",
                f"The {a} and the {b} met near the {c} in entry {f}-{s}.",
                "",
            ]
        (root / f"ledger-{f:02d}.md").write_text("\n".join(parts), encoding="utf-8")
    # Longer sections than any ledger entry: shortest-first alone would embed them last.
    kettle = "The kettle sings at dawn while the house is still dark and cold. " * 6
    teapot = "A teapot rests on the shelf beside the cups, waiting for the tea leaves. " * 6
    (root / "open-note.md").write_text(
        f"# Open note\n\n## Kettle\n\n{kettle}\n\n## Teapot\n\n{teapot}\n", encoding="utf-8"
    )


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("first-index") / "vault"
    root.mkdir()
    _vault(root)
    return root


@pytest.fixture(scope="module")
def index_file(ws: Path) -> Path:
    return ws.parent / "index" / "index.sqlite"


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, ws: Path, index_file: Path):
    await initialize(lsp_client, ws, options={"indexPath": str(index_file)})
    yield
    await lsp_client.shutdown_session()


async def _until(check, what: str, timeout: float = 300.0):
    return await until(check, timeout=timeout, what=what)


async def _search(client: LanguageClient, query: str) -> dict:
    return await request(client, "mdseek/search", {"query": query, "limit": 5})


def _pending_of(index_file: Path, rel: str) -> int | None:
    """Chunks of ``rel`` without a vector, read from the index file read-only
    (None before the file is chunked)."""
    db = sqlite3.connect(f"file:{index_file}?mode=ro", uri=True, timeout=5)
    try:
        if db.execute("SELECT count(*) FROM documents WHERE path = ?", (rel,)).fetchone()[0] == 0:
            return None
        return db.execute(
            "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.path = ?"
            " AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.text_hash = c.text_hash)",
            (rel,),
        ).fetchone()[0]
    finally:
        db.close()


async def test_first_index_is_useful_before_it_ends(
    client: LanguageClient, ws: Path, index_file: Path
):
    open_doc(client, ws / "open-note.md")

    async def keyword_hit():
        res = await _search(client, "ledger 29 entry 29-29")
        return res if any(r["path"] == "ledger-29.md" for r in res["results"]) else None

    await _until(keyword_hit, "every file searchable by keywords")
    st = await status(client)
    assert st["state"] == "indexing" and st["pending_embeds"] > 500, st

    # The open note's vectors come first: it is searchable by meaning long before the rest.
    async def open_note_embedded():
        return _pending_of(index_file, "open-note.md") == 0

    # (the test session's first model load may export the model: minutes on a busy machine)
    await _until(open_note_embedded, "the open note's vectors", timeout=600)
    st = await status(client)
    assert st["state"] == "indexing" and st["pending_embeds"] > 300, st

    # A save while the first index runs is searchable after one slice, not after all of it.
    saved = ws / "ledger-05.md"
    saved.write_text(saved.read_text() + "\n## Postscript\n\nA zeppelin drifted over.\n")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri(saved)))
    )

    async def saved_hit():
        res = await _search(client, "zeppelin")
        return res if any(r["path"] == "ledger-05.md" for r in res["results"]) else None

    res = await _until(saved_hit, "the saved file's new words", timeout=60)
    st = await status(client)
    assert st["state"] == "indexing" and st["pending_embeds"] > 100, st

    # Meanwhile search is hybrid over the vectors made so far, and says it is partial.
    res = await _search(client, "a vessel for boiling water before sunrise")
    assert res["mode"] == "hybrid", res
    assert "partial" in (res.get("note") or ""), res
    assert res["results"][0]["path"] == "open-note.md", res["results"][:2]


async def test_a_folder_added_later_is_chunked_at_once_and_embedded_after(
    client: LanguageClient, ws: Path, index_file: Path
):
    """A folder event (a checkout, a sync) is searchable by keywords as soon as
    its update is done; its vectors follow in slices, after the update."""

    async def settled():
        st = await status(client)
        return st if st["state"] == "ready" and st["pending_embeds"] == 0 else None

    await _until(settled, "the first index to finish", timeout=600)
    st0 = await status(client)
    added = ws / "archive"
    added.mkdir()
    for f in range(10):
        parts = [f"# Archive {f}", ""]
        for s in range(20):
            parts += [f"## Box {f}-{s}", "", f"Box {f}-{s} holds old {WORDS[s]} receipts.", ""]
        (added / f"box-{f}.md").write_text("\n".join(parts), encoding="utf-8")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(added), type=types.FileChangeType.Created)]
        )
    )

    async def updated():
        st = await status(client)
        return (
            st if st["updates_done"] > st0["updates_done"] and st["updates_pending"] == 0 else None
        )

    st = await _until(updated, "the folder event's update", timeout=120)
    assert st["pending_embeds"] >= 150, st  # chunked, not yet embedded: the update did not wait
    res = await _search(client, "box 9-19 receipts")
    assert any(r["path"] == "archive/box-9.md" for r in res["results"]), res
    await _until(settled, "the added folder's vectors", timeout=600)
    assert _pending_of(index_file, "archive/box-9.md") == 0
