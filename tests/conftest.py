"""Shared fixtures: the real tokenizer and model, fixture workspaces in tmp dirs."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The ported peer cases (tests/peers/) compare in a shared helper: its asserts
# show both sides when rewritten, which must be asked for before it is imported.
pytest.register_assert_rewrite("peer_support")

# The ONNX export of the model is made once per test session, for real, in a
# temp cache (servers the tests start inherit it). Set MDSEEK_CACHE_DIR to keep
# one between sessions.
_OWN_CACHE = None
if not os.environ.get("MDSEEK_CACHE_DIR"):
    _OWN_CACHE = os.environ["MDSEEK_CACHE_DIR"] = tempfile.mkdtemp(prefix="mdseek-test-cache-")


def pytest_sessionfinish(session, exitstatus):
    if _OWN_CACHE:
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)


REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
QUERIES = Path(__file__).resolve().parent / "fixture_queries.json"


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory) -> Path:
    """Indexes made at the default location (the user cache) go to a tmp folder,
    never the real ~/.cache; servers and CLIs started by tests inherit it."""
    cache = tmp_path_factory.mktemp("xdg-cache")
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    yield cache
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


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
