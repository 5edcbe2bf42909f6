"""A server that always answers (issue 13, items 5-9): the real server over
stdio, with the bytes written by the test -- bad framing, invalid params, odd
strings, a corrupt index, exit in the middle of embedding."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest
from raw_lsp import RawServer, frame

from conftest import FIXTURES, grown_workspace, workspace_with_index

pytestmark = pytest.mark.slow


@pytest.fixture()
def tiny(tmp_path) -> Path:
    ws = tmp_path / "tiny"
    ws.mkdir()
    src = FIXTURES / "handbook" / "adr"
    for f in sorted(src.glob("*.md"))[:2]:
        (ws / f.name).write_bytes(f.read_bytes())
    return ws


def initialize_msg(mid: int, ws: Path) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": mid,
        "method": "initialize",
        "params": {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}},
    }


def no_tracebacks(server: RawServer) -> None:
    err = server.stderr()
    assert "Traceback" not in err, err[-3000:]


# -- framing (item 8) -------------------------------------------------------------------------------


def test_framing_errors_are_logged_and_the_reader_resynchronises(tiny):
    with RawServer(tiny) as s:
        s.send_raw(b"Content-Length: banana\r\n\r\n" + json.dumps(initialize_msg(1, tiny)).encode())
        s.send(initialize_msg(2, tiny))
        res = s.wait_response(2, timeout=60)
        assert res is not None and "capabilities" in res["result"]
        assert (
            s.wait_response(1, timeout=0.5) is None
        )  # the unframed one is skipped, not guessed at
        s.notify("initialized", {})

        def status_via(raw_prefix: bytes, header: bytes = b"Content-Length") -> dict | None:
            mid = s.next_id()
            body = json.dumps(
                {"jsonrpc": "2.0", "id": mid, "method": "mdseek/status", "params": {}}
            ).encode()
            s.send_raw(raw_prefix + header + b": %d\r\n\r\n" % len(body) + body)
            return s.wait_response(mid, timeout=30)

        assert status_via(b"garbage without a header\r\n\x00\xff\xfe\r\n\r\n") is not None
        assert (
            status_via(b"", header=b"content-length") is not None
        )  # header names are case-insensitive
        assert status_via(b"Content-Length: 99999999999999\r\n\r\n{}") is not None  # absurd length
        assert (
            status_via(os.urandom(3000).replace(b"\n", b"")) is not None
        )  # binary junk, no line break
        # A body that is not JSON, or not a JSON-RPC message: answered with id null.
        s.send_raw(b"Content-Length: 9\r\n\r\n{not json")
        s.send_raw(frame([1, 2, 3]))
        deep = b"[" * 100_000 + b"]" * 100_000  # nesting deeper than any parser's recursion
        s.send_raw(b"Content-Length: %d\r\n\r\n" % len(deep) + deep)
        s.send({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "mdseek/status"})
        s.send(
            {"jsonrpc": "2.0", "id": 424242, "result": {"not": "asked for"}}
        )  # an answer to nothing
        deadline = time.monotonic() + 10
        while None not in s.responses and time.monotonic() < deadline:
            time.sleep(0.05)
        assert s.responses.get(None, {}).get("error", {}).get("code") in (-32700, -32600)
        assert s.status()["state"]  # still answering
        assert s.request("shutdown", None, timeout=10) is not None
        s.notify("exit")
        assert s.wait_exit(10) == 0
        err = s.stderr()
        assert "framing error" in err and "Traceback" not in err


def test_garbage_then_end_of_input_exits_instead_of_hanging(tiny):
    with RawServer(tiny) as s:
        s.send_raw(b"Content-Length: banana\r\n\r\n{}" + os.urandom(500).replace(b"\n", b""))
        s.proc.stdin.close()
        assert s.wait_exit(30) == 1  # no shutdown was received: non-zero, with a message
        assert "framing error" in s.stderr()


# -- invalid params (item 6) ---------------------------------------------------------------------


def test_every_request_with_invalid_params_gets_an_answer(tiny):
    u = next(tiny.glob("*.md")).as_uri()
    cases = [
        ("textDocument/hover", {"textDocument": {"uri": u}}),  # no position
        ("textDocument/documentSymbol", {"textDocument": None}),
        ("workspace/symbol", {"query": {"nested": True}}),
        ("textDocument/completion", {"textDocument": {"uri": u}, "position": "here"}),
        (
            "textDocument/references",
            {"textDocument": {"uri": u}, "context": {"includeDeclaration": True}},
        ),
        ("textDocument/definition", None),
        ("textDocument/hover", [1, 2]),
        ("textDocument/documentSymbol", {}),
        (
            "textDocument/hover",
            {"textDocument": {"uri": u}, "position": {"line": -5, "character": 10**12}},
        ),
        ("mdseek/search", "a string"),
        ("mdseek/search", {"query": ["not", "text"], "limit": "ten"}),
    ]
    with RawServer(tiny) as s:
        s.initialize(tiny)
        for method, params in cases:
            res = s.request(method, params, timeout=20)
            assert res is not None, (method, params)  # never left waiting
            err = res.get("error")
            if method in ("mdseek/search", "workspace/symbol") and err is None:
                continue  # lenient: a query is coerced to text, odd limits mean the default
            assert err is not None and err["code"] == -32602, (method, params, res)
            assert "\n" not in err["message"] and len(err["message"]) <= 300
            assert "traceback" not in json.dumps(err.get("data")).lower()
        # Requests that pass the schema but make no sense are answered too.
        for method, params in [
            (
                "textDocument/definition",
                {"textDocument": {"uri": "not a uri"}, "position": {"line": 0, "character": 0}},
            ),
            (
                "textDocument/hover",
                {"textDocument": {"uri": u}, "position": {"line": 10**6, "character": 10**6}},
            ),
            (
                "textDocument/documentSymbol",
                {"textDocument": {"uri": "file:///nonexistent/\u0000.md"}},
            ),
        ]:
            res = s.request(method, params, timeout=20)
            assert res is not None and (
                "result" in res or "traceback" not in json.dumps(res["error"]).lower()
            )
        # A notification with invalid params is dropped (nothing to answer), one that
        # fails is logged in one line; no pop-up for the user, and the server goes on.
        s.notify("textDocument/didOpen", {"textDocument": {"uri": 5}})
        s.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": tiny.as_uri() + "/never-opened.md", "version": 2},
                "contentChanges": [{"text": "# x"}],
            },
        )
        s.notify("textDocument/didSave", {"textDocument": {"uri": "file:///tmp/%00.md"}})
        assert s.status()["state"]
        assert not [m for m in s.notifications if m["method"] == "window/showMessage"]
        no_tracebacks(s)


def test_a_request_without_params_is_answered_as_the_spec_says(tiny):
    # JSON-RPC lets a request leave "params" out. LSP gives shutdown no params and
    # mdseek/status and mdseek/reindex none that are needed: they are served.
    # A method that needs params gets -32602 saying so, in mdseek's words.
    with RawServer(tiny) as s:
        s.initialize(tiny)

        def bare(method: str) -> dict:
            mid = s.next_id()
            s.send({"jsonrpc": "2.0", "id": mid, "method": method})
            res = s.wait_response(mid, timeout=60)
            assert res is not None, method
            return res

        assert bare("mdseek/status")["result"]["state"]
        assert set(bare("mdseek/reindex")["result"]) == {"files", "chunks"}
        err = bare("mdseek/search")["error"]
        assert err == {
            "code": -32602,
            "message": "query is missing: say what you are looking for, in words",
        }, err
        for method in ("textDocument/hover", "workspace/symbol", "codeLens/resolve"):
            err = bare(method)["error"]
            assert err["code"] == -32602 and err["message"] == (
                f"Invalid params for {method}: the request has no params, and {method} needs them"
            ), err
        assert bare("shutdown")["result"] is None
        no_tracebacks(s)


def test_a_client_answering_configuration_with_null_does_not_stall_the_server(tiny):
    class NullConfig(RawServer):
        def answer(self, msg: dict):
            return None  # should be a list: the server must not wait forever on it

    with NullConfig(tiny) as s:
        s.initialize(tiny)
        st = s.wait_state(
            ("indexing", "ready", "lexical-only"), 120, pred=lambda st: st["files"] > 0
        )
        assert st["roots"][0]["state"] != "starting"


# -- odd strings (item 7) ----------------------------------------------------------------------------


def test_odd_strings_in_queries_and_documents(tmp_path, golden_index):
    ws = workspace_with_index(tmp_path / "ws", golden_index)
    with RawServer(tmp_path) as s:
        s.initialize(ws)
        s.wait_state(("ready",), 300)

        def names(method: str, query: str) -> list[str]:
            params = (
                {"query": query} if method == "workspace/symbol" else {"query": query, "limit": 5}
            )
            res = s.request(method, params, timeout=60)
            assert res is not None and "result" in res, (method, repr(query[:40]), res)
            rows = res["result"] if method == "workspace/symbol" else res["result"]["results"]
            return [r["name"] if "name" in r else r["heading"] for r in rows]

        for method in ("workspace/symbol", "mdseek/search"):
            plain = names(method, " replica")
            assert plain
            assert names(method, "\ud800 replica") == plain  # the rest of the query is searched
            assert names(method, "\udfff") == []
            assert names(method, "replica\x00") == names(method, "replica ")
            assert names(method, "replica " + "lorem ipsum dolor " * 12_000)  # ~200 KB
        # A buffer with a lone surrogate and NUL bytes still has an outline.
        path = ws / "odd.md"
        s.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": path.as_uri(),
                    "languageId": "markdown",
                    "version": 1,
                    "text": "# Title \ud800 here\n\nbody\x00 text\n\n## Second \udfff\n",
                }
            },
        )
        res = s.request("textDocument/documentSymbol", {"textDocument": {"uri": path.as_uri()}})
        assert res is not None and "result" in res and res["result"], res
        no_tracebacks(s)


# -- corrupt index (item 5) --------------------------------------------------------------------


def test_corrupt_index_is_told_and_rebuilt(tiny):
    bad = tiny / ".mdseek" / "index.sqlite"
    bad.parent.mkdir(mode=0o700)  # mdseek's own folder, as mdseek makes it
    garbage = os.urandom(50_000)
    bad.write_bytes(garbage)
    bad.chmod(0o600)
    with RawServer(tiny.parent) as s:
        s.initialize(tiny)
        msg = s.wait_notification("window/showMessage", timeout=120)
        assert msg is not None, s.stderr()[-2000:]
        text = msg["params"]["message"]
        assert (
            "not a readable SQLite database" in text and "moved it to" in text and str(bad) in text
        )
        st = s.wait_state(("indexing", "ready"), 120, pred=lambda st: st["files"] == 2)
        assert st["roots"][0]["index_path"] == str(bad)
        res = s.request("workspace/symbol", {"query": "postgres"}, timeout=60)
        assert res is not None and res["result"]
        aside = [p for p in bad.parent.iterdir() if p.name.startswith("index.sqlite.unreadable-")]
        assert len(aside) == 1 and aside[0].read_bytes() == garbage
        no_tracebacks(s)


def test_foreign_database_as_index_is_refused_with_a_message(tiny, tmp_path):
    theirs = tmp_path / "theirs.sqlite"
    db = sqlite3.connect(theirs)
    db.execute("CREATE TABLE notes(x)")
    db.commit()
    db.close()
    before = theirs.read_bytes()
    with RawServer(tmp_path) as s:
        s.initialize(tiny, options={"indexPath": str(theirs)})
        msg = s.wait_notification("window/showMessage", timeout=120)
        assert msg is not None and "not an mdseek index" in msg["params"]["message"]
        res = s.request("mdseek/search", {"query": "postgres"}, timeout=30)
        assert res is not None and "result" in res  # answered (nothing to search), not hanging
        assert "not an mdseek index" in s.status()["message"]
        assert theirs.read_bytes() == before
        no_tracebacks(s)


# -- exit (item 9) -------------------------------------------------------------------------------


EXIT_SECONDS = 1.0


@pytest.mark.parametrize("polite", [True, False], ids=["shutdown+exit", "exit-only"])
def test_exit_while_embedding_is_fast_and_quiet(tmp_path, polite):
    ws = grown_workspace(tmp_path / "ws", copies=3)
    with RawServer(tmp_path) as s:
        s.initialize(ws)
        st = s.wait_state(
            ("indexing",),
            600,
            pred=lambda st: st["embedded_total"] > 0 and st["pending_embeds"] > 0,
        )  # embedding: some vectors written, more to go
        if polite:
            assert s.request("shutdown", None, timeout=10) is not None
        t0 = time.monotonic()
        s.notify("exit")
        # docs/index-and-storage.md: "exits within a second of `exit`"
        code = s.wait_exit(EXIT_SECONDS)
        took = time.monotonic() - t0
        print(
            f"exit took {took:.2f}s with {st['pending_embeds']} chunks pending, {st['embedded_total']} embedded"
        )
        assert code == (0 if polite else 1), f"still running {EXIT_SECONDS}s after exit"
        err = s.stderr().strip().splitlines()
        assert len(err) <= 1 and all("indexing" in ln for ln in err), err
        index = Path(st["roots"][0]["index_path"])
    db = sqlite3.connect(index)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        missing = db.execute(
            "SELECT count(DISTINCT c.text_hash) FROM chunks c LEFT JOIN vectors v"
            " ON v.text_hash = c.text_hash WHERE v.text_hash IS NULL"
        ).fetchone()[0]
    finally:
        db.close()
    assert missing > 0  # it stopped; it did not finish the work first
