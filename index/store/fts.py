"""The index's lexical side in SQLite (``store.postings``): FTS5 BM25 queries,
the postings the in-memory BM25 (:mod:`lexical`) is built and patched from
(and which chunks_fts rows changed since: :class:`TouchedRows`, which the
documents part fills), and a query's words tokenized (and counted) exactly as
FTS5 indexes them. Everything here reads on a reader connection
(:meth:`IndexFile.reading`), never waiting for a write."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator

from .file import IndexFile, rows_in


class TouchedRows:
    """Chunk ids whose chunks_fts row was inserted, rewritten or deleted through
    one connection: :class:`store.documents.Documents` adds them once their
    transaction is over, :meth:`LexicalPostings.take_fts_touched` takes them."""

    def __init__(self) -> None:
        self._ids: set[int] = set()
        self._lock = threading.Lock()

    def add(self, ids: Iterable[int]) -> None:
        with self._lock:
            self._ids.update(ids)

    def take(self) -> set[int]:
        with self._lock:
            out, self._ids = self._ids, set()
            return out


class LexicalPostings:
    """FTS5 search and postings of one index file (see the module)."""

    def __init__(self, file: IndexFile, touched: TouchedRows):
        self._file = file
        self._touched = touched
        # Connections (by id: each lives as long as the file) whose temp schema
        # holds the tables of _scratch(); one thread uses a connection at a time.
        self._scratch_ready: set[int] = set()

    def fts_search(
        self, match: str, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25 score: higher is better) for an FTS5 MATCH expression."""
        if not match:
            return []
        w = ", ".join(str(float(x)) for x in weights)
        with self._file.reading() as db:
            rows = db.execute(
                f"SELECT rowid, bm25(chunks_fts, {w}) AS s FROM chunks_fts"
                " WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
                (match, limit),
            ).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    # -- postings for the in-memory BM25 (index/search/lexical.py) ----------------------

    # Per term, every occurrence: its row and its column (0 title, 1 headings,
    # 2 body), comma-separated, from an fts5vocab instance table {vocab}. The
    # vocab is read in term order, so no sort is needed.
    _POSTINGS_SQL = (
        "SELECT term, group_concat(doc), group_concat(CASE col WHEN 'title' THEN 0"
        " WHEN 'headings' THEN 1 ELSE 2 END) FROM {vocab} GROUP BY term"
    )

    def read_postings(self) -> Iterator[tuple[str, str, str]]:
        """Every term's postings in chunks_fts, one term at a time, read on a
        connection of its own (one snapshot, held as long as the caller reads;
        the readers :meth:`IndexFile.reading` lends stay free meanwhile)."""
        db = sqlite3.connect(
            self._file.path.as_uri() + "?mode=ro", uri=True, check_same_thread=False
        )
        try:
            db.execute("PRAGMA busy_timeout=60000")
            db.execute(
                "CREATE VIRTUAL TABLE temp.mdseek_all USING fts5vocab(main, chunks_fts, instance)"
            )
            yield from db.execute(self._POSTINGS_SQL.format(vocab="temp.mdseek_all"))
        finally:
            db.close()

    def take_fts_touched(self) -> set[int]:
        """Chunk ids whose chunks_fts row this process inserted, rewrote or
        deleted (in a transaction now over) since the last call."""
        return self._touched.take()

    # chunks_fts's tokenizer (schema above): scratch tables must stem the same way.
    _TOKENIZE = "porter unicode61 remove_diacritics 2"

    def _scratch(self, db: sqlite3.Connection) -> None:
        if id(db) in self._scratch_ready:
            return
        for stmt in (
            # A query's words, tokenized exactly as the index is.
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mdseek_qwords USING fts5("
            f"w, tokenize = '{self._TOKENIZE}')",
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mdseek_qterms"
            " USING fts5vocab(temp, mdseek_qwords, instance)",
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mdseek_vocab"
            " USING fts5vocab(main, chunks_fts, row)",
            # Rows copied from chunks_fts to read their terms.
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mdseek_rows USING fts5("
            f"title, headings, body, tokenize = '{self._TOKENIZE}')",
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.mdseek_rowterms"
            " USING fts5vocab(temp, mdseek_rows, instance)",
        ):
            db.execute(stmt)
        self._scratch_ready.add(id(db))

    def row_postings(self, chunk_ids: Iterable[int]) -> list[tuple[str, str, str]]:
        """The postings of these chunks_fts rows (those that exist)."""
        ids = sorted({int(i) for i in chunk_ids})
        if not ids:
            return []
        with self._file.reading() as db:
            self._scratch(db)
            db.execute("DELETE FROM temp.mdseek_rows")
            rows_in(
                db,
                "INSERT INTO temp.mdseek_rows(rowid, title, headings, body)"
                " SELECT rowid, title, headings, body FROM chunks_fts WHERE rowid IN {in}",
                ids,
            )
            rows = db.execute(self._POSTINGS_SQL.format(vocab="temp.mdseek_rowterms")).fetchall()
            db.execute("DELETE FROM temp.mdseek_rows")
        return rows

    def _over_words(self, words: list[str], sql: str) -> list[tuple]:
        """Rows of ``sql`` over the query words loaded into the scratch table
        (temp.mdseek_qwords, rowid = the word's index; its terms in mdseek_qterms)."""
        with self._file.reading() as db:
            self._scratch(db)
            db.execute("DELETE FROM temp.mdseek_qwords")
            db.executemany(
                "INSERT INTO temp.mdseek_qwords(rowid, w) VALUES (?, ?)", list(enumerate(words))
            )
            return db.execute(sql).fetchall()

    def word_terms(self, words: list[str]) -> list[list[str]]:
        """Each word's index terms (porter stems, folded diacritics), in order:
        usually one; ``foo_bar`` gives two; punctuation alone none."""
        out: list[list[str]] = [[] for _ in words]
        if words:
            for i, term in self._over_words(
                words, "SELECT doc, term FROM temp.mdseek_qterms ORDER BY doc, offset"
            ):
                out[int(i)].append(term)
        return out

    def term_doc_freq(self, words: list[str]) -> dict[str, int]:
        """word -> number of chunks holding it, counted as FTS5 matches it (porter
        stems, folded diacritics). A word the tokenizer splits (``foo_bar``) counts
        as its rarest part. Tokenizes through a scratch FTS5 table in the
        connection's temp schema, so the stems are exactly the index's."""
        if not words:
            return {}
        rows = self._over_words(
            words,
            "SELECT q.doc, (SELECT v.doc FROM temp.mdseek_vocab v WHERE v.term = q.term)"
            " FROM temp.mdseek_qterms q",
        )
        out: dict[str, int] = {}
        for i, n in rows:
            w = words[int(i)]
            n = int(n or 0)
            out[w] = min(out.get(w, n), n)
        return out
