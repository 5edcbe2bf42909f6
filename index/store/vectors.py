"""The vector cache (``store.vectors``): float32 vectors keyed by (model id,
hash of the embedded text), so an unchanged chunk is never embedded again,
even when its ordinal or its file changes; "pending" = texts (of chunks, then
of their passages) without a vector for the current model; the sweep drops
vectors no text uses and every other model's. A document rewritten drops the
vectors it orphaned in its own transaction (:func:`drop_unused_in`). Reads go
to a reader connection (:meth:`IndexFile.reading`), never waiting for a write."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .file import IndexFile, guard, rows_in

log = logging.getLogger(__name__)

UNTRUSTED = "untrusted:"  # model id prefix of vectors an adopted index brought (see adopt.py)
# Every embedded text: the chunks' (kind 0) and their passages' (kind 1).
TEXTS = (
    "(SELECT text_hash, embedding_text, 0 AS kind FROM chunks"
    " UNION ALL SELECT text_hash, embedding_text, 1 AS kind FROM passages)"
)
USED = "(SELECT text_hash FROM chunks UNION SELECT text_hash FROM passages)"
FOREIGN_STEPS = 200_000  # guard steps (of 1,000 each) for copying them: minutes, never forever


def drop_unused_in(db: sqlite3.Connection, hashes: Iterable[str]) -> int:
    """Delete the vectors (of any model) of texts no chunk or passage uses any
    more, inside the caller's transaction on ``db``."""
    n = 0
    for h in set(hashes):
        if (
            db.execute("SELECT 1 FROM chunks WHERE text_hash=? LIMIT 1", (h,)).fetchone() is None
            and db.execute("SELECT 1 FROM passages WHERE text_hash=? LIMIT 1", (h,)).fetchone()
            is None
        ):
            n += db.execute("DELETE FROM vectors WHERE text_hash=?", (h,)).rowcount
    return n


