"""The persistent index: one SQLite file per workspace (WAL, versioned schema).

Tables
  documents  one row per indexed file (path relative to the root, size, mtime,
             content hash, title, chunker signature)
  sections   every section of every document (heading, anchor, breadcrumb, span)
  chunks     every chunk (span, raw text, embedded text, tokens, text_hash)
  chunks_fts FTS5 over (title, headings, body), rowid = chunks.id
  vectors    float32 blobs keyed by (model id, hash of the embedded text): an
             unchanged chunk is never re-embedded, even when its ordinal or its
             file changes; a new model id re-embeds everything.

A document's rows (documents, sections, chunks, chunks_fts) change in one
transaction, so a crash leaves either the old or the new version; a re-indexed
document keeps the rows of its unchanged chunks. Vectors are a content-addressed
cache filled afterwards ("pending" = chunks without a vector for the current
model), so an interrupted run resumes where it stopped; a vector whose text no
chunk uses any more is dropped when a document is rewritten (and by a full
reconcile's sweep).

Paths are stored as text; a file name that is not valid UTF-8 is stored as its
raw bytes (a BLOB in the same column) and read back with ``os.fsdecode``.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .aliases import doc_aliases, search_title
from .chunk import Chunk
from .location import IndexFileError, companions, create_private, make_private, move_aside
from .parse import ParsedDocument

log = logging.getLogger(__name__)
T = TypeVar("T")

SCHEMA_VERSION = 2
APPLICATION_ID = 0x6D64736B  # "mdsk" in the SQLite header: this file is an mdseek index
_SIGNATURE = {"meta", "documents", "chunks", "vectors"}  # indexes from before application_id
# SQLite result codes of a file that is not a database or is damaged.
_DAMAGED = {getattr(sqlite3, "SQLITE_NOTADB", 26), getattr(sqlite3, "SQLITE_CORRUPT", 11)}

# Schema version -> the SQL that upgrades the previous version to it. None: that
# step cannot be done in place; an older index is set aside and rebuilt.
_MIGRATIONS: dict[int, str | None] = {
    1: """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        hash TEXT NOT NULL,
        title TEXT NOT NULL,
        chunker TEXT NOT NULL,
        indexed_at REAL NOT NULL
    );
    CREATE TABLE sections (
        doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        level INTEGER NOT NULL,
        heading TEXT NOT NULL,
        slug TEXT NOT NULL,
        breadcrumb TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        heading_end_line INTEGER NOT NULL,
        PRIMARY KEY (doc_id, ordinal)
    ) WITHOUT ROWID;
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        doc_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        heading TEXT NOT NULL,
        heading_path TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        start_offset INTEGER NOT NULL,
        end_offset INTEGER NOT NULL,
        text TEXT NOT NULL,
        embedding_text TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        text_hash TEXT NOT NULL,
        section_first INTEGER NOT NULL,
        section_last INTEGER NOT NULL
    );
    CREATE INDEX chunks_doc ON chunks(doc_id);
    CREATE INDEX chunks_hash ON chunks(text_hash);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        title, headings, body, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    CREATE TABLE vectors (
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vec BLOB NOT NULL,
        PRIMARY KEY (model, text_hash)
    ) WITHOUT ROWID;
    """,
    # "Has this text a vector?" without reading the vectors: the table's own
    # b-tree holds each 1.5 KB vector beside its key (7x faster pending counts).
    2: "CREATE INDEX vectors_key ON vectors(model, text_hash)",
}


def read_meta(path: Path, key: str) -> str | None:
    """A meta row of an index file, read only (None: no file, no row, unreadable);
    opens nothing for writing and creates nothing."""
    if not path.is_file():
        return None
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return row[0] if row and isinstance(row[0], str) else None


def is_damage(exc: BaseException) -> bool:
    """Is this SQLite error a damaged (or not-a-database) index file?"""
    return (
        isinstance(exc, sqlite3.DatabaseError)
        and getattr(exc, "sqlite_errorcode", None) in _DAMAGED
    )


def _path_in(path: str) -> str | bytes:
    """A document path as stored: text, or for a name that is not valid UTF-8
    (``os.fsdecode`` gives it surrogate escapes, which SQLite text cannot hold)
    its raw bytes, as a BLOB in the same column (unique and comparable too)."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path)


