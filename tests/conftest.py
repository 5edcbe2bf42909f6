"""Shared fixtures: the real tokenizer and model, fixture workspaces in tmp dirs."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import sandbox

# The ported peer cases (tests/peers/) compare in a shared helper: its asserts
# show both sides when rewritten, which must be asked for before it is imported.
pytest.register_assert_rewrite("peer_support")

# The session's sandbox (tests/sandbox.py): HOME, XDG_CACHE_HOME and
# MDSEEK_CACHE_DIR in a temporary folder (the ONNX export of a model is made
# once per session, for real, in it; set MDSEEK_CACHE_DIR to keep one between
# sessions), the code under test first on PYTHONPATH. Set before any test
# module is imported; every process a test starts gets it (sandbox.server_env).
_BOX = sandbox.enter()


@pytest.hookimpl(trylast=True)  # after the session's fixtures are torn down
def pytest_sessionfinish(session, exitstatus):
    """Fail the run if it wrote where it must not (sandbox.leaks); then remove
    the sandbox. Only the process that made it checks (not an xdist worker)."""
    if _BOX is None:
        return
    roots = [_BOX]
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is not None:
        roots.append(factory.getbasetemp())
    found = sandbox.leaks(_BOX, roots)
    if os.environ.get("HOME") != str(_BOX / "home"):  # the check would look in the wrong home
        found.append(f"HOME is {os.environ.get('HOME')} at the end, not the sandbox's")
    if found:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = ["the tests wrote outside their tmp paths (tests/sandbox.py):", *found]
        if tr is not None:
            tr.ensure_newline()
            tr.write_sep("=", "written outside the sandbox", red=True, bold=True)
            for line in lines:
                tr.write_line(line, red=True)
        else:
            print("\n".join(lines), file=sys.stderr)
    shutil.rmtree(_BOX, ignore_errors=True)


REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
QUERIES = Path(__file__).resolve().parent / "fixture_queries.json"


@pytest.fixture(scope="session")
def private_cache() -> Path:
    """The session's user cache (XDG_CACHE_HOME in the sandbox): indexes made at
    the default location go there, never to the real ~/.cache."""
    return Path(os.environ["XDG_CACHE_HOME"])


@pytest.fixture(scope="session")
def tokenizer():
    from mdseek.index.model.model import resolve_model
    from mdseek.index.model.tokenizer import load_tokenizer

    return load_tokenizer(resolve_model(None))


@pytest.fixture(scope="session")
def chunker(tokenizer):
    from mdseek.index.text.chunk import Chunker

    return Chunker(tokenizer)


@pytest.fixture(scope="session")
def fixture_queries() -> dict:
    return json.loads(QUERIES.read_text())


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """``files`` (path relative to ``root`` -> text) written under ``root``, folders made."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def copy_fixtures(dest: Path) -> Path:
    shutil.copytree(FIXTURES, dest, ignore=shutil.ignore_patterns(".mdseek"))
    return dest


def grown_workspace(root: Path, copies: int) -> Path:
    """The handbook plus ``copies`` variants of each document (a marker word per
    paragraph, so every chunk is new): a corpus that takes a while to embed."""
    copy_fixtures(root)
    for n in range(copies):
        for f in sorted((FIXTURES / "handbook").rglob("*.md")):
            paras = f.read_text().split("\n\n")
            text = "\n\n".join(
                p + (f" variant{n}x{i}" if p and not p.startswith(("#", "```", "|")) else "")
                for i, p in enumerate(paras)
            )
            dest = root / f"copy{n}" / f.relative_to(FIXTURES)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
    return root


@pytest.fixture(scope="session")
def golden_index(tmp_path_factory) -> Path:
    """An index of the fixture handbook, built once per session (the slow part:
    embedding every chunk). Tests copy it next to a fresh copy of the fixtures;
    the copy's files hash the same, so nothing is re-embedded."""
    from mdseek.index.engine.engine import Engine

    ws = copy_fixtures(tmp_path_factory.mktemp("golden") / "handbook")
    eng = Engine(ws)
    rep = eng.index()
    assert rep.embedded > 0 and rep.pending == 0
    eng.close()
    return eng.index_path


def workspace_with_index(dest: Path, golden: Path) -> Path:
    """A copy of the fixtures whose index is ``<ws>/.mdseek/index.sqlite`` (the
    in-workspace location, used because the file exists)."""
    ws = copy_fixtures(dest)
    # as mdseek makes its own folder (0700, 0600): an index others could read or
    # write is not adopted (a clone's; see the Security model)
    (ws / ".mdseek").mkdir(mode=0o700, exist_ok=True)
    shutil.copy(golden, ws / ".mdseek" / "index.sqlite")
    (ws / ".mdseek" / "index.sqlite").chmod(0o600)
    made_here(ws / ".mdseek" / "index.sqlite")
    return ws


def made_here(index: Path) -> None:
    """Record a workspace index copied by a test as made on this machine, as if
    mdseek had built it there: the tests then use it as a user's own (one made
    elsewhere is read again, its vectors checked: tests/test_trust.py)."""
    from mdseek.index.store.adopt import remember, vouch
    from mdseek.index.store.store import Store

    store = Store(index, check=False)
    vouch(store)
    store.close()
    remember(index)  # as closed: the record holds the files as mdseek left them


@pytest.fixture(scope="session")
def indexed_ws(tmp_path_factory, golden_index):
    """The fixture handbook copied to a tmp dir and fully indexed (real model, real SQLite)."""
    from mdseek.index.engine.engine import Engine

    ws = workspace_with_index(tmp_path_factory.mktemp("ws") / "handbook", golden_index)
    eng = Engine(ws)
    rep = eng.index()
    assert rep.embedded == 0 and rep.pending == 0
    yield eng
    eng.close()
