"""A workspace index this machine did not make is never adopted as it is.

``<folder>/.mdseek/index.sqlite`` is used when it exists (:mod:`location`).
A folder that arrives as a tar or zip brings that file with it, and extracting
it makes it the user's, with the 0700/0600 modes and the mtimes it was packed
with: nothing about the file says who wrote its rows. Rows could hold text no
file has (a search, and so an AI agent over MCP, would show it), a file filter
that indexes ``.env``, or vectors of the wrong size.

So the first time mdseek meets such an index it makes it its own
(:func:`open_index`): the file is set aside and a new one made in its place;
every file of the folder is read again (the size and mtime the old rows carry
are never trusted); and the old file's vectors are kept under another model id
(``untrusted:<model>``), where nothing reads them but the embedder: a text
read from the files that has one gets it instead of being embedded, after the
checks a team's vectors file gets (same model, same size, finite, unit length:
:func:`vectors_file.import_vectors`), and the rest are swept. A vector is keyed
by the hash of the exact text embedded, so one planted for another text is
never used, and a wrong one for a real text can cost ranking, never show text.
A team that ships an index therefore still saves the embedding; the reading
pass is what it costs (seconds per thousand notes).

"Made here": a random token in the index's meta, and a record in the user
cache (``<cache>/mdseek/vouched/``) named by a hash of the token and the index
file's device and inode, holding what the index's files were when mdseek last
wrote them: the inode, size and change time (``st_ctime``, which every
write sets and nobody can set back) of the file, and a digest of its ``-wal``
and ``-journal`` (:func:`state`). Trust rests on that record, never on a secret
inside the file it protects: a copy of the file, a file extracted over it, one
carried to another machine, and one overwritten in place (``cp`` over it,
``rsync --inplace``, a planted ``-wal`` or ``-journal``: same inode, same
token) all fail the check; moving the folder within its file system does not.
Every engine writes the record after its commits (:func:`_follow`: at most
once a second and at the end of a burst; :func:`flush_records` before the
servers' ``os._exit``) and when it closes, if no other engine
still holds it (:meth:`Claim.close`: the last one to let go, after SQLite's
last checkpoint), so the record is current whoever wrote last (the CLI, the
language server and the MCP server at once); an engine killed in the middle
of a write leaves it stale, and the next open reads the files again (slower,
never unsafe). A file the user
made empty to ask for a workspace index holds no rows: it is taken as it is.
An index that another engine has open (:class:`Claim`: a shared lock every
engine holds) is this user's: it is taken as it is, and remembered, never set
aside under that engine, even when the two processes keep their records in
different caches (an MCP client starts its servers without the shell's
``XDG_CACHE_HOME``). Not guarded: a change made to the files while an mdseek
process holds them open (it is taken as that process's own).

The old file is read-only and guarded while the vectors are copied: only a
plain ``vectors`` table is read, its rows by their types, with a bound on the
work SQLite may do (a crafted view or schema cannot hang the open).
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import sqlite3
import stat
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path

from ..model.model import CACHE_ENV
from .file import APPLICATION_ID, SIGNATURE, guard, is_damage, read_meta
from .location import (
    IndexLocation,
    _mkdirs_private,
    cache_root,
    companions,
    move_aside,
    open_regular,
)
from .store import Store

log = logging.getLogger(__name__)

TOKEN_KEY = "made_here"  # the meta row holding the index's token
RECORD_MAX = 512  # bytes of a vouched record read


def registry() -> Path:
    """Where the vouched records are: ``$MDSEEK_CACHE_DIR/vouched`` when it is
    set, else ``mdseek/vouched`` in the user's cache folder as the password
    database places it (``~/.cache`` on Linux, ``~/Library/Caches`` on macOS),
    not as ``$HOME`` or ``$XDG_CACHE_HOME`` say: processes of one user that do
    not share those (an MCP client starts its servers with few variables) keep
    one record, so the last to write an index records it for all."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser() / "vouched"
    try:
        import pwd

        home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError, AttributeError):  # Windows: the platform's cache
        return cache_root().parent / "vouched"
    under = ("Library", "Caches") if sys.platform == "darwin" else (".cache",)
    return home.joinpath(*under, "mdseek", "vouched")


def _entry(path: Path, token: str) -> Path | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    digest = hashlib.sha256(f"{st.st_dev}:{st.st_ino}:{token}".encode()).hexdigest()
    return registry() / digest


TAIL = 65536  # bytes of a -wal's end in its digest: the last frame's cumulative checksum


def state(path: Path) -> str:
    """What the index's files are now: the inode, size and change time of the
    file (every write sets the change time; nobody can set it back); the inode,
    size, mtime and a digest of the header and last 64 KB of its -wal and
    -journal (SQLite, run as root, chowns them on every open, so their change
    time moves without a write; each WAL frame's header carries a checksum of
    all frames before it, so the tail stands for the whole). "-" for a
    companion that is not there, or empty (a read-only open makes one)."""
    parts = []
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-journal")):
        try:
            st = os.lstat(p)
            if p == path:
                parts.append(f"{st.st_ino}:{st.st_size}:{st.st_ctime_ns}")
            elif st.st_size == 0 and stat.S_ISREG(st.st_mode):
                parts.append("-")
            else:
                parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{_digest(p)}")
        except FileNotFoundError:
            parts.append("-")
        except OSError:
            parts.append("?")
    return " ".join(parts)