def _path_out(value: str | bytes) -> str:
    """A stored document path as the file system names it (surrogate escapes for
    bytes that are not UTF-8: ``open`` finds the file, ``files.display_path``
    shows it)."""
    return os.fsdecode(value) if isinstance(value, bytes) else value


def _with_path(row: tuple | list, i: int) -> list:
    vals = list(row)
    vals[i] = _path_out(vals[i])
    return vals


@dataclass(frozen=True)
class DocRow:
    id: int
    path: str
    size: int
    mtime_ns: int
    hash: str
    title: str
    chunker: str


@dataclass(frozen=True)
class SectionRow:
    doc_id: int
    path: str
    title: str
    ordinal: int
    level: int
    heading: str
    slug: str
    breadcrumb: str
    start_line: int
    end_line: int
    heading_end_line: int


@dataclass(frozen=True)
class ChunkRow:
    id: int
    doc_id: int
    path: str
    ordinal: int
    heading: str
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    text: str
    embedding_text: str
    tokens: int
    text_hash: str
    section_first: int
    section_last: int


class _Unusable(Exception):
    """The file is not an index this mdseek can use (see Store.__init__)."""

    def __init__(self, problem: str, tag: str, ours: bool = False):
        super().__init__(problem)
        self.problem = problem
        self.tag = tag  # names the renamed file: index.sqlite.<tag>-<time>
        self.ours = ours  # an mdseek index (of another version): always safe to set aside

    @property
    def advice(self) -> str:
        return (
            "mdseek only writes to its own index files; choose another index file "
            "(--db, MDSEEK_INDEX, the indexPath setting), or move this one away and "
            "mdseek builds a new index there"
        )


