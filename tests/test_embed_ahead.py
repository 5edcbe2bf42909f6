"""The writer beside the model: while one batch's vectors are written (committed,
the matrix grown), the model already makes the next batch's, and the matrix
grown batch by batch holds exactly what a fresh load of the index reads
(chunk rows and passage rows, each passage scoring its chunk)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from mdseek.index.engine.engine import Engine

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.fixture()
def ws(tmp_path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for f in sorted((FIXTURES / "handbook").rglob("*.md"))[:6]:
        (root / f.name).write_bytes(f.read_bytes())
    return root


def _rows(eng: Engine) -> dict[int, tuple[int, np.ndarray]]:
    m = eng.dense_side.matrix
    return {
        int(k): (int(o), m.mat[r].copy())
        for r, (k, o) in enumerate(zip(m.keys.tolist(), m.owners.tolist(), strict=True))
        if m.alive[r]
    }


def test_the_next_batch_is_in_the_model_while_one_is_written(ws, tmp_path):
    eng = Engine(ws, index_path=tmp_path / "i.sqlite")
    eng.queue.batch = 4
    eng.index(embed=False)
    emb = eng.models.embedder
    started: list[threading.Event] = []
    encode = emb.encode

    def watched(texts, *a, **k):
        started[len(encodes)].set()
        encodes.append(len(texts))
        return encode(texts, *a, **k)

    encodes: list[int] = []
    started.extend(threading.Event() for _ in range(1000))
    emb.encode = watched
    put = eng.store.vectors.put_vectors
    overlapped: list[bool] = []

    def write(model, hashes, vecs):
        n = len(overlapped)  # this write is batch n's; batch n + 1's encode began?
        if n + 1 < -(-pending // 4) and all(overlapped):  # one miss is enough
            overlapped.append(started[n + 1].wait(30))
        else:
            overlapped.append(True)
        put(model, hashes, vecs)

    pending = eng.store.vectors.pending_count(emb.model_id)
    assert pending >= 12
    eng.store.vectors.put_vectors = write
    try:
        eng.embed_pending()
    finally:
        emb.encode = encode
        eng.store.vectors.put_vectors = put
    assert all(overlapped) and len(overlapped) == -(-pending // 4)
    assert eng.store.vectors.pending_count(emb.model_id) == 0
    eng.close()


def test_the_matrix_grown_by_embedding_is_what_a_load_reads(ws, tmp_path):
    eng = Engine(ws, index_path=tmp_path / "i.sqlite")
    eng.queue.batch = 4
    eng.index(embed=False)
    eng.dense_side.sync()  # loaded before any vector: every row joins as it is made
    eng.embed_pending()
    grown = _rows(eng)
    passages = [k for k in grown if k < 0]
    assert passages and len(grown) > len(passages)  # chunk rows and passage rows both
    eng.close()
    fresh = Engine(ws, index_path=tmp_path / "i.sqlite")
    fresh.dense_side.sync()
    loaded = _rows(fresh)
    fresh.close()
    assert set(grown) == set(loaded)
    for k, (owner, vec) in loaded.items():
        assert grown[k][0] == owner
        assert np.array_equal(grown[k][1], vec)
