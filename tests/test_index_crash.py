"""kill -9 never leaves a half-written document: real processes, real SIGKILL,
real SQLite files. Each document is either its old or its new version."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox import server_env
from waiting import wait_for

from mdseek.index.engine.engine import Engine
from mdseek.index.store.location import locate
from mdseek.index.text.chunk import Chunker
from mdseek.index.text.parse import parse_text

from conftest import copy_fixtures

pytestmark = pytest.mark.slow

SAVER = """
import itertools, sys
from pathlib import Path
from mdseek.index.engine.engine import Engine
ws = Path(sys.argv[1])
eng = Engine(ws)
doc = ws / "doc.md"
versions = [(ws / "v0.txt").read_text(), (ws / "v1.txt").read_text()]
print("ready", flush=True)
for i in itertools.count():
    doc.write_text(versions[i % 2])
    eng.index_file(doc, embed=False)
"""


def versions() -> list[str]:
    rng = random.Random(9)
    words = "replica failover queue backlog certificate rotation pager deploy".split()
    parts = [
        f"## Part {i}\n\n"
        + " ".join(rng.choice(words) for _ in range(rng.randint(30, 200)))
        + ".\n"
        for i in range(40)
    ]
    v0 = "# Doc\n\n" + "\n".join(parts)
    parts[12] = parts[12].replace(".\n", " and an edit.\n")
    parts.insert(30, "## Inserted\n\nfresh section text.\n")
    del parts[5]
    return [v0, "# Doc\n\n" + "\n".join(parts)]


def open_index(db_path: Path) -> sqlite3.Connection:
    """The index file the run wrote, never an empty one sqlite3.connect would
    create in its place."""
    assert db_path.is_file(), f"no index at {db_path}"
    db = sqlite3.connect(db_path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"documents", "chunks", "sections"} <= tables, tables
    return db


def indexed(db_path: Path, rel: str) -> tuple[list[str], list[str], int]:
    db = open_index(db_path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
    n = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert db.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == n
    assert (
        db.execute(
            "SELECT count(*) FROM chunks c JOIN chunks_fts f ON f.rowid = c.id WHERE f.body != c.text"
        ).fetchone()[0]
        == 0
    )
    row = db.execute("SELECT id FROM documents WHERE path=?", (rel,)).fetchone()
    hashes = [
        r[0]
        for r in db.execute(
            "SELECT text_hash FROM chunks WHERE doc_id=? ORDER BY ordinal", (row[0],)
        )
    ]
    heads = [
        r[0]
        for r in db.execute(
            "SELECT heading FROM sections WHERE doc_id=? ORDER BY ordinal", (row[0],)
        )
    ]
    db.close()
    return hashes, heads, n


def test_kill_9_during_saves_leaves_old_or_new_version(tmp_path, tokenizer):
    ws = tmp_path / "ws"
    ws.mkdir()
    v = versions()
    for i, text in enumerate(v):
        (ws / f"v{i}.txt").write_text(text)
    (ws / "doc.md").write_text(v[0])
    eng = Engine(ws)
    eng.index(embed=False)
    eng.close()
    chunker = Chunker(tokenizer)
    want = [[c.text_hash for c in chunker.chunk(parse_text(t, "doc.md"))] for t in v]
    want_heads = [[s.title for s in parse_text(t, "doc.md").sections] for t in v]
    assert want[0] != want[1]
    rng = random.Random(4)
    for _ in range(8):
        proc = subprocess.Popen(
            [sys.executable, "-c", SAVER, str(ws)],
            stdout=subprocess.PIPE,
            text=True,
            env=server_env(),
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 1.0))
        proc.kill()  # SIGKILL
        proc.wait()
        hashes, heads, _ = indexed(locate(ws.resolve()).path, "doc.md")
        assert hashes in want, "a half-written document"
        assert heads == want_heads[want.index(hashes)]


def test_kill_9_during_cli_index_then_resume_equals_fresh(tmp_path):
    ws = copy_fixtures(tmp_path / "handbook")
    cmd = [sys.executable, "-m", "mdseek", "index", str(ws), "--no-progress"]
    rng = random.Random(2)
    path = locate(ws.resolve()).path
    for _ in range(4):
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=server_env()
        )
        wait_for(path.exists, timeout=120, what="the index file")  # then kill at a random moment
        time.sleep(rng.uniform(0.2, 5.0))
        proc.kill()
        proc.wait()
        db = open_index(path)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.close()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=server_env())
    assert done.returncode == 0, done.stderr
    fresh_ws = copy_fixtures(tmp_path / "fresh")
    fresh = Engine(fresh_ws)
    fresh.index(embed=False)
    eng = Engine(ws)
    assert eng.store.vectors.pending_count(eng.models.model_id) == 0
    for rel in fresh.store.documents.all():
        assert [c.text_hash for c in eng.store.chunks.document_chunks(rel)] == [
            c.text_hash for c in fresh.store.chunks.document_chunks(rel)
        ], rel
    assert set(eng.store.documents.all()) == set(fresh.store.documents.all())
    eng.close()
    fresh.close()
