"""Usage errors are one line and exit 2 (docs/cli.md); a bad path glob is an
error in the same words in the command line, MCP and the language server; a
normal ``$/cancelRequest`` (for a request already answered) says nothing on
stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
from raw_lsp import RawServer
from sandbox import mdseek

from mdseek.index.search import requests
from mdseek.lsp.mcp import args as mcp_args

BAD_GLOB = (
    "bad path glob '[bad': globs here know *, ** and ? but no [...] "
    "(for a bracket in a name, put ? in its place)"
)


@pytest.fixture()
def notes(tmp_path: Path) -> Path:
    ws = tmp_path / "notes"
    ws.mkdir()
    (ws / "a.md").write_text("# Alpha\n\nquokka crossing\n")
    return ws


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--mode", "fuzzy"], "mode must be hybrid, lexical or dense (got 'fuzzy')"),
        (["--path", "[bad"], BAD_GLOB),
        (["--limit", "0"], "limit must be a whole number from 1 to 200 (got 0)"),
    ],
)
def test_usage_errors_exit_2_in_one_line(notes: Path, flags: list[str], words: str):
    r = mdseek("search", str(notes), "quokka", *flags)
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stderr)
    assert r.stderr == f"mdseek: error: {words}\n"


def test_a_bad_glob_is_the_same_error_in_mcp_and_the_language_server(notes: Path):
    with pytest.raises(requests.BadRequest) as mcp:
        mcp_args.globs("[bad")
    assert str(mcp.value) == BAD_GLOB
    with RawServer(notes) as s:
        s.initialize(notes)
        res = s.request("mdseek/search", {"query": "quokka", "path": "[bad"}, timeout=60)
        assert res is not None and res["error"]["message"] == BAD_GLOB, res


def test_cancel_of_an_answered_request_is_quiet(notes: Path):
    with RawServer(notes) as s:
        s.initialize(notes)
        mid = s.next_id()
        s.send({"jsonrpc": "2.0", "id": mid, "method": "mdseek/status", "params": {}})
        assert s.wait_response(mid, timeout=30) is not None
        s.notify("$/cancelRequest", {"id": mid})  # answered already: the usual race
        s.notify("$/cancelRequest", {"id": 987654})  # never seen
        assert s.status()["state"]  # still answering, the cancels handled
        assert s.request("shutdown", None, timeout=10) is not None
        s.notify("exit")
        assert s.wait_exit(10) == 0
        assert "Cancel notification" not in s.stderr(), s.stderr()