class Store:
    """A connection to one index file. Not shared between threads: the engine
    serialises access with its own lock."""

    def __init__(self, path: str | Path, recover: bool = False, check: bool = True):
        """Open (or create) the index at ``path``. A file that is not a usable
        mdseek index raises :class:`IndexFileError` saying what is wrong and what
        to do -- unless it can be set aside: an mdseek index of another version
        always, anything else when ``recover`` (the file sits in mdseek's own
        folder). It is then renamed (never deleted) and a new index started;
        :attr:`notice` says so. ``check`` runs SQLite's quick_check on open (about
        0.15 s per 75 MB of index) so a damaged file is found now, not mid-run."""
        self.path = Path(path)
        self._quick_check = check
        self.lock = threading.RLock()
        # chunks_fts rows written through this connection since take_fts_touched()
        self._fts_touched: set[int] = set()
        self._memo: dict[str, tuple[tuple[int, int], Any]] = {}  # see cached()
        self.notice: str | None = None
        self.migrated_from: int | None = None
        try:
            self._open()
        except _Unusable as exc:
            if not (recover or exc.ours):
                raise IndexFileError(f"{self.path} {exc.problem}: {exc.advice}") from None
            try:
                aside = move_aside(self.path, exc.tag)
            except FileNotFoundError:  # another process set it aside first
                aside = None
            self.notice = f"the index {self.path} {exc.problem}; " + (
                f"moved it to {aside.name} and building a new index"
                if aside
                else "building a new index"
            )
            log.info("%s", self.notice)  # the CLI prints notices, the server shows them
            self._open()

    def _open(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        create_private(self.path)
        try:
            self.db = sqlite3.connect(
                str(self.path), timeout=60.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise IndexFileError(f"cannot open the index {self.path}: {exc}") from None
        ours = False  # known to be an mdseek index (of this version, or migratable)
        try:
            self._check()
            ours = True
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA busy_timeout=60000")
            self._migrate()
            self.db.execute("SELECT count(*) FROM documents").fetchone()
            if self._quick_check:
                problems = [r[0] for r in self.db.execute("PRAGMA quick_check(3)")]
                if problems != ["ok"]:
                    raise _Unusable(
                        f"is damaged ({'; '.join(problems)[:200]})", "damaged", ours=True
                    )
        except sqlite3.DatabaseError as exc:
            self.db.close()
            if is_damage(exc):
                if ours:
                    raise _Unusable(f"is damaged ({exc})", "damaged", ours=True) from None
                raise _Unusable(
                    f"is not a readable SQLite database ({exc})", "unreadable"
                ) from None
            raise IndexFileError(f"cannot use the index {self.path}: {exc}") from None
        except BaseException:
            self.db.close()
            raise
        make_private(self.path, *companions(self.path))

    def close(self) -> None:
        self.db.close()

    # -- schema ---------------------------------------------------------------

    def _check(self) -> None:
        """Is this file an mdseek index this version can use? (Read-only: a
        foreign database is not switched to WAL or touched in any way.)"""
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        app_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        tables = {
            r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if version == 0 and app_id == 0 and not tables:
            return  # a new, empty file
        ours = app_id == APPLICATION_ID or (app_id == 0 and _SIGNATURE <= tables)
        if not ours:
            raise _Unusable("is an SQLite database but not an mdseek index", "foreign")
        if version > SCHEMA_VERSION:
            raise _Unusable(
                f"was written by a newer mdseek (index schema {version}; this mdseek "
                f"reads up to {SCHEMA_VERSION})",
                "newer",
                ours=True,
            )
        if any(_MIGRATIONS.get(v) is None for v in range(version + 1, SCHEMA_VERSION + 1)):
            raise _Unusable(
                f"was written by an older mdseek (index schema {version}) and cannot be "
                "migrated in place",
                f"schema{version}",
                ours=True,
            )

    def _migrate(self) -> None:
        with self.transaction():
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            for v in range(version + 1, SCHEMA_VERSION + 1):
                # executescript() would COMMIT mid-transaction: run statement by statement.
                for stmt in (_MIGRATIONS[v] or "").split(";"):
                    if stmt.strip():
                        self.db.execute(stmt)
                self.db.execute(f"PRAGMA user_version={v}")
            if self.db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                self.db.execute(f"PRAGMA application_id={APPLICATION_ID}")
        if 0 < version < SCHEMA_VERSION:
            self.migrated_from = version
            self.notice = (
                f"the index {self.path} was written by an older mdseek: migrated it "
                f"from schema {version} to {SCHEMA_VERSION}"
            )
            log.info("%s", self.notice)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            else:
                self.db.execute("COMMIT")

    def data_version(self) -> int:
        with self.lock:
            return int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def cached(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()`` once per state of the file: again only after a write
        through this connection (``total_changes``) or by another process
        (``data_version``). For aggregates a status poll asks for often."""
        with self.lock:
            key = (self.data_version(), self.db.total_changes)
            hit = self._memo.get(name)
            if hit is not None and hit[0] == key:
                return hit[1]
            value = compute()
            self._memo[name] = (key, value)
            return value

    # -- meta -----------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        if self.get_meta(key) == value:
            return  # no write transaction for nothing (a search on an unchanged index)
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # -- documents ------------------------------------------------------------

    def documents(self) -> dict[str, DocRow]:
        with self.lock:
            rows = self.db.execute(
                "SELECT id, path, size, mtime_ns, hash, title, chunker FROM documents"
            ).fetchall()
        docs = [DocRow(*_with_path(r, 1)) for r in rows]
        return {d.path: d for d in docs}

    def document(self, path: str) -> DocRow | None:
        with self.lock:
            r = self.db.execute(
                "SELECT id, path, size, mtime_ns, hash, title, chunker FROM documents WHERE path=?",
                (_path_in(path),),
            ).fetchone()
        return DocRow(*_with_path(r, 1)) if r else None

    def touch_document(self, doc_id: int, size: int, mtime_ns: int) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE documents SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, doc_id)
            )

    def replace_document(
        self,
        parsed: ParsedDocument,
        chunks: list[Chunk],
        size: int,
        mtime_ns: int,
        content_hash: str,
        chunker: str,
    ) -> tuple[list[int], list[int]]:
        """Write one document atomically (one transaction: a crash leaves the old
        or the new version). Returns (removed chunk ids, new chunk ids).

        A document already in the index is updated in place: a chunk whose
        embedded text is unchanged keeps its row (and id), and only what
        changed is written (its position after an edit above it; its FTS row
        only if its indexed text changed); other rows are deleted or inserted.
        Vectors whose text no chunk uses any more are dropped in the same
        transaction."""
        path = parsed.path
        title = search_title(parsed.title, doc_aliases(parsed))  # what FTS5 reads as title
        with self.transaction() as db:
            old = db.execute(
                "SELECT id, title FROM documents WHERE path=?", (_path_in(path),)
            ).fetchone()
            if old is None:
                cur = db.execute(
                    "INSERT INTO documents(path, size, mtime_ns, hash, title, chunker, indexed_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        _path_in(path),
                        size,
                        mtime_ns,
                        content_hash,
                        parsed.title,
                        chunker,
                        time.time(),
                    ),
                )
                doc_id = int(cur.lastrowid or 0)
                self._write_sections(db, doc_id, parsed, {})
                return [], self._insert_chunks(db, doc_id, title, chunks)
            doc_id = int(old[0])
            fts = db.execute(  # the title FTS5 holds (aliases included), not the one shown
                "SELECT title FROM chunks_fts WHERE rowid=(SELECT min(id) FROM chunks WHERE doc_id=?)",
                (doc_id,),
            ).fetchone()
            old_title = fts[0] if fts is not None else old[1]
            db.execute(
                "UPDATE documents SET size=?, mtime_ns=?, hash=?, title=?, chunker=?, indexed_at=?"
                " WHERE id=?",
                (size, mtime_ns, content_hash, parsed.title, chunker, time.time(), doc_id),
            )
            self._write_sections(db, doc_id, parsed, self._section_rows(db, doc_id))
            removed, new_ids = self._update_chunks(db, doc_id, old_title, title, chunks)
            self._drop_orphan_vectors(db, [h for _, h in removed])
        return [i for i, _ in removed], new_ids

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
        self, db: sqlite3.Connection, doc_id: int, title: str, chunks: list[Chunk]
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
            self._fts_touched.add(cid)
            db.execute(
                "INSERT INTO chunks_fts(rowid, title, headings, body) VALUES (?, ?, ?, ?)",
                (cid, title, " ".join(c.heading_path[1:]), c.text),
            )
        return new_ids

    def _update_chunks(
        self, db: sqlite3.Connection, doc_id: int, old_title: str, title: str, chunks: list[Chunk]
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
        for c in chunks:
            rows = old.get(c.text_hash)
            if not rows:
                fresh.append(c)
                continue
            row = rows.pop(0)
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
        self._fts_touched.update(i for i, _ in removed)
        self._fts_touched.update(f[-1] for f in fts)
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
        return removed, self._insert_chunks(db, doc_id, title, fresh)

    @staticmethod
    def _drop_orphan_vectors(db: sqlite3.Connection, hashes: Iterable[str]) -> int:
        """Delete the vectors (of any model) of texts no chunk uses any more."""
        n = 0
        for h in set(hashes):
            if (
                db.execute("SELECT 1 FROM chunks WHERE text_hash=? LIMIT 1", (h,)).fetchone()
                is None
            ):
                n += db.execute("DELETE FROM vectors WHERE text_hash=?", (h,)).rowcount
        return n

    def drop_orphan_vectors(self, hashes: Iterable[str]) -> int:
        hashes = list(hashes)
        if not hashes:
            return 0
        with self.transaction() as db:
            return self._drop_orphan_vectors(db, hashes)

    def _delete_doc_rows(self, db: sqlite3.Connection, doc_id: int) -> list[tuple[int, str]]:
        rows = [
            (r[0], r[1])
            for r in db.execute("SELECT id, text_hash FROM chunks WHERE doc_id=?", (doc_id,))
        ]
        self._fts_touched.update(i for i, _ in rows)
        db.executemany("DELETE FROM chunks_fts WHERE rowid=?", [(i,) for i, _ in rows])
        db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
        db.execute("DELETE FROM sections WHERE doc_id=?", (doc_id,))
        db.execute("DELETE FROM documents WHERE id=?", (doc_id,))
        return rows

    def delete_documents(self, paths: Iterable[str]) -> list[tuple[int, str]]:
        """Delete documents; returns (chunk id, text hash) of their chunks (their
        vectors stay: a renamed file finds them; sweep them later)."""
        removed: list[tuple[int, str]] = []
        with self.transaction() as db:
            for p in paths:
                row = db.execute("SELECT id FROM documents WHERE path=?", (_path_in(p),)).fetchone()
                if row:
                    removed.extend(self._delete_doc_rows(db, row[0]))
        return removed

    # -- sections and chunks --------------------------------------------------

    _SECTION_SQL = (
        "SELECT s.doc_id, d.path, d.title, s.ordinal, s.level, s.heading, s.slug, s.breadcrumb,"
        " s.start_line, s.end_line, s.heading_end_line FROM sections s"
        " JOIN documents d ON d.id = s.doc_id"
    )

    def sections(self, keys: Iterable[tuple[int, int]]) -> dict[tuple[int, int], SectionRow]:
        keys = list(keys)
        out: dict[tuple[int, int], SectionRow] = {}
        with self.lock:
            for i in range(0, len(keys), 200):
                part = keys[i : i + 200]
                cond = " OR ".join("(s.doc_id=? AND s.ordinal=?)" for _ in part)
                args = [v for k in part for v in k]
                for r in self.db.execute(self._SECTION_SQL + f" WHERE {cond}", args):
                    row = SectionRow(*_with_path(r, 1))
                    out[(row.doc_id, row.ordinal)] = row
        return out

    def document_sections(self, path: str) -> list[SectionRow]:
        with self.lock:
            rows = self.db.execute(
                self._SECTION_SQL + " WHERE d.path=? ORDER BY s.ordinal", (_path_in(path),)
            ).fetchall()
        return [SectionRow(*_with_path(r, 1)) for r in rows]

    _CHUNK_SQL = (
        "SELECT c.id, c.doc_id, d.path, c.ordinal, c.heading, c.heading_path, c.start_line,"
        " c.end_line, c.text, c.embedding_text, c.tokens, c.text_hash, c.section_first,"
        " c.section_last FROM chunks c JOIN documents d ON d.id = c.doc_id"
    )

    @staticmethod
    def _chunk(r: tuple) -> ChunkRow:
        vals = _with_path(r, 2)
        vals[5] = tuple(json.loads(vals[5]))
        return ChunkRow(*vals)

    def _where_in(self, sql: str, ids: Iterable[int]) -> Iterator[tuple]:
        """Rows of ``sql`` ending in ``IN`` (the list is appended), 500 ids a query."""
        ids = list(ids)
        with self.lock:
            for i in range(0, len(ids), 500):
                part = ids[i : i + 500]
                yield from self.db.execute(f"{sql} ({','.join('?' * len(part))})", part).fetchall()

    def chunk_spans(self, ids: Iterable[int]) -> dict[int, tuple[int, str, int, int]]:
        """chunk id -> (doc id, path, first section, last section): what ranking
        needs of a candidate (no text)."""
        sql = (
            "SELECT c.id, c.doc_id, d.path, c.section_first, c.section_last FROM chunks c"
            " JOIN documents d ON d.id = c.doc_id WHERE c.id IN"
        )
        return {
            int(r[0]): (int(r[1]), _path_out(r[2]), int(r[3]), int(r[4]))
            for r in self._where_in(sql, ids)
        }

    def chunk_texts(self, ids: Iterable[int]) -> dict[int, str]:
        return {
            int(a): b for a, b in self._where_in("SELECT id, text FROM chunks WHERE id IN", ids)
        }

    def document_chunks(self, path: str) -> list[ChunkRow]:
        with self.lock:
            rows = self.db.execute(
                self._CHUNK_SQL + " WHERE d.path=? ORDER BY c.ordinal", (_path_in(path),)
            ).fetchall()
        return [self._chunk(r) for r in rows]

    def document_hashes(self, path: str) -> set[str]:
        """Text hashes of one document's chunks."""
        with self.lock:
            return {
                r[0]
                for r in self.db.execute(
                    "SELECT c.text_hash FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.path=?",
                    (_path_in(path),),
                )
            }

    def counts(self) -> dict[str, int]:
        with self.lock:
            docs = self.db.execute("SELECT count(*) FROM documents").fetchone()[0]
            chunks = self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            sections = self.db.execute("SELECT count(*) FROM sections").fetchone()[0]
        return {"files": docs, "chunks": chunks, "sections": sections}

    # -- lexical --------------------------------------------------------------

    def fts_search(
        self, match: str, limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25 score: higher is better) for an FTS5 MATCH expression."""
        if not match:
            return []
        w = ", ".join(str(float(x)) for x in weights)
        with self.lock:
            rows = self.db.execute(
                f"SELECT rowid, bm25(chunks_fts, {w}) AS s FROM chunks_fts"
                " WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
                (match, limit),
            ).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    # -- postings for the in-memory BM25 (index/lexical.py) ----------------------

    # Per term, every occurrence: its row and its column (0 title, 1 headings,
    # 2 body), comma-separated, from an fts5vocab instance table {vocab}. The
    # vocab is read in term order, so no sort is needed.
    _POSTINGS_SQL = (
        "SELECT term, group_concat(doc), group_concat(CASE col WHEN 'title' THEN 0"
        " WHEN 'headings' THEN 1 ELSE 2 END) FROM {vocab} GROUP BY term"
    )

    def read_postings(self) -> Iterator[tuple[str, str, str]]:
        """Every term's postings in chunks_fts, one term at a time, read on a
        connection of its own (one snapshot; the store's connection stays free
        meanwhile)."""
        db = sqlite3.connect(self.path.as_uri() + "?mode=ro", uri=True, check_same_thread=False)
        try:
            db.execute("PRAGMA busy_timeout=60000")
            db.execute(
                "CREATE VIRTUAL TABLE temp.mdseek_all USING fts5vocab(main, chunks_fts, instance)"
            )
            yield from db.execute(self._POSTINGS_SQL.format(vocab="temp.mdseek_all"))
        finally:
            db.close()

    def take_fts_touched(self) -> set[int]:
        """Chunk ids whose chunks_fts row this connection inserted, rewrote or
        deleted since the last call."""
        with self.lock:
            out, self._fts_touched = self._fts_touched, set()
            return out

    # chunks_fts's tokenizer (schema above): scratch tables must stem the same way.
    _TOKENIZE = "porter unicode61 remove_diacritics 2"

    def _scratch(self) -> None:
        if getattr(self, "_scratch_ready", False):
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
            self.db.execute(stmt)
        self._scratch_ready = True

    def row_postings(self, chunk_ids: Iterable[int]) -> list[tuple[str, str, str]]:
        """The postings of these chunks_fts rows (those that exist)."""
        ids = sorted({int(i) for i in chunk_ids})
        if not ids:
            return []
        with self.lock:
            self._scratch()
            self.db.execute("DELETE FROM temp.mdseek_rows")
            for i in range(0, len(ids), 500):
                part = ids[i : i + 500]
                self.db.execute(
                    "INSERT INTO temp.mdseek_rows(rowid, title, headings, body)"
                    " SELECT rowid, title, headings, body FROM chunks_fts"
                    f" WHERE rowid IN ({','.join('?' * len(part))})",
                    part,
                )
            rows = self.db.execute(
                self._POSTINGS_SQL.format(vocab="temp.mdseek_rowterms")
            ).fetchall()
            self.db.execute("DELETE FROM temp.mdseek_rows")
        return rows

    def _over_words(self, words: list[str], sql: str) -> list[tuple]:
        """Rows of ``sql`` over the query words loaded into the scratch table
        (temp.mdseek_qwords, rowid = the word's index; its terms in mdseek_qterms)."""
        with self.lock:
            self._scratch()
            self.db.execute("DELETE FROM temp.mdseek_qwords")
            self.db.executemany(
                "INSERT INTO temp.mdseek_qwords(rowid, w) VALUES (?, ?)", list(enumerate(words))
            )
            return self.db.execute(sql).fetchall()

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

    def chunk_count(self) -> int:
        with self.lock:
            return int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    # -- vectors --------------------------------------------------------------

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
