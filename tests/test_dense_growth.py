"""The in-memory vector matrix grows in place: adding rows batch by batch
never holds the matrix twice (a concatenation per batch did: a first index's
peak memory at 10,000 notes), and the rows stay right through growth,
removal and compaction."""

from __future__ import annotations

import tracemalloc

import numpy as np

from mdseek.index.search.dense import DenseIndex

DIM = 384


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_adding_batches_never_holds_the_matrix_twice():
    rng = np.random.default_rng(0)
    batches = [_unit(rng, 64) for _ in range(200)]  # 12,800 rows, 19.7 MB
    idx = DenseIndex()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i, b in enumerate(batches):
            idx.add(np.arange(i * 64, (i + 1) * 64) + 1, b)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    size = idx.mat.nbytes
    assert idx.mat.shape == (12_800, DIM)
    # the matrix, its room to grow (an eighth) and the keys; a concatenation per batch: 2x
    assert peak < 1.35 * size, (peak, size)


def test_rows_stay_right_through_growth_removal_and_compaction():
    rng = np.random.default_rng(1)
    vecs = _unit(rng, 3000)
    idx = DenseIndex(passage_discount=0.0)
    idx.reset(np.array([1, 2]), vecs[:2])
    for s in range(2, 3000, 50):
        ids = np.arange(s, min(s + 50, 3000)) + 1
        idx.add(ids, vecs[s : s + 50])
        idx.add(-ids, vecs[s : s + 50][::-1].copy(), owners=ids)  # passages: other rows
    assert idx.rows == 2 + 2 * 2998 and len(idx) == 3000
    for cid in (1, 2, 3, 1500, 3000):
        assert np.array_equal(idx.vector(cid), vecs[cid - 1])
        assert idx.search(vecs[cid - 1], 1)[0][0] == cid
    idx.remove(list(range(1, 2001)))  # more than a quarter dead: compacted
    assert idx.mat.shape[0] == 2 * 1000 - 0 and len(idx) == 1000
    assert idx.vector(1500) is None
    assert np.array_equal(idx.vector(2500), vecs[2499])
    assert idx.search(vecs[2999], 1)[0][0] == 3000
    idx.add(np.array([1]), vecs[:1])  # grows again after compaction
    assert idx.search(vecs[0], 1)[0][0] == 1 and len(idx) == 1001
