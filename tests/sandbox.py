"""The sandbox a test session runs in, and the environment of every process a
test starts.

A test session writes nothing into the user's caches. conftest.py calls
:func:`enter` when it is imported, before any test module: ``HOME``,
``XDG_CACHE_HOME`` and ``MDSEEK_CACHE_DIR`` point into one temporary folder,
the *sandbox*, for the whole session (xdist workers inherit it), and a package
tree of the code under test is made there for ``PYTHONPATH``.

:func:`server_env` is the environment a test gives every process it starts (a
language server, the MCP server, the command line, an editor): the test's own
(``os.environ`` as the test left it, so a test's own cache folder is passed
on), checked to hold the sandbox's caches, with ``HF_HUB_OFFLINE=1`` and
``PYTHONPATH`` starting with the code under test -- the code this test process
imported, not an installed copy (in scripts/mutants.py's copy, the copy's).

At the end, :func:`leaks` says what the session wrote where it must not
(conftest.py fails the run with it):

- the sandbox home's ``.cache/mdseek``: a process that lost
  ``XDG_CACHE_HOME`` but kept ``HOME`` (the MCP SDK hands a server only
  ``HOME``, ``PATH`` and a few more unless told otherwise) writes there;
- indexes in the real user cache of folders under this session's temporary
  paths: a process that lost ``HOME`` too finds the real home through the
  password database. Only those count: other programs (an editor's mdseek,
  another session) may write in the real cache meanwhile.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

BOX = "MDSEEK_TEST_SANDBOX"  # the session's sandbox; set once, inherited by workers
REAL_CACHE = "MDSEEK_TEST_REAL_CACHE"  # the user's index cache before the session
CACHES = ("HOME", "XDG_CACHE_HOME", "MDSEEK_CACHE_DIR")


def enter() -> Path | None:
    """Point this process (and every process it starts) into a new sandbox;
    None when a parent process made one already (an xdist worker)."""
    if os.environ.get(BOX):
        return None
    from platformdirs import user_cache_dir

    os.environ[REAL_CACHE] = str(Path(user_cache_dir("mdseek", appauthor=False)) / "indexes")
    box = Path(tempfile.mkdtemp(prefix="mdseek-test-")).resolve()
    for name in ("home", "cache", "mdseek-cache"):
        (box / name).mkdir(mode=0o700)
    os.environ[BOX] = str(box)
    os.environ["HOME"] = str(box / "home")
    os.environ["XDG_CACHE_HOME"] = str(box / "cache")
    # Set MDSEEK_CACHE_DIR to keep model exports between sessions (your choice).
    os.environ.setdefault("MDSEEK_CACHE_DIR", str(box / "mdseek-cache"))
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(code_tree(box / "code")), *rest])
    return box


def code_tree(dest: Path) -> Path:
    """A folder holding ``mdseek/`` laid out as installed, of symlinks to the
    folders this process imports ``mdseek``, ``mdseek.index`` and ``mdseek.lsp``
    from (the checkout's lsp/_package, index/, lsp/ under an editable install).
    First on PYTHONPATH, a child imports the same code."""
    parts = {}
    for name in ("mdseek", "mdseek.index", "mdseek.lsp"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin, f"cannot find {name}"
        parts[name] = Path(spec.origin).resolve().parent
    pkg = dest / "mdseek"
    pkg.mkdir(parents=True)
    for f in parts["mdseek"].glob("*.py"):
        (pkg / f.name).symlink_to(f)
    (pkg / "index").symlink_to(parts["mdseek.index"], target_is_directory=True)
    (pkg / "lsp").symlink_to(parts["mdseek.lsp"], target_is_directory=True)
    return dest


def server_env(path: Iterable[str | Path] = (), **extra: str) -> dict[str, str]:
    """The environment of a process a test starts (see the module): the test's
    own, ``HF_HUB_OFFLINE=1``, ``path`` and then the code under test first on
    PYTHONPATH, and ``extra``."""
    env = dict(os.environ)
    box = env.get(BOX)
    assert box, "no sandbox: tests/conftest.py calls sandbox.enter() first"
    for var in CACHES:
        assert env.get(var), f"{var} is not set: a child would use the user's real cache"
    env["HF_HUB_OFFLINE"] = "1"
    if path:
        env["PYTHONPATH"] = os.pathsep.join([*map(str, path), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def run(
    argv: list[str], cwd: Path | None = None, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """``argv`` run in ``cwd`` with :func:`server_env` (and ``env``), its output
    captured as text."""
    return subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=server_env(**(env or {})),
    )


def mdseek(
    *args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """``python -m mdseek ARGS`` as a user runs it (:func:`run`)."""
    return run([sys.executable, "-m", "mdseek", *args], cwd, env, timeout)


def leaks(box: Path, tmp_roots: Iterable[Path], real: Path | None = None) -> list[str]:
    """What the session wrote where it must not (see the module), one line each."""
    out = []
    home_cache = box / "home" / ".cache" / "mdseek"
    if home_cache.exists():
        found = sorted(str(p.relative_to(home_cache)) for p in home_cache.rglob("*"))
        out.append(f"{home_cache}: {', '.join(found[:8]) or '(empty folder)'}")
    real = real or Path(os.environ[REAL_CACHE])
    roots = [Path(r).resolve() for r in tmp_roots]
    try:
        folders = sorted(real.iterdir())
    except OSError:
        folders = []
    for d in folders:
        root = _indexed_root(d / "index.sqlite")
        if root and any(Path(root).is_relative_to(r) for r in roots):
            out.append(f"{d}: the index of {root}, a folder of this session")
    return out


def _indexed_root(index: Path) -> str | None:
    """The folder an index says it indexes (its meta row), or None."""
    if not index.is_file():
        return None
    try:
        con = sqlite3.connect(f"{index.as_uri()}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return str(row[0]) if row else None
