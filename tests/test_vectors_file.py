"""Vectors computed once per team: an index's vectors exported to a file seed
another index of the same text, so it embeds nothing; a file of another model,
of the wrong size or not an mdseek vectors file costs nothing and shows no text."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mdseek.index.engine import Engine
from mdseek.index.vectors_file import FORMAT, VectorsFileError

from conftest import copy_fixtures


@pytest.fixture(scope="module")
def exported(tmp_path_factory, golden_index) -> Path:
    ws = copy_fixtures(tmp_path_factory.mktemp("team") / "ws")
    index = ws.parent / "idx" / "index.sqlite"
    index.parent.mkdir()
    shutil.copy(golden_index, index)
    eng = Engine(ws, index_path=index)
    try:
        assert eng.index().embedded == 0
        out = ws.parent / "vectors.npz"
        n = eng.export_vectors(out)
    finally:
        eng.close()
    with sqlite3.connect(golden_index) as db:  # every distinct text of the handbook has one
        distinct = db.execute("SELECT count(DISTINCT text_hash) FROM chunks").fetchone()[0]
    assert n == distinct > 200
    return out


def _fresh(tmp_path: Path) -> Engine:
    ws = copy_fixtures(tmp_path / "member")
    eng = Engine(ws, index_path=tmp_path / "member-idx" / "index.sqlite")
    eng.index(embed=False)
    return eng


def test_a_seeded_index_embeds_nothing(tmp_path, exported):
    eng = _fresh(tmp_path)
    try:
        waiting = eng.store.pending_count(eng.model_id)
        rep = eng.seed_vectors(exported)
        assert rep.taken == waiting and rep.rejected == 0
        again = eng.index()
        assert again.embedded == 0 and again.pending == 0
        res = eng.search("what do I do when the main database machine dies", limit=3)
        assert res.mode == "hybrid"
        assert any(r.path == "handbook/runbooks/database-failover.md" for r in res.results)
    finally:
        eng.close()


def _write(path: Path, model: str, hashes: list[str], vecs: np.ndarray, fmt: str = FORMAT) -> Path:
    np.savez(
        path,
        format=np.array(fmt),
        model=np.array(model),
        hashes=np.array(hashes, dtype="S64"),
        vectors=vecs,
    )
    return path


def test_vectors_of_the_wrong_size_or_length_or_model_are_never_taken(tmp_path, exported):
    eng = _fresh(tmp_path)
    try:
        hashes = [h for h, _ in eng.store.pending_chunks(eng.model_id)][:4]
        wrong_dim = (np.ones((4, 7)) / np.sqrt(7)).astype(np.float32)
        rep = eng.seed_vectors(_write(tmp_path / "dim.npz", eng.model_id, hashes, wrong_dim))
        assert (rep.taken, rep.rejected) == (0, 4)
        not_unit = np.full((4, 384), 3.0, dtype=np.float32)
        rep = eng.seed_vectors(_write(tmp_path / "len.npz", eng.model_id, hashes, not_unit))
        assert (rep.taken, rep.rejected) == (0, 4)
        nan = np.full((4, 384), np.nan, dtype=np.float32)
        assert eng.seed_vectors(_write(tmp_path / "nan.npz", eng.model_id, hashes, nan)).taken == 0
        unit = np.zeros((4, 384), dtype=np.float32)
        unit[:, 0] = 1.0
        other = eng.seed_vectors(_write(tmp_path / "other.npz", "someone/else@1", hashes, unit))
        assert other.taken == 0 and other.model_in_file == "someone/else@1"
        assert eng.store.pending_count(eng.model_id) == len(eng.store.pending_chunks(eng.model_id))
        with sqlite3.connect(eng.index_path) as db:
            assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    finally:
        eng.close()


def test_a_file_that_is_not_one_is_a_one_line_error(tmp_path):
    eng = _fresh(tmp_path)
    try:
        junk = tmp_path / "junk.npz"
        junk.write_bytes(b"not a zip at all")
        with pytest.raises(VectorsFileError, match="not an mdseek vectors file"):
            eng.seed_vectors(junk)
        pickled = tmp_path / "pickled.npz"  # object arrays need pickle: never loaded
        np.savez(pickled, format=np.array(FORMAT), model=np.array(eng.model_id),
                 hashes=np.array([object()], dtype=object), vectors=np.zeros((1, 384), np.float32))  # fmt: skip
        with pytest.raises(VectorsFileError):
            eng.seed_vectors(pickled)
        with pytest.raises(VectorsFileError, match="cannot be read"):
            eng.seed_vectors(tmp_path / "missing.npz")
    finally:
        eng.close()


@pytest.mark.slow
def test_cli_index_with_vectors(tmp_path, exported):
    ws = copy_fixtures(tmp_path / "cli")
    db = tmp_path / "cli-idx" / "index.sqlite"
    cmd = [sys.executable, "-m", "mdseek", "index", str(ws), "--db", str(db), "--no-progress"]
    out = subprocess.run(
        [*cmd, "--vectors", str(exported)], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert "0 embedded" in out.stdout and "took" in out.stderr, (out.stdout, out.stderr)
    bad = subprocess.run(
        [*cmd, "--vectors", str(tmp_path / "nope.npz")], capture_output=True, text=True, timeout=600
    )
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "cannot be read" in bad.stderr
