"""Two servers and the CLI on one workspace at once: the index stays sound
(SQLite WAL + busy timeout), and each sees the others' writes."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path

import pytest
from lsp_support import (
    SERVER_CMD,
    indexed_copy,
    initialize,
    make_client,
    request,
    status,
    uri,
    wait_ready,
    wait_updates,
)
from lsprotocol import types
from sandbox import server_env

pytestmark = pytest.mark.slow


@pytest.fixture
def ws(tmp_path_factory, request) -> Path:
    return indexed_copy(tmp_path_factory, "concurrency", request)


async def test_two_servers_and_cli(ws: Path):
    # touch every file so each server has real work to do at the same time
    for p in ws.rglob("*.md"):
        p.write_text(p.read_text() + "\n")
    a, b = make_client(), make_client()
    await a.start_io(*SERVER_CMD, env=server_env())
    await b.start_io(*SERVER_CMD, env=server_env())
    try:
        await asyncio.gather(initialize(a, ws), initialize(b, ws))
        cli = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "mdseek",
            "index",
            str(ws),
            "--no-progress",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=server_env(),
        )
        sa, sb = await asyncio.gather(wait_ready(a), wait_ready(b))
        out, err = await cli.communicate()
        assert cli.returncode == 0, err.decode()
        assert sa["files"] == sb["files"] == len(list(ws.rglob("*.md")))
        assert sa["pending_embeds"] == 0 and sb["pending_embeds"] == 0

        # A save handled by server A is visible to server B's search
        path = ws / "handbook/policies/expenses.md"
        path.write_text(
            path.read_text() + "\n## Shared index check\n\nThe wombatcrossing rule applies.\n"
        )
        st0 = await status(a)
        a.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=uri(path))
            )
        )
        await wait_updates(a, st0["updates_done"])
        res = await request(b, "mdseek/search", {"query": "wombatcrossing", "limit": 3})
        assert res["results"] and res["results"][0]["heading"] == "Shared index check"
    finally:
        for c in (a, b):
            try:
                await asyncio.wait_for(c.shutdown_session(), 20)
            except Exception:
                pass
            await c.stop()
    db = sqlite3.connect(ws / ".mdseek/index.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        docs = db.execute("SELECT count(*) FROM documents").fetchone()[0]
        dup = db.execute(
            "SELECT count(*) FROM (SELECT path FROM documents GROUP BY path HAVING count(*) > 1)"
        ).fetchone()[0]
        fts = db.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
        chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    finally:
        db.close()
    assert docs == len(list(ws.rglob("*.md"))) and dup == 0 and fts == chunks
