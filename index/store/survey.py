"""Whole-index reads for the tools that measure mdseek (``benchmarks/``), so
that no tool outside ``index/store/`` writes SQL against the index file. The
engine never calls them.

Each takes an index file's path and opens it read-only (``mode=ro``: nothing
created, never waiting on the writer, which may be another process still
indexing); a file that is absent or cannot be read gives None where a count is
asked. :func:`copy` makes a consistent copy of an index (the WAL included),
optionally without its vectors, and :func:`settle` folds the WAL back into
the file (its size on disk is then the index's).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .file import path_in
from .location import companions

if TYPE_CHECKING:  # numpy is imported where vectors are read (a cold open stays light)
    import numpy as np


@contextmanager
def _reading(index: Path, timeout: float = 5.0) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(f"{Path(index).absolute().as_uri()}?mode=ro", uri=True, timeout=timeout)
    try:
        yield db
    finally:
        db.close()


def embedding_texts(index: Path, distinct: bool = True) -> list[str]:
    """The texts the chunks were embedded from: one per distinct text (the
    first in order), sorted; with ``distinct=False`` every chunk's, in no order."""
    sql = (
        "SELECT min(embedding_text) FROM chunks GROUP BY text_hash ORDER BY 1"
        if distinct
        else "SELECT embedding_text FROM chunks"
    )
    with _reading(index) as db:
        return [r[0] for r in db.execute(sql)]


def texts_in_store_order(index: Path) -> list[tuple[str, int]]:
    """(text, kind) of every distinct text the index embeds, in the store's
    order: chunks (kind 0) in file order, then passages (kind 1)."""
    with _reading(index) as db:
        rows = db.execute(
            "SELECT text_hash, embedding_text, 0 FROM chunks"
            " UNION ALL SELECT * FROM (SELECT text_hash, embedding_text, 1 FROM passages"
            " ORDER BY rowid)"
        ).fetchall()
    seen: dict[str, tuple[str, int]] = {}
    for h, text, kind in rows:
        seen.setdefault(h, (text, kind))
    return list(seen.values())


def text_hashes(index: Path) -> list[str]:
    """The distinct text hashes of the chunks, sorted."""
    with _reading(index) as db:
        return [r[0] for r in db.execute("SELECT DISTINCT text_hash FROM chunks ORDER BY 1")]


def chunk_sections(index: Path) -> dict[int, tuple[int, int, int]]:
    """chunk id -> (document id, first section ordinal, last section ordinal)."""
    with _reading(index) as db:
        rows = db.execute("SELECT id, doc_id, section_first, section_last FROM chunks")
        return {int(r[0]): (int(r[1]), int(r[2]), int(r[3])) for r in rows}


def section_spans(index: Path) -> dict[tuple[int, int], tuple[str, int, int]]:
    """(document id, section ordinal) -> (path, first line, end line), 0-based."""
    with _reading(index) as db:
        rows = db.execute(
            "SELECT s.doc_id, s.ordinal, d.path, s.start_line, s.end_line"
            " FROM sections s JOIN documents d ON d.id = s.doc_id"
        )
        return {(int(r[0]), int(r[1])): (os.fsdecode(r[2]), int(r[3]), int(r[4])) for r in rows}


def chunks_per_document(index: Path) -> list[tuple[str, int]]:
    """(path, chunks) of every document, by path."""
    with _reading(index) as db:
        rows = db.execute(
            "SELECT d.path, count(c.id) FROM documents d LEFT JOIN chunks c ON c.doc_id = d.id"
            " GROUP BY d.id"
        ).fetchall()
    return sorted((os.fsdecode(p), int(n)) for p, n in rows)


def models(index: Path) -> list[str]:
    """The model ids that have vectors in the index, sorted."""
    with _reading(index) as db:
        return [r[0] for r in db.execute("SELECT DISTINCT model FROM vectors ORDER BY 1")]


def vectors_by_hash(index: Path, model: str) -> dict[str, np.ndarray]:
    """text hash -> vector, every vector of ``model``."""
    import numpy as np

    with _reading(index) as db:
        rows = db.execute("SELECT text_hash, vec FROM vectors WHERE model = ?", (model,))
        return {h: np.frombuffer(v, dtype=np.float32) for h, v in rows}


def waiting(
    index: Path, model: str | None = None, paths: Sequence[str] | None = None
) -> int | None:
    """Chunks with no vector of ``model`` (of any model when None), among the
    documents at ``paths`` (relative, as stored) when given: None until every
    one of them is indexed, or when the file cannot be read."""
    if not Path(index).is_file():
        return None
    where, args = "", []
    if paths is not None:
        marks = ",".join("?" * len(paths))
        where, args = f" AND d.path IN ({marks})", [path_in(p) for p in paths]
    vec = "v.text_hash = c.text_hash" + (" AND v.model = ?" if model is not None else "")
    try:
        with _reading(index, timeout=1) as db:
            if paths is not None:
                sql = f"SELECT count(*) FROM documents d WHERE 1{where}"
                if db.execute(sql, args).fetchone()[0] < len(paths):
                    return None
            sql = (
                "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE NOT EXISTS"
                f" (SELECT 1 FROM vectors v WHERE {vec}){where}"
            )
            return int(db.execute(sql, [*([model] if model else []), *args]).fetchone()[0])
    except sqlite3.Error:
        return None


def vector_count(index: Path) -> int | None:
    """Vectors stored (any model); None when the file cannot be read."""
    try:
        with _reading(index, timeout=1) as db:
            return int(db.execute("SELECT count(*) FROM vectors").fetchone()[0])
    except sqlite3.Error:
        return None


def chunks_with_vectors(index: Path) -> int:
    """Chunks whose text has a vector (any model)."""
    with _reading(index) as db:
        sql = "SELECT count(*) FROM chunks WHERE text_hash IN (SELECT text_hash FROM vectors)"
        return int(db.execute(sql).fetchone()[0])


def copy(src: Path, dest: Path, vectors: bool = True) -> None:
    """A consistent copy of the index at ``src`` (its WAL included) at ``dest``,
    replacing whatever was there; without its vectors unless ``vectors``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    for f in (dest, *companions(dest)):
        f.unlink(missing_ok=True)
    s = sqlite3.connect(str(src))
    d = sqlite3.connect(str(dest))
    try:
        with d:
            s.backup(d)
        if not vectors:
            with d:
                d.execute("DELETE FROM vectors")
    finally:
        s.close()
        d.close()


def settle(index: Path) -> None:
    """Fold the write-ahead log into the file (its size is then the index's)."""
    db = sqlite3.connect(str(index))
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