def _digest(p: Path) -> str:
    fd = open_regular(p, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        h = hashlib.sha256(os.pread(fd, 32, 0))
        h.update(os.pread(fd, TAIL, max(32, size - TAIL)))
    finally:
        os.close(fd)
    return h.hexdigest()[:32]


def made_here(path: Path) -> bool:
    """Whether the index file at ``path`` was made (or adopted) by mdseek on this
    machine, for this user, and is still that file as mdseek left it."""
    now = state(path)
    token = read_meta(path, TOKEN_KEY)
    entry = _entry(path, token) if token else None
    # The entry's name is unforgeable without the token (random, and only in
    # the private index file), and what it holds is in the user's private cache,
    # so who else can write the folder does not matter.
    if entry is None:
        return False
    try:
        fd = open_regular(entry, os.O_RDONLY)
        with os.fdopen(fd, "rb") as fh:
            recorded = fh.read(RECORD_MAX).decode("ascii", "replace").strip()
    except OSError:
        return False
    return recorded == now and now == state(path)


def held_elsewhere(path: Path) -> bool:
    """Whether another engine has the workspace index at ``path`` open (its
    :class:`Claim`); creates nothing."""
    try:
        import fcntl

        fd = open_regular(str(path) + ".open", os.O_RDONLY)
    except (ImportError, OSError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def trusted(loc: IndexLocation) -> bool:
    """Whether what the index at ``loc`` says may be read before an engine
    opens it (the CLI's remembered file filter): any but a workspace index
    this machine cannot vouch for."""
    return loc.kind != "workspace" or made_here(loc.path) or held_elsewhere(loc.path)


def vouch(store: Store) -> None:
    """Record that mdseek made this index here (when it makes or adopts one)."""
    token = secrets.token_hex(16)
    store.set_meta(TOKEN_KEY, token)
    _record(store.path, token)


RECORD_EVERY = 1.0  # seconds: a burst of commits is recorded once, at its end
_FOLLOWERS: weakref.WeakSet[_Follower] = weakref.WeakSet()


class _Follower:
    """The record of one index kept current after its engine's commits: at once
    for the first in a second, else once when the burst is over (a reading pass
    commits once per file, and a record costs a few stat calls and a rename)."""

    def __init__(self, path: Path, token: str):
        self.path, self.token = path, token
        self.last = 0.0
        self.timer: threading.Timer | None = None
        self.lock = threading.Lock()
        _FOLLOWERS.add(self)

    def __call__(self) -> None:
        with self.lock:
            if self.timer is not None:
                return  # a record is due already
            if time.monotonic() - self.last < RECORD_EVERY:
                self.timer = threading.Timer(RECORD_EVERY, self.flush)
                self.timer.daemon = True
                self.timer.start()
                return
            self.last = time.monotonic()
        _record(self.path, self.token)

    def flush(self) -> None:
        with self.lock:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            self.last = time.monotonic()
        _record(self.path, self.token)


def flush_records() -> None:
    """Record now every index whose record waits (before ``os._exit``: the
    language and MCP servers end that way, without closing)."""
    for f in list(_FOLLOWERS):
        if f.timer is not None:
            f.flush()


def _follow(store: Store, token: str | None) -> None:
    """Keep the record current after each of this engine's commits, so it holds
    what mdseek last wrote however the process ends (with :func:`flush_records`
    before an ``os._exit``); a process killed in the middle of a write, or
    within a second of its last commit, leaves it stale (the next open reads
    the files again)."""
    if token:
        store.file.after_commit = _Follower(store.path, token)


def remember(path: Path) -> None:
    """Record the index at ``path`` as it is now, closed (a tool that wrote it
    with mdseek's own code, or a test that did, vouches for what it wrote)."""
    token = read_meta(path, TOKEN_KEY)
    if token:
        _record(path, token)


def _record(path: Path, token: str) -> None:
    """Write the record of ``path`` as its files are now (replaced whole, so a
    reader never sees half of one)."""
    entry = _entry(path, token)
    if entry is None:
        return
    tmp = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
    try:
        _mkdirs_private(entry.parent)
        fd = open_regular(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(fd, "wb") as fh:
            fh.write(state(path).encode("ascii") + b"\n")
        os.replace(tmp, entry)
    except OSError as exc:  # the next open adopts it again: slower, never unsafe
        log.warning("cannot record that mdseek made %s: %s", path, exc)
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


class Claim:
    """An engine's hold on a workspace index, for as long as it has it open: a
    shared ``flock`` on ``<index>.open``. An index another engine holds is in
    use by this user (it was made or adopted when that engine opened it), so it
    is never set aside under that engine; and adopting takes the exclusive
    lock, so two processes never adopt the same file at once. Without flock
    (Windows, some network file systems) nothing is held and every open decides
    alone."""

    def __init__(self, index: Path):
        self.index = index
        self.token: str | None = None  # set once the index is vouched for: recorded at close
        self.fd: int | None = None
        try:
            import fcntl  # noqa: F401 - POSIX only

            self.fd = open_regular(str(index) + ".open", os.O_RDWR | os.O_CREAT)
        except (ImportError, OSError) as exc:
            log.debug("no hold on %s: %s", index, exc)

    def _lock(self, how: int) -> bool:
        import fcntl

        if self.fd is None:
            return how & fcntl.LOCK_EX != 0  # alone, as far as anyone can tell
        try:
            fcntl.flock(self.fd, how)
            return True
        except BlockingIOError:
            return False
        except OSError as exc:  # a file system without flock
            log.debug("cannot lock %s.open: %s", self.fd, exc)
            return how & fcntl.LOCK_EX != 0

    def alone(self) -> bool:
        """Take the exclusive lock if no other engine holds the index (from a
        shared lock of ours: upgrade it, or lose it)."""
        import fcntl

        return self._lock(fcntl.LOCK_EX | fcntl.LOCK_NB)

    def share(self) -> None:
        """Hold the shared lock (waiting while another process adopts the index)."""
        import fcntl

        self._lock(fcntl.LOCK_SH)

    def close(self) -> None:
        """Let go of the index (after the engine closed its connections): the
        last engine to let go records the files as they are now; one that
        another engine still holds leaves the record to that one."""
        if self.token is not None:
            if self.alone() or self.alone():  # twice: two engines closing at once
                _record(self.index, self.token)
            self.token = None
        if self.fd is not None:
            os.close(self.fd)  # releases the lock
            self.fd = None


def open_index(
    loc: IndexLocation, open_store: Callable[[], Store]
) -> tuple[Store, str | None, Claim | None]:
    """The store of ``loc`` (``open_store`` opens it); when a workspace index
    was adopted just now, the one line that says so; the engine's hold on a
    workspace index (to close with the engine)."""
    if loc.kind != "workspace":
        return open_store(), None, None
    claim = Claim(loc.path)
    try:
        alone = claim.alone()
        if not alone:  # held: wait out an exclusive holder (an adopter, a probe), ask again
            claim.share()
            alone = claim.alone()  # only if nobody else holds it now
        if alone:
            old = None if made_here(loc.path) else _set_aside(loc.path)
            store = open_store()
            try:
                kept = _made_ours(store, old)
            except BaseException:
                store.close()
                raise
            claim.token = store.get_meta(TOKEN_KEY)
            _follow(store, claim.token)
            claim.share()
            return store, _said(loc.path, old, kept), claim
        # Another engine of this user has it open: it made or adopted it. Ours too.
        claim.share()  # (the failed upgrade let go of the shared lock)
        token = read_meta(loc.path, TOKEN_KEY)
        if token:
            _record(loc.path, token)
        claim.token = token
        store = open_store()
        _follow(store, token)
        return store, None, claim
    except BaseException:
        claim.close()
        raise


def _set_aside(path: Path) -> Path | None:
    """An index that may hold rows, renamed out of the way (with its -wal and
    -shm); None for nothing to distrust, or a file that is not an index at all
    (the store sets those aside itself, renamed, and says so)."""
    return move_aside(path, "adopting") if _holds_index(path) else None


def _made_ours(store: Store, old: Path | None) -> int:
    """The new store vouched for, with the old file's vectors (if any) copied
    for checking; how many (-1: the old file could not be read)."""
    if store.get_meta(TOKEN_KEY) is not None and old is None:
        return 0  # made here, and still so
    kept = store.vectors.take_foreign_vectors(old) if old is not None else 0
    vouch(store)
    if old is not None and kept >= 0:  # its text is in the files, its vectors copied
        for p in (old, *companions(old)[:3]):
            p.unlink(missing_ok=True)
    return kept


def _said(path: Path, old: Path | None, kept: int) -> str | None:
    if old is None:
        return None
    log.info("adopted %s: %d vectors kept for checking", path, kept)
    said = (
        f"the index {path} was not made by mdseek on this machine (or was changed since "
        "mdseek last closed it): its sections are read again from the files, and its "
        "vectors serve only texts the files hold"
    )
    if kept < 0:  # unreadable: kept, renamed, never deleted
        return f"{said} (none could be read; the old file is now {old.name})"
    return said


def _holds_index(path: Path) -> bool:
    """Whether ``path`` may hold an mdseek index's rows: an mdseek index (read
    through its -wal too), or a file that cannot be told apart from one. False
    for no file, an empty one, and a file SQLite calls damaged or that is
    another program's database (the store sets those aside, renamed)."""
    has_side = any(os.path.lexists(c) for c in companions(path)[:3])
    try:
        if os.lstat(path).st_size == 0 and not has_side:
            return False
    except FileNotFoundError:
        return has_side
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            guard(db)
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            db.close()
    except sqlite3.Error as exc:
        return not is_damage(exc)
    return app_id == APPLICATION_ID or SIGNATURE <= tables
