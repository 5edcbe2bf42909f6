"""The index file itself: opening it safely, checking that it is an mdseek index
this version can use, migrating an older schema in place, and setting aside a
file it cannot use (renamed, never deleted) so a new index starts. Also one
transaction at a time, the file's change counter and a cache keyed on it, the
meta rows, and a query over a list of any length (:func:`rows_in`).

Two kinds of connection: the *writer* (one, behind :attr:`IndexFile.lock`),
which checks, migrates and writes the file; and *readers*, read-only
connections lent by :meth:`IndexFile.reading` (opened after the writer has
checked and migrated the file, as many as are reading at once, kept for the
next read, closed with the file). The file is in WAL mode, so a reader sees
the last committed state and never waits for a write in progress: a search
does not queue behind the writer's transaction.

Paths are stored as text; a file name that is not valid UTF-8 is stored as its
raw bytes (a BLOB in the same column) and read back with ``os.fsdecode``
(:func:`path_in`, :func:`path_out`).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from .location import (
    IndexFileError,
    companions,
    create_private,
    make_private,
    move_aside,
    odd_file,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

SCHEMA_VERSION = 4
APPLICATION_ID = 0x6D64736B  # "mdsk" in the SQLite header: this file is an mdseek index
SIGNATURE = {"meta", "documents", "chunks", "vectors"}  # indexes from before application_id
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
    # Passages: runs of a chunk's blocks with a vector of their own (passages.py);
    # offsets relative to the chunk's text, so a chunk that moves keeps them.
    3: """
    CREATE TABLE passages (
        id INTEGER PRIMARY KEY,
        chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        start_char INTEGER NOT NULL,
        end_char INTEGER NOT NULL,
        embedding_text TEXT NOT NULL,
        text_hash TEXT NOT NULL
    );
    CREATE INDEX passages_chunk ON passages(chunk_id);
    CREATE INDEX passages_hash ON passages(text_hash);
    """,
    # What search filters read of a note (search/filters.py: its tags and front
    # matter, JSON); NULL until the note is read again, which the reconciler does
    # for every such document (its chunks and vectors kept).
    4: "ALTER TABLE documents ADD COLUMN props TEXT",
}


GUARD_STEPS = 1000  # SQLite progress callbacks (of 1,000 steps each) a guarded read may take


def guard(db: sqlite3.Connection, steps: int = GUARD_STEPS) -> None:
    """Bound the work SQLite does on a file a stranger may have written (a
    view over an endless recursive query cannot hang the reader; about a
    second at most), and never run functions its schema names."""
    left = [steps]

    def tick() -> int:
        left[0] -= 1
        return 1 if left[0] < 0 else 0  # non-zero interrupts the statement

    db.set_progress_handler(tick, 1000)
    db.execute("PRAGMA trusted_schema=OFF")


def read_meta(path: Path, key: str) -> str | None:
    """A meta row of an index file, read only (None: no file, no row, unreadable,
    or more work than a meta row takes); opens nothing for writing, creates nothing,
    and never waits on a FIFO planted beside it (None then)."""
    if not path.is_file() or any(odd_file(c) for c in (path, *companions(path))):
        return None
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            guard(db)
            if db.execute("SELECT type FROM sqlite_master WHERE name = 'meta'").fetchone() != (
                "table",
            ):
                return None
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


def path_in(path: str) -> str | bytes:
    """A document path as stored: text, or for a name that is not valid UTF-8
    (``os.fsdecode`` gives it surrogate escapes, which SQLite text cannot hold)
    its raw bytes, as a BLOB in the same column (unique and comparable too)."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path)


def path_out(value: str | bytes) -> str:
    """A stored document path as the file system names it (surrogate escapes for
    bytes that are not UTF-8: ``open`` finds the file, ``files.display_path``
    shows it)."""
    return os.fsdecode(value) if isinstance(value, bytes) else value


def with_path(row: tuple | list, i: int) -> list:
    vals = list(row)
    vals[i] = path_out(vals[i])
    return vals


# Values one ``IN (...)`` binds: well below SQLite's bound on a statement's parameters.
IN_LIST = 500


def rows_in(
    db: sqlite3.Connection, sql: str, values: Sequence[Any], before: tuple = (), after: tuple = ()
) -> list[tuple]:
    """The rows of ``sql`` for all of ``values``, whatever their number: ``{in}``
    in ``sql`` stands for the list of an ``IN``, run :data:`IN_LIST` values a
    statement; ``before`` and ``after``: the parameters on either side of it.
    A statement that returns no rows (an ``INSERT``) runs the same way."""
    rows: list[tuple] = []
    for i in range(0, len(values), IN_LIST):
        part = values[i : i + IN_LIST]
        marks = f"({','.join('?' * len(part))})"
        rows.extend(db.execute(sql.replace("{in}", marks), (*before, *part, *after)).fetchall())
    return rows


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