class VectorCache:
    """The vectors of one index file (see the module)."""

    def __init__(self, file: IndexFile):
        self._file = file

    def drop_unused(self, hashes: Iterable[str]) -> int:
        """:func:`drop_unused_in`, in a transaction of its own."""
        hashes = list(hashes)
        if not hashes:
            return 0
        with self._file.transaction() as db:
            return drop_unused_in(db, hashes)

    def pending_texts(
        self, model: str, hashes: Iterable[str] | None = None, limit: int | None = None
    ) -> list[tuple[str, str, int]]:
        """Distinct (text_hash, embedding_text, kind) of the texts with no vector
        for ``model`` (among ``hashes`` if given): chunks (kind 0) before
        passages (kind 1), which only refine a chunk's score."""
        q = (
            f"SELECT c.text_hash, min(c.embedding_text), min(c.kind) FROM {TEXTS} c"
            " WHERE {where} NOT EXISTS (SELECT 1 FROM vectors v INDEXED BY vectors_key"
            " WHERE v.model = ? AND v.text_hash = c.text_hash)"
            " GROUP BY c.text_hash ORDER BY min(c.kind)"
        )
        with self._file.reading() as db:
            if hashes is None:
                sql = q.replace("{where}", "") + (" LIMIT ?" if limit else "")
                args: tuple = (model, limit) if limit else (model,)
                return [(r[0], r[1], r[2]) for r in db.execute(sql, args).fetchall()]
            sql = q.replace("{where}", "c.text_hash IN {in} AND")
            out = [(r[0], r[1], r[2]) for r in rows_in(db, sql, list(hashes), after=(model,))]
        out.sort(key=lambda r: r[2])
        return out

    def pending_chunks(self, model: str, limit: int | None = None) -> list[tuple[str, str]]:
        """Distinct (text_hash, embedding_text) of texts with no vector for
        ``model``, chunks first (see :meth:`pending_texts`)."""
        return [(h, t) for h, t, _ in self.pending_texts(model, limit=limit)]

    def pending_for(self, model: str, hashes: Iterable[str]) -> list[tuple[str, str]]:
        """Like ``pending_chunks``, among the texts with one of ``hashes``."""
        return [(h, t) for h, t, _ in self.pending_texts(model, hashes)]

    def pending_count(self, model: str) -> int:
        """Distinct texts (of chunks and passages) without a vector of ``model``
        (a lookup per text, so remembered until the next write)."""

        def count(db: sqlite3.Connection) -> int:
            return int(
                db.execute(
                    f"SELECT count(DISTINCT c.text_hash) FROM {TEXTS} c LEFT JOIN vectors v"
                    " INDEXED BY vectors_key ON v.model = ? AND v.text_hash = c.text_hash"
                    " WHERE v.text_hash IS NULL",
                    (model,),
                ).fetchone()[0]
            )

        return self._file.cached(f"pending {model}", count)

    def put_vectors(self, model: str, hashes: list[str], vecs: np.ndarray) -> None:
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        with self._file.transaction() as db:
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
        rows = self._with_vectors(
            "SELECT c.id, v.vec FROM chunks c JOIN vectors v"
            " ON v.model = ? AND v.text_hash = c.text_hash",
            "c.id",
            model,
            chunk_ids,
        )
        ids, mat = _columns(rows)
        return ids[0], mat

    def passage_vectors(
        self, model: str, chunk_ids: list[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(passage ids, their chunks' ids, matrix) of the passages that have a
        vector for ``model`` (of the chunks ``chunk_ids``, if given)."""
        rows = self._with_vectors(
            "SELECT p.id, p.chunk_id, v.vec FROM passages p JOIN vectors v"
            " ON v.model = ? AND v.text_hash = p.text_hash",
            "p.chunk_id",
            model,
            chunk_ids,
        )
        (pids, owners), mat = _columns(rows, 2)
        return pids, owners, mat

    def _with_vectors(
        self, sql: str, column: str, model: str, ids: list[int] | None
    ) -> list[tuple]:
        """Rows of ``sql`` (its one parameter: the model) whose ``column`` is one
        of ``ids`` (every row when None), 500 ids a query."""
        with self._file.reading() as db:
            if ids is None:
                return db.execute(sql, (model,)).fetchall()
            return rows_in(db, f"{sql} WHERE {column} IN {{in}}", ids, before=(model,))

    def vectors_in_use(self, model: str) -> tuple[list[str], np.ndarray]:
        """(text hashes, matrix) of every vector of ``model`` that a chunk or passage uses."""
        with self._file.reading() as db:
            rows = db.execute(
                "SELECT v.text_hash, v.vec FROM vectors v WHERE v.model = ? AND"
                f" v.text_hash IN {USED} ORDER BY v.text_hash",
                (model,),
            ).fetchall()
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [h for h, _ in rows], np.stack([np.frombuffer(v, dtype=np.float32) for _, v in rows])

    def sweep_vectors(self, model: str, keep: Iterable[str] = ()) -> int:
        """Drop vectors no chunk or passage uses, and every vector of other
        models than ``model`` and ``keep`` (a precision move's target, see
        precision_move.py)."""
        models = [model, *keep]
        marks = ",".join("?" * len(models))
        with self._file.transaction() as db:
            n = db.execute(f"DELETE FROM vectors WHERE model NOT IN ({marks})", models).rowcount
            for m in models:
                n += db.execute(
                    f"DELETE FROM vectors WHERE model = ? AND text_hash NOT IN {USED}", (m,)
                ).rowcount
        return int(n)

    def has_vectors(self, model: str) -> bool:
        """Whether any vector of ``model`` is stored."""
        with self._file.reading() as db:
            row = db.execute("SELECT 1 FROM vectors WHERE model = ? LIMIT 1", (model,)).fetchall()
        return bool(row)

    def chunk_vectors_for_hashes(
        self, model: str, hashes: list[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids, matrix) of the chunks whose embedded text has one of ``hashes``."""
        with self._file.reading() as db:
            rows = rows_in(
                db,
                "SELECT c.id, v.vec FROM chunks c JOIN vectors v ON v.model = ?"
                " AND v.text_hash = c.text_hash WHERE c.text_hash IN {in}",
                hashes,
                before=(model,),
            )
        ids, mat = _columns(rows)
        return ids[0], mat

    def passage_vectors_for_hashes(
        self, model: str, hashes: list[str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(passage ids, their chunks' ids, matrix) of the passages whose text
        has one of ``hashes`` (and a vector of ``model``): only those, not
        their chunks' other passages, which joined the matrix with their own
        texts' vectors."""
        with self._file.reading() as db:
            rows = rows_in(
                db,
                "SELECT p.id, p.chunk_id, v.vec FROM passages p JOIN vectors v ON v.model = ?"
                " AND v.text_hash = p.text_hash WHERE p.text_hash IN {in}",
                hashes,
                before=(model,),
            )
        (pids, owners), mat = _columns(rows, 2)
        return pids, owners, mat

    # -- vectors an adopted index brought (adopt.py) ------------------------------------

    def take_foreign_vectors(self, path: Path) -> int:
        """Copy the vectors of the index file at ``path`` (another's, set aside)
        under ``untrusted:<model>``, where only :meth:`untrusted_for_pending`
        reads them; returns how many (-1: the file could not be read). Only a plain ``vectors`` table is read,
        its rows by type, with the work bounded (:func:`store.file.guard`)."""
        with self._file.lock:
            try:
                self._file.db.execute(
                    "ATTACH DATABASE ? AS foreign_index", (f"{path.as_uri()}?mode=ro",)
                )
            except sqlite3.Error as exc:
                log.warning("cannot read the vectors of %s: %s", path, exc)
                return -1
            trusted = self._file.db.execute("PRAGMA trusted_schema").fetchone()[0]
            try:
                guard(self._file.db, FOREIGN_STEPS)
                sql = self._file.db.execute(
                    "SELECT sql FROM foreign_index.sqlite_master WHERE name = 'vectors'"
                    " AND type = 'table'"
                ).fetchone()
                if sql is None or not str(sql[0]).upper().startswith("CREATE TABLE"):
                    return 0
                with self._file.transaction() as db:
                    return int(
                        db.execute(
                            "INSERT OR IGNORE INTO vectors(model, text_hash, dim, vec)"
                            " SELECT ? || model, text_hash, dim, vec FROM foreign_index.vectors"
                            " WHERE typeof(model) = 'text' AND typeof(text_hash) = 'text'"
                            " AND typeof(dim) = 'integer' AND typeof(vec) = 'blob'"
                            " AND length(model) <= 1000 AND length(text_hash) <= 128"
                            " AND length(vec) = 4 * dim",
                            (UNTRUSTED,),
                        ).rowcount
                    )
            except sqlite3.Error as exc:
                log.warning("cannot read the vectors of %s: %s", path, exc)
                return -1
            finally:
                self._file.db.set_progress_handler(None, 0)
                self._file.db.execute(f"PRAGMA trusted_schema={int(trusted)}")
                self._file.db.execute("DETACH DATABASE foreign_index")

    def has_untrusted(self) -> bool:
        with self._file.reading() as db:
            row = db.execute(
                "SELECT 1 FROM vectors WHERE model >= ? AND model < ? LIMIT 1",
                (UNTRUSTED, UNTRUSTED[:-1] + chr(ord(UNTRUSTED[-1]) + 1)),
            ).fetchall()
        return bool(row)

    def untrusted_for_pending(self, model: str, dim: int) -> tuple[list[str], np.ndarray]:
        """(text hashes, matrix) of the untrusted vectors of ``model``, of ``dim``
        values, whose text a chunk waits for (no vector of ``model`` yet)."""
        with self._file.reading() as db:
            rows = db.execute(
                "SELECT u.text_hash, u.vec FROM vectors u WHERE u.model = ? AND length(u.vec) = ?"
                f" AND u.text_hash IN {USED}"
                " AND NOT EXISTS (SELECT 1 FROM vectors v INDEXED BY vectors_key"
                " WHERE v.model = ? AND v.text_hash = u.text_hash)",
                (UNTRUSTED + model, 4 * dim, model),
            ).fetchall()
        if not rows:
            return [], np.zeros((0, dim), dtype=np.float32)
        mat = np.frombuffer(b"".join(v for _, v in rows), dtype=np.float32).reshape(len(rows), dim)
        return [h for h, _ in rows], mat

    def drop_untrusted_of_chunks(self) -> bool:
        """Drop the untrusted vectors whose text a chunk or passage has (taken or
        refused by now); returns whether any untrusted vector is left (texts not read yet)."""
        with self._file.transaction() as db:
            db.execute(
                f"DELETE FROM vectors WHERE model >= ? AND model < ? AND text_hash IN {USED}",
                (UNTRUSTED, UNTRUSTED[:-1] + chr(ord(UNTRUSTED[-1]) + 1)),
            )
        return self.has_untrusted()


def _columns(rows: list[tuple], n_ids: int = 1) -> tuple[list[np.ndarray], np.ndarray]:
    """The first ``n_ids`` columns of (id..., vector bytes) rows as int64 arrays,
    and the vectors as one float32 matrix."""
    ids = [np.fromiter((r[k] for r in rows), dtype=np.int64, count=len(rows)) for k in range(n_ids)]
    if not rows:
        return ids, np.zeros((0, 0), dtype=np.float32)
    # row by row into one array: joining the bytes first, then copying them out
    # of the joined buffer, held the matrix three times (the rows, the join, the copy)
    mat = np.empty((len(rows), len(rows[0][n_ids]) // 4), dtype=np.float32)
    for i, r in enumerate(rows):
        mat[i] = np.frombuffer(r[n_ids], dtype=np.float32)
    return ids, mat
