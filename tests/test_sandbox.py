"""The test session's sandbox (tests/sandbox.py): the processes tests start run
the code under test with the session's caches, and the end-of-session check
sees a process that writes into a user cache (so it cannot pass for want of
looking)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sandbox
from sandbox import server_env

import mdseek.index
import mdseek.lsp

PROBE = (
    "import os, mdseek.index, mdseek.lsp, platformdirs;"
    "print(os.path.realpath(os.path.dirname(mdseek.index.__file__)));"
    "print(os.path.realpath(os.path.dirname(mdseek.lsp.__file__)));"
    "print(platformdirs.user_cache_dir('mdseek', appauthor=False))"
)


def test_a_started_process_runs_this_code_with_the_sessions_caches():
    box = Path(os.environ[sandbox.BOX])
    env = server_env()
    assert env["HOME"] == str(box / "home") and env["HF_HUB_OFFLINE"] == "1"
    assert env["XDG_CACHE_HOME"] == str(box / "cache")
    real = Path(os.environ[sandbox.REAL_CACHE])
    assert not real.is_relative_to(box)  # the check at the end looks outside the sandbox
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True, text=True, check=True, env=env, cwd="/", timeout=120,
    ).stdout.splitlines()  # fmt: skip
    here = [str(Path(m.__file__).resolve().parent) for m in (mdseek.index, mdseek.lsp)]
    assert out[:2] == here  # the checkout this test imported, not an installed copy
    assert out[2] == str(box / "cache" / "mdseek")


def test_the_leak_check_sees_a_process_that_writes_into_a_user_cache(tmp_path):
    """A real `mdseek index` run with the session's HOME but without its cache
    folders (as the MCP SDK starts a server unless told otherwise) writes into
    ``HOME/.cache/mdseek``: :func:`sandbox.leaks` names it, and names the index
    it made there as the index of a folder under the session's tmp paths."""
    box = tmp_path / "box"
    (box / "home").mkdir(parents=True)
    ws = tmp_path / "notes"
    ws.mkdir()
    (ws / "a.md").write_text("# Alpha\n\nThe zebra crossing.\n")
    env = server_env(HOME=str(box / "home"))
    del env["XDG_CACHE_HOME"], env["MDSEEK_CACHE_DIR"]
    run = subprocess.run(
        [sys.executable, "-m", "mdseek", "index", str(ws), "--no-progress"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    user_cache = box / "home" / ".cache" / "mdseek"
    (index,) = [d for d in (user_cache / "indexes").iterdir() if d.is_dir()]
    (line,) = sandbox.leaks(box, [tmp_path / "elsewhere"], real=tmp_path / "none")
    assert line.startswith(f"{user_cache}: ") and str(index.relative_to(user_cache)) in line
    found = sandbox.leaks(tmp_path / "clean", [tmp_path], real=user_cache / "indexes")
    assert found == [f"{index}: the index of {ws.resolve()}, a folder of this session"]
    assert sandbox.leaks(tmp_path / "clean", [tmp_path / "other"], real=index.parent) == []
