"""The documents of the index (``store.documents``): the ``documents`` rows read,
and a document's rows (documents, sections, chunks, passages, chunks_fts)
written one document at a time, in one transaction (a crash leaves the old or
the new version), rewriting only what changed: a re-indexed document keeps the
rows of its unchanged chunks (and so their vectors), and a vector whose text
no chunk uses any more is dropped with it (:func:`store.vectors.drop_unused_in`).
Every chunks_fts row it writes is noted in the :class:`store.fts.TouchedRows`
it is handed once their transaction is over (the in-memory BM25 patches those,
reading them on a reader connection: before the commit it would read the old
rows)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..text.aliases import doc_aliases, search_title
from ..text.chunk import Chunk
from ..text.document import ParsedDocument
from .file import IndexFile, path_in, rows_in, with_path
from .fts import TouchedRows
from .vectors import drop_unused_in


@dataclass(frozen=True)
class DocRow:
    id: int
    path: str
    size: int
    mtime_ns: int
    hash: str
    title: str
    chunker: str
    props_known: bool = True  # what filters read is stored (NULL in a migrated index)


class Documents:
    """The documents of one index file (see the module)."""

    def __init__(self, file: IndexFile, touched: TouchedRows):
        self._file = file
        self._touched = touched  # chunks_fts rows written here, for the lexical postings

    def all(self) -> dict[str, DocRow]:
        """Every indexed document by its path."""
        with self._file.reading() as db:
            rows = db.execute(
                "SELECT id, path, size, mtime_ns, hash, title, chunker, props IS NOT NULL"
                " FROM documents"
            ).fetchall()
        docs = [DocRow(*with_path(r, 1)) for r in rows]
        return {d.path: d for d in docs}

    def get(self, path: str) -> DocRow | None:
        with self._file.reading() as db:
            r = db.execute(
                "SELECT id, path, size, mtime_ns, hash, title, chunker, props IS NOT NULL"
                " FROM documents WHERE path=?",
                (path_in(path),),
            ).fetchone()
        return DocRow(*with_path(r, 1)) if r else None

    def props(self) -> dict[str, str | None]:
        """Every document's ``props`` (what search filters read: JSON, or None
        when not yet stored) by its path."""
        with self._file.reading() as db:
            rows = db.execute("SELECT path, props FROM documents").fetchall()
        return {with_path(r, 0)[0]: r[1] for r in rows}

    @contextmanager
    def _writing(self) -> Iterator[tuple[sqlite3.Connection, list[int]]]:
        """A transaction, and the list its chunks_fts rows written go in: they
        reach the :class:`TouchedRows` when it is over (committed, or rolled
        back: a row patched again is harmless)."""
        touched: list[int] = []
        try:
            with self._file.transaction() as db:
                yield db, touched
        finally:
            self._touched.add(touched)

    def touch(self, doc_id: int, size: int, mtime_ns: int) -> None:
        """A document whose file's size or mtime changed, not its content."""
        with self._file.transaction() as db:
            db.execute(
                "UPDATE documents SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, doc_id)
            )

    def replace(
        self,
        parsed: ParsedDocument,
        chunks: list[Chunk],
        size: int,
        mtime_ns: int,
        content_hash: str,
        chunker: str,
        props: str | None = None,
    ) -> tuple[list[int], list[int]]:
        """Write one document atomically (one transaction: a crash leaves the old
        or the new version). Returns (removed chunk ids, new chunk ids).

        A document already in the index is updated in place: a chunk whose
        embedded text is unchanged keeps its row (and id), and only what
        changed is written (its position after an edit above it; its FTS row
        only if its indexed text changed); other rows are deleted or inserted.
        Vectors whose text no chunk uses any more are dropped in the same
        transaction. ``props``: what search filters read of it (JSON)."""
        path = parsed.path
        title = search_title(parsed.title, doc_aliases(parsed))  # what FTS5 reads as title
        with self._writing() as (db, touched):
            old = db.execute(
                "SELECT id, title FROM documents WHERE path=?", (path_in(path),)
            ).fetchone()
            if old is None:
                cur = db.execute(
                    "INSERT INTO documents(path, size, mtime_ns, hash, title, chunker, indexed_at,"
                    " props) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        path_in(path),
                        size,
                        mtime_ns,
                        content_hash,
                        parsed.title,
                        chunker,
                        time.time(),
                        props,
                    ),
                )
                doc_id = int(cur.lastrowid or 0)
                self._write_sections(db, doc_id, parsed, {})
                return [], self._insert_chunks(db, doc_id, title, chunks, touched)
            doc_id = int(old[0])
            fts = db.execute(  # the title FTS5 holds (aliases included), not the one shown
                "SELECT title FROM chunks_fts WHERE rowid=(SELECT min(id) FROM chunks WHERE doc_id=?)",
                (doc_id,),
            ).fetchone()
            old_title = fts[0] if fts is not None else old[1]
            db.execute(
                "UPDATE documents SET size=?, mtime_ns=?, hash=?, title=?, chunker=?, indexed_at=?,"
                " props=? WHERE id=?",
                (size, mtime_ns, content_hash, parsed.title, chunker, time.time(), props, doc_id),
            )
            self._write_sections(db, doc_id, parsed, self._section_rows(db, doc_id))
            removed, new_ids = self._update_chunks(db, doc_id, old_title, title, chunks, touched)
            drop_unused_in(db, [h for _, h in removed])
        return [i for i, _ in removed if i], new_ids

    @staticmethod
    def _section_values(doc_id: int, s) -> tuple:
        return (
            doc_id,
            s.ordinal,
            s.heading.level if s.heading else 0,
            s.title,
            s.heading.slug if s.heading else "",
            s.breadcrumb,
            s.start_line,
            s.end_line,
            s.heading.end_line if s.heading else s.start_line,
        )

    @staticmethod
    def _section_rows(db: sqlite3.Connection, doc_id: int) -> dict[int, tuple]:
        return {
            r[1]: tuple(r) for r in db.execute("SELECT * FROM sections WHERE doc_id=?", (doc_id,))
        }

    def _write_sections(
        self, db: sqlite3.Connection, doc_id: int, parsed: ParsedDocument, old: dict[int, tuple]
    ) -> None:
        rows = [self._section_values(doc_id, s) for s in parsed.sections]
        changed = [r for r in rows if old.get(r[1]) != r]
        if len(old) > len(rows):
            db.execute("DELETE FROM sections WHERE doc_id=? AND ordinal>=?", (doc_id, len(rows)))
        if changed:
            db.executemany(
                "INSERT OR REPLACE INTO sections VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", changed
            )

    @staticmethod
    def _chunk_values(c: Chunk) -> tuple:
        """The chunks columns after (id, doc_id), in table order."""
        return (
            c.ordinal,
            c.heading,
            json.dumps(list(c.heading_path), ensure_ascii=False),
            c.start_line,
            c.end_line,
            c.start_offset,
            c.end_offset,
            c.text,
            c.embedding_text,
            c.tokens,
            c.text_hash,
            c.sections[0],
            c.sections[-1],
        )

    def _insert_chunks(
        self,
        db: sqlite3.Connection,
        doc_id: int,
        title: str,
        chunks: list[Chunk],
        touched: list[int],
    ) -> list[int]:
        new_ids: list[int] = []
        for c in chunks:
            cur = db.execute(
                "INSERT INTO chunks(doc_id, ordinal, heading, heading_path, start_line,"
                " end_line, start_offset, end_offset, text, embedding_text, tokens,"
                " text_hash, section_first, section_last)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (doc_id, *self._chunk_values(c)),
            )
            cid = int(cur.lastrowid or 0)
            new_ids.append(cid)
            self._insert_passages(db, cid, c)
            touched.append(cid)
            db.execute(
                "INSERT INTO chunks_fts(rowid, title, headings, body) VALUES (?, ?, ?, ?)",
                (cid, title, " ".join(c.heading_path[1:]), c.text),
            )
        return new_ids

    @staticmethod
    def _insert_passages(db: sqlite3.Connection, chunk_id: int, c: Chunk) -> None:
        if c.passages:
            db.executemany(
                "INSERT INTO passages(chunk_id, ordinal, start_char, end_char, embedding_text,"
                " text_hash) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (chunk_id, i, p.start, p.end, p.embedding_text, p.text_hash)
                    for i, p in enumerate(c.passages)
                ],
            )

    @staticmethod
    def _passage_hashes(db: sqlite3.Connection, chunk_ids: Iterable[int]) -> list[str]:
        sql = "SELECT text_hash FROM passages WHERE chunk_id IN {in}"
        return [r[0] for r in rows_in(db, sql, list(chunk_ids))]

    def _sync_passages(self, db: sqlite3.Connection, kept: list[tuple[int, Chunk]]) -> list[str]:
        """Passages of the chunks whose row is kept: rewritten where they differ
        (the same embedded text gives the same passages, so rarely). Returns the
        text hashes of the passages dropped."""
        dropped: list[str] = []
        for cid, c in kept:
            want = [(p.start, p.end, p.text_hash) for p in c.passages]
            have = [
                tuple(r)
                for r in db.execute(
                    "SELECT start_char, end_char, text_hash FROM passages WHERE chunk_id=?"
                    " ORDER BY ordinal",
                    (cid,),
                )
            ]
            if have != want:
                dropped.extend(h for _, _, h in have)
                db.execute("DELETE FROM passages WHERE chunk_id=?", (cid,))
                self._insert_passages(db, cid, c)
        return dropped

    def _update_chunks(
        self,
        db: sqlite3.Connection,
        doc_id: int,
        old_title: str,
        title: str,
        chunks: list[Chunk],
        touched: list[int],
    ) -> tuple[list[tuple[int, str]], list[int]]:
        """Rewrite a document's chunks, keeping the rows whose embedded text is
        unchanged. Returns ((id, text hash) of deleted rows, ids of inserted rows)."""
        old: dict[str, list[tuple]] = {}
        for r in db.execute(
            "SELECT id, ordinal, heading, heading_path, start_line, end_line, start_offset,"
            " end_offset, text, embedding_text, tokens, text_hash, section_first, section_last"
            " FROM chunks WHERE doc_id=? ORDER BY ordinal",
            (doc_id,),
        ):
            old.setdefault(r[11], []).append(tuple(r))
        fresh: list[Chunk] = []
        changed: list[tuple] = []
        moved: list[tuple] = []
        fts: list[tuple] = []
        kept: list[tuple[int, Chunk]] = []
        for c in chunks:
            rows = old.get(c.text_hash)
            if not rows:
                fresh.append(c)
                continue
            row = rows.pop(0)
            kept.append((row[0], c))
            vals = self._chunk_values(c)
            if row[1:] != vals:
                # The usual change: an edit above moved it (offsets, lines, ordinal).
                same_content = (row[2], row[3], row[8], row[10]) == (
                    vals[1],
                    vals[2],
                    vals[7],
                    vals[9],
                )
                if same_content:
                    moved.append(
                        (vals[0], vals[3], vals[4], vals[5], vals[6], vals[11], vals[12], row[0])
                    )
                else:
                    changed.append((*vals, row[0]))
            if title != old_title or row[3] != vals[2] or row[8] != c.text:
                fts.append((title, " ".join(c.heading_path[1:]), c.text, row[0]))
        removed = [(r[0], r[11]) for rows in old.values() for r in rows]
        # the passages' texts go with their chunks (ON DELETE CASCADE): their
        # hashes join the removed ones, so orphaned vectors are dropped
        gone = self._passage_hashes(db, [i for i, _ in removed])
        gone += self._sync_passages(db, kept)
        removed_texts = removed + [(0, h) for h in gone]
        touched.extend(i for i, _ in removed)
        touched.extend(f[-1] for f in fts)
        if removed:
            db.executemany("DELETE FROM chunks WHERE id=?", [(i,) for i, _ in removed])
            db.executemany("DELETE FROM chunks_fts WHERE rowid=?", [(i,) for i, _ in removed])
        if changed:
            db.executemany(
                "UPDATE chunks SET ordinal=?, heading=?, heading_path=?, start_line=?, end_line=?,"
                " start_offset=?, end_offset=?, text=?, embedding_text=?, tokens=?, text_hash=?,"
                " section_first=?, section_last=? WHERE id=?",
                changed,
            )
        if moved:
            db.executemany(
                "UPDATE chunks SET ordinal=?, start_line=?, end_line=?, start_offset=?, end_offset=?,"
                " section_first=?, section_last=? WHERE id=?",
                moved,
            )
        if fts:
            db.executemany("UPDATE chunks_fts SET title=?, headings=?, body=? WHERE rowid=?", fts)
        return removed_texts, self._insert_chunks(db, doc_id, title, fresh, touched)

    def _delete_doc_rows(
        self, db: sqlite3.Connection, doc_id: int, touched: list[int]
    ) -> list[tuple[int, str]]:
        rows = [
            (r[0], r[1])
            for r in db.execute("SELECT id, text_hash FROM chunks WHERE doc_id=?", (doc_id,))
        ]
        rows += [(0, h) for h in self._passage_hashes(db, [i for i, _ in rows])]
        touched.extend(i for i, _ in rows if i)
        db.executemany("DELETE FROM chunks_fts WHERE rowid=?", [(i,) for i, _ in rows if i])
        db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
        db.execute("DELETE FROM sections WHERE doc_id=?", (doc_id,))
        db.execute("DELETE FROM documents WHERE id=?", (doc_id,))
        return rows

    def delete(self, paths: Iterable[str]) -> list[tuple[int, str]]:
        """Delete documents; returns (chunk id, text hash) of their chunks, and
        (0, text hash) of their passages (their vectors stay: a renamed file finds
        them; sweep them later)."""
        removed: list[tuple[int, str]] = []
        with self._writing() as (db, touched):
            for p in paths:
                row = db.execute("SELECT id FROM documents WHERE path=?", (path_in(p),)).fetchone()
                if row:
                    removed.extend(self._delete_doc_rows(db, row[0], touched))
        return removed
