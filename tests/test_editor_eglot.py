"""A real Emacs (eglot, batch mode) talks to `mdseek serve`: workspace/symbol and
the outline. Skips where emacs/eglot is not installed (.ci/run installs them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox import server_env

from conftest import workspace_with_index

SMOKE = Path(__file__).resolve().parent / "emacs" / "smoke.el"
EGLOT_EL = Path(__file__).resolve().parent.parent / "lsp" / "editors" / "eglot.el"


def test_eglot_smoke(tmp_path, golden_index):
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("emacs not installed (apt-get install emacs-nox elpa-eglot)")
    probe = subprocess.run(
        [emacs, "--batch", "--eval", "(require 'eglot)"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip("eglot not installed (apt-get install elpa-eglot)")
    ws = workspace_with_index(tmp_path / "ws", golden_index)
    # the shipped eglot.el runs "mdseek serve" from PATH: this venv's
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    env = server_env(
        PATH=path,
        MDSEEK_EGLOT_EL=str(EGLOT_EL),
        WS=str(ws),
        FILE="handbook/runbooks/database-failover.md",
    )
    out = subprocess.run(
        [emacs, "--batch", "-l", str(SMOKE)], capture_output=True, text=True, env=env, timeout=180
    )
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    lines = out.stdout.splitlines()
    syms = [ln for ln in lines if ln.startswith("SYM ")]
    assert any("Promote the replica" in s for s in syms), out.stdout
    assert any(ln.startswith("TOP ") for ln in lines), out.stdout