class WriteLock:
    """The writer's lock (re-entrant), which also tells whether the calling
    thread holds it (:meth:`IndexFile.reading` then reads on the writer)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._mine = threading.local()  # .depth: how many times this thread holds it

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = self._lock.acquire(blocking, timeout)
        if got:
            self._mine.depth = getattr(self._mine, "depth", 0) + 1
        return got

    def release(self) -> None:
        self._lock.release()
        self._mine.depth -= 1

    def held(self) -> bool:
        """Does the calling thread hold it?"""
        return getattr(self._mine, "depth", 0) > 0

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class IndexFile:
    """An index file, which every part of :class:`store.Store` is handed: the
    writer connection ``db`` behind ``lock`` and :meth:`transaction` to write
    with, :meth:`reading` to read with (never waiting for a write),
    :meth:`data_version`, :meth:`cached` and the meta rows. Safe to share
    between threads."""

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
        self.lock = WriteLock()  # the writer connection's: one thread at a time
        self._memo: dict[str, tuple[tuple[int, int], Any]] = {}  # see cached()
        self._memo_lock = threading.Lock()
        self._version = 0  # the writer's data_version, as last read (see data_version())
        self._commits = 0  # transactions committed through the writer
        self.after_commit: Callable[[], None] | None = None  # the vouch's record (adopt.py)
        self._idle: list[sqlite3.Connection] = []  # readers free to lend (see reading())
        self._lent: set[sqlite3.Connection] = set()  # readers in use
        self._readers_lock = threading.Lock()
        self._closed = False
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
        self._read_version()  # the counter as opened: the first change is another's write

    def _open(self) -> None:
        """Open; tried again for a minute while another process makes this new index."""
        deadline, pause = time.monotonic() + 60.0, 0.02
        while True:
            try:
                return self._open_once()
            except IndexFileError as exc:  # "locked": SQLite does not wait on a WAL switch
                if "database is locked" not in str(exc) or time.monotonic() + pause >= deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    def _open_once(self) -> None:
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
        """Close the readers, then the writer (the last connection: it
        checkpoints the WAL and removes it). A reader still lent out is closed
        when it comes back."""
        with self._readers_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for db in idle:
            db.close()
        self.db.close()

    # -- readers --------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A connection to read from (only: its statements must be run to the
        end inside the block, which ends its snapshot). It sees every committed
        transaction -- this process's included: a read after a write sees it --
        and never waits for the writer. A thread that holds :attr:`lock` (in a
        transaction) reads on the writer instead, and sees its own uncommitted
        rows."""
        if self.lock.held():
            yield self.db
            return
        db = self._lend()
        try:
            yield db
        finally:
            self._give_back(db)

    def _lend(self) -> sqlite3.Connection:
        with self._readers_lock:
            if self._closed:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            db = self._idle.pop() if self._idle else None
            if db is not None:
                self._lent.add(db)
                return db
        db = self._open_reader()  # outside the lock: opening is the slow part
        with self._readers_lock:
            if self._closed:
                db.close()
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            self._lent.add(db)
        return db

    def _give_back(self, db: sqlite3.Connection) -> None:
        with self._readers_lock:
            self._lent.discard(db)
            if not self._closed:
                self._idle.append(db)
                return
        db.close()

    def _open_reader(self) -> sqlite3.Connection:
        """A read-only connection to the file the writer opened, checked and
        migrated (``mode=ro``: it can write nothing but its own temp tables)."""
        try:
            return sqlite3.connect(
                self.path.absolute().as_uri() + "?mode=ro",
                uri=True,
                timeout=60.0,
                isolation_level=None,
                check_same_thread=False,  # lent to one thread at a time, any thread
            )
        except sqlite3.Error as exc:
            raise IndexFileError(f"cannot read the index {self.path}: {exc}") from None

    def readers(self) -> int:
        """Reader connections open now (idle or lent)."""
        with self._readers_lock:
            return len(self._idle) + len(self._lent)

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
        ours = app_id == APPLICATION_ID or (app_id == 0 and SIGNATURE <= tables)
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
                self._commits += 1
                self._read_version()  # another process's commit before ours shows now
                if self.after_commit is not None:
                    self.after_commit()  # never raises (adopt._record logs)

    def _read_version(self) -> None:
        """(Holding :attr:`lock`.)"""
        self._version = int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def data_version(self) -> int:
        """The file's change counter as the writer sees it: it changes when
        another process (or another connection) commits, not when this one
        does (what this process writes reaches its caches directly). Never
        waits: while another thread writes, the value read last, which is read
        again at the end of each transaction."""
        if self.lock.acquire(blocking=False):
            try:
                self._read_version()
            finally:
                self.lock.release()
        return self._version

    def cached(self, name: str, compute: Callable[[sqlite3.Connection], T]) -> T:
        """``compute(db)`` (``db``: a connection to read from) once per state of
        the file: again only after a transaction of this process or a write by
        another (``data_version``). For aggregates a status poll asks for often."""
        key = (self.data_version(), self._commits)  # before reading: never newer than the value
        with self._memo_lock:
            hit = self._memo.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        with self.reading() as db:
            value = compute(db)
        with self._memo_lock:
            self._memo[name] = (key, value)
        return value

    # -- meta -----------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        with self.reading() as db:
            row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        if self.get_meta(key) == value:
            return  # no write transaction for nothing (a search on an unchanged index)
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
