"""The in-memory vector matrix for dense retrieval.

Loaded once from the store, then updated in place as documents change (rows of
removed chunks are masked out, new rows appended, the matrix compacted when a
quarter of it is dead). A query is one matrix-vector product over unit vectors
(cosine), never a re-read of SQLite.
"""

from __future__ import annotations

import threading

import numpy as np


class DenseIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.ids = np.zeros(0, dtype=np.int64)
        self.mat = np.zeros((0, 0), dtype=np.float32)
        self.alive = np.zeros(0, dtype=bool)
        self._row: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._row)

    def reset(self, ids: np.ndarray, mat: np.ndarray) -> None:
        with self._lock:
            self.ids = ids.astype(np.int64, copy=True)
            self.mat = np.ascontiguousarray(mat, dtype=np.float32)
            self.alive = np.ones(len(ids), dtype=bool)
            self._row = {int(i): r for r, i in enumerate(self.ids)}

    def remove(self, ids: list[int]) -> None:
        with self._lock:
            for i in ids:
                r = self._row.pop(int(i), None)
                if r is not None:
                    self.alive[r] = False
            if len(self.alive) and (~self.alive).sum() > max(1024, len(self.alive) // 4):
                self._compact()

    def add(self, ids: np.ndarray, mat: np.ndarray) -> None:
        if len(ids) == 0:
            return
        with self._lock:
            fresh = [k for k, i in enumerate(ids) if int(i) not in self._row]
            for k, i in enumerate(ids):
                r = self._row.get(int(i))
                if r is not None:  # same chunk id again: overwrite in place
                    self.mat[r] = mat[k]
            if not fresh:
                return
            ids = ids[fresh]
            mat = mat[fresh]
            if self.mat.size == 0:
                self.mat = np.ascontiguousarray(mat, dtype=np.float32)
                self.ids = ids.astype(np.int64)
                self.alive = np.ones(len(ids), dtype=bool)
            else:
                base = len(self.ids)
                self.mat = np.concatenate([self.mat, mat.astype(np.float32)])
                self.ids = np.concatenate([self.ids, ids.astype(np.int64)])
                self.alive = np.concatenate([self.alive, np.ones(len(ids), dtype=bool)])
                self._row.update({int(i): base + k for k, i in enumerate(ids)})
                return
            self._row = {int(i): r for r, i in enumerate(self.ids)}

    def _compact(self) -> None:
        keep = self.alive
        self.ids = self.ids[keep]
        self.mat = np.ascontiguousarray(self.mat[keep])
        self.alive = np.ones(len(self.ids), dtype=bool)
        self._row = {int(i): r for r, i in enumerate(self.ids)}

    def vector(self, chunk_id: int) -> np.ndarray | None:
        with self._lock:
            r = self._row.get(int(chunk_id))
            return None if r is None else self.mat[r].copy()

    def scores(self, q: np.ndarray, ids) -> dict[int, float]:
        """Cosine of the query with each of ``ids`` that has a vector."""
        with self._lock:
            rows = [(int(i), self._row[int(i)]) for i in ids if int(i) in self._row]
            if not rows:
                return {}
            idx = np.fromiter((r for _, r in rows), dtype=np.int64, count=len(rows))
            vals = self.mat[idx] @ q.astype(np.float32)
            return {i: float(v) for (i, _), v in zip(rows, vals, strict=True)}

    def search(self, q: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top-k (chunk id, cosine) for a unit query vector."""
        with self._lock:
            if not self._row:
                return []
            scores = self.mat @ q.astype(np.float32)
            scores = np.where(self.alive, scores, -np.inf)
            k = min(k, len(self._row))
            top = np.argpartition(-scores, k - 1)[:k]
            # best first; equal scores (chunks with the same text share a vector) by row,
            # so the order never depends on k or on argpartition's choice
            top = top[np.lexsort((top, -scores[top]))]
            return [(int(self.ids[r]), float(scores[r])) for r in top]
