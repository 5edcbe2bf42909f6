"""The vector cache: float32 vectors keyed by (model id, hash of the embedded
text), so an unchanged chunk is never embedded again, even when its ordinal
or its file changes; "pending" = chunks without a vector for the current model;
the sweep drops vectors no chunk uses and every other model's."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .store_file import IndexFile


class VectorCache(IndexFile):
    """Vectors in the index (see :class:`store.Store`)."""

    def pending_chunks(self, model: str, limit: int | None = None) -> list[tuple[str, str]]:
        """Distinct (text_hash, embedding_text) of chunks with no vector for ``model``."""
        q = (
            "SELECT c.text_hash, min(c.embedding_text) FROM chunks c"
            " LEFT JOIN vectors v INDEXED BY vectors_key ON v.model = ? AND v.text_hash = c.text_hash"
            " WHERE v.text_hash IS NULL GROUP BY c.text_hash"
        )
        args: tuple = (model,)
        if limit:
            q += " LIMIT ?"
            args = (model, limit)
        with self.lock:
            return [(r[0], r[1]) for r in self.db.execute(q, args)]

    def pending_for(self, model: str, hashes: Iterable[str]) -> list[tuple[str, str]]:
        """Like ``pending_chunks``, among the chunks with one of ``hashes``."""
        hashes = list(hashes)
        out: list[tuple[str, str]] = []
        with self.lock:
            for i in range(0, len(hashes), 500):
                part = hashes[i : i + 500]
                out.extend(
                    (r[0], r[1])
                    for r in self.db.execute(
                        "SELECT c.text_hash, min(c.embedding_text) FROM chunks c"
                        f" WHERE c.text_hash IN ({','.join('?' * len(part))}) AND NOT EXISTS"
                        " (SELECT 1 FROM vectors v INDEXED BY vectors_key"
                        " WHERE v.model = ? AND v.text_hash = c.text_hash)"
                        " GROUP BY c.text_hash",
                        (*part, model),
                    )
                )
        return out

    def pending_count(self, model: str) -> int:
        """Distinct chunk texts without a vector of ``model`` (a lookup per
        chunk, so remembered until the next write)."""

        def count() -> int:
            return int(
                self.db.execute(
                    "SELECT count(DISTINCT c.text_hash) FROM chunks c LEFT JOIN vectors v INDEXED BY vectors_key"
                    " ON v.model = ? AND v.text_hash = c.text_hash WHERE v.text_hash IS NULL",
                    (model,),
                ).fetchone()[0]
            )

        return self.cached(f"pending {model}", count)

    def put_vectors(self, model: str, hashes: list[str], vecs: np.ndarray) -> None:
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        with self.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO vectors(model, text_hash, dim, vec) VALUES (?, ?, ?, ?)",
                [
                    (model, h, int(v.shape[0]), v.tobytes())
                    for h, v in zip(hashes, vecs, strict=True)
                ],
            )

    def chunk_vectors(
        self, model: str, chunk_ids: list[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, matrix) of the chunks that have a vector for ``model``."""
        q = (
            "SELECT c.id, v.vec FROM chunks c JOIN vectors v"
            " ON v.model = ? AND v.text_hash = c.text_hash"
        )
        rows: list[tuple[int, bytes]] = []
        with self.lock:
            if chunk_ids is None:
                rows = self.db.execute(q, (model,)).fetchall()
            else:
                for i in range(0, len(chunk_ids), 500):
                    part = chunk_ids[i : i + 500]
                    rows.extend(
                        self.db.execute(
                            q + f" WHERE c.id IN ({','.join('?' * len(part))})", (model, *part)
                        ).fetchall()
                    )
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        return ids, mat.copy()

    def vectors_in_use(self, model: str) -> tuple[list[str], np.ndarray]:
        """(text hashes, matrix) of every vector of ``model`` that a chunk uses."""
        with self.lock:
            rows = self.db.execute(
                "SELECT v.text_hash, v.vec FROM vectors v WHERE v.model = ? AND EXISTS"
                " (SELECT 1 FROM chunks c WHERE c.text_hash = v.text_hash) ORDER BY v.text_hash",
                (model,),
            ).fetchall()
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [h for h, _ in rows], np.stack([np.frombuffer(v, dtype=np.float32) for _, v in rows])

    def sweep_vectors(self, model: str) -> int:
        """Drop vectors no chunk uses, and every vector of other models."""
        with self.transaction() as db:
            n = db.execute("DELETE FROM vectors WHERE model != ?", (model,)).rowcount
            n += db.execute(
                "DELETE FROM vectors WHERE model = ? AND text_hash NOT IN"
                " (SELECT text_hash FROM chunks)",
                (model,),
            ).rowcount
        return int(n)

    def chunk_vectors_for_hashes(
        self, model: str, hashes: list[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, matrix) of the chunks whose embedded text has one of ``hashes``."""
        ids: list[int] = []
        with self.lock:
            for i in range(0, len(hashes), 500):
                part = hashes[i : i + 500]
                ids.extend(
                    r[0]
                    for r in self.db.execute(
                        f"SELECT id FROM chunks WHERE text_hash IN ({','.join('?' * len(part))})",
                        part,
                    )
                )
        return self.chunk_vectors(model, ids)
