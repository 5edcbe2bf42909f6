"""A first index says what it counts: chunks and passages apart, the time
left, and a summary in words. The real engine and model on a few handbook
files; the command line as a user runs it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mdseek.index.engine.engine import Engine
from mdseek.lsp.cli import progress as cli_progress

from conftest import FIXTURES

pytestmark = pytest.mark.slow


@pytest.fixture()
def notes(tmp_path: Path) -> Path:
    ws = tmp_path / "notes"
    ws.mkdir()
    for f in sorted((FIXTURES / "handbook" / "runbooks").glob("*.md"))[:2]:
        shutil.copy(f, ws / f.name)
    return ws


def test_chunks_and_passages_counted_apart(notes: Path, tmp_path: Path):
    eng = Engine(notes, index_path=tmp_path / "i.sqlite")
    seen: dict[str, list[tuple[int, int]]] = {}
    rep = eng.index(
        progress=lambda stage, done, total: seen.setdefault(stage, []).append((done, total))
    )
    counts = eng.store.counts()
    eng.close()
    assert counts["passages"] > 0  # the runbooks have long sections
    assert (
        seen["embed"][0] == (0, counts["chunks"]) and seen["embed"][-1] == (counts["chunks"],) * 2
    )
    assert seen["passages"][0] == (0, counts["passages"])
    assert seen["passages"][-1] == (counts["passages"],) * 2
    assert rep.embedded_passages == counts["passages"]
    tokens = seen["tokens"]
    assert tokens[0][0] == 0 and tokens[-1][0] == tokens[-1][1] > rep.embedded  # every token
    assert rep.embedded == counts["chunks"] + counts["passages"]


def test_summary_in_words(notes: Path, tmp_path: Path):
    r = subprocess.run(
        [sys.executable, "-m", "mdseek", "index", str(notes), "--db", str(tmp_path / "i.sqlite")],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    line = r.stdout.splitlines()[0]
    assert "chunks in the index (" in line and " new or changed); " in line, line
    assert " vectors made (" in line and " for chunks, " in line and " for passages) in " in line


def test_time_left(monkeypatch, capsys):
    now = [100.0]
    monkeypatch.setattr(cli_progress.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(cli_progress.sys.stderr, "isatty", lambda: False)
    bar = cli_progress.Progress(True)
    bar("embed", 0, 300)
    bar("passages", 0, 100)
    now[0] += 10
    bar("embed", 100, 300)  # 100 texts in 10 s, 300 left (200 chunks, 100 passages)
    assert bar.time_left() == "about 30 s left"
    now[0] += 190
    bar("embed", 120, 300)  # 120 in 200 s: 280 left at 1.67 s each
    assert bar.time_left() == "about 8 min left"
    err = capsys.readouterr().err
    assert "mdseek: embedding 100/300 chunks (33%, about 30 s left)" in err
    # with token counts (texts come shortest first), the time left follows the tokens
    bar.tokens = (1_000, 21_000)  # 1,000 tokens in 200 s: 20,000 left
    assert bar.time_left() == "about 67 min left"
