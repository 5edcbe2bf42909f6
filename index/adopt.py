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

"Made here": a random token in the index's meta, and an empty file in the user
cache (``<cache>/mdseek/vouched/``) named by a hash of the token and the index
file's device and inode. A copy of the file, a file extracted over it or one
carried to another machine fails the check; moving the folder within its file
system does not. A file the user made empty to ask for a workspace index holds
no rows: it is taken as it is.

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
from collections.abc import Callable
from pathlib import Path

from .location import (
    FILE_MODE,
    IndexLocation,
    IndexLocationError,
    _mkdirs_private,
    cache_root,
    companions,
    move_aside,
)
from .store import Store
from .store_file import APPLICATION_ID, SIGNATURE, guard, is_damage, read_meta

log = logging.getLogger(__name__)

TOKEN_KEY = "made_here"  # the meta row holding the index's token
LOCK_SECONDS = 120  # waiting for another process that is adopting the same index


def registry() -> Path:
    """``<user cache>/mdseek/vouched``: one empty file per index made here."""
    return cache_root().parent / "vouched"


def _entry(path: Path, token: str) -> Path | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    digest = hashlib.sha256(f"{st.st_dev}:{st.st_ino}:{token}".encode()).hexdigest()
    return registry() / digest


def made_here(path: Path) -> bool:
    """Whether the index file at ``path`` was made (or adopted) by mdseek on this
    machine, for this user, and is still that file."""
    token = read_meta(path, TOKEN_KEY)
    entry = _entry(path, token) if token else None
    # The entry's name is unforgeable without the token (random, and only in
    # the private index file), so who else can write the folder does not matter.
    return entry is not None and entry.is_file()


def vouch(store: Store) -> None:
    """Record that mdseek made this index here (when it makes or adopts one)."""
    token = secrets.token_hex(16)
    store.set_meta(TOKEN_KEY, token)
    entry = _entry(store.path, token)
    if entry is None:
        return
    try:
        _mkdirs_private(entry.parent)
        fd = os.open(entry, os.O_CREAT | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
        os.close(fd)
    except OSError as exc:  # the next open adopts it again: slower, never unsafe
        log.warning("cannot record that mdseek made %s: %s", store.path, exc)


def open_index(loc: IndexLocation, open_store: Callable[[], Store]) -> tuple[Store, str | None]:
    """The store of ``loc`` (``open_store`` opens it) and, when a workspace
    index was adopted just now, the one line that says so."""
    if loc.kind != "workspace" or made_here(loc.path):
        return open_store(), None
    from filelock import FileLock, Timeout

    lock = FileLock(str(loc.path) + ".lock", mode=FILE_MODE, thread_local=False)
    try:
        lock.acquire(timeout=LOCK_SECONDS)
    except Timeout:
        raise IndexLocationError(
            f"another process holds {lock.lock_file} while mdseek sets up {loc.path}; "
            "try again when it is done"
        ) from None
    try:
        if made_here(loc.path):  # another process adopted it meanwhile
            return open_store(), None
        # Nothing to distrust (no rows), or not an index at all (the store sets
        # it aside, renamed, and says so): what the store makes now is ours.
        old = move_aside(loc.path, "adopting") if _holds_index(loc.path) else None
        store = open_store()
        try:
            kept = store.take_foreign_vectors(old) if old is not None else 0
            vouch(store)
        except BaseException:
            store.close()
            raise
    finally:
        lock.release()
    if old is None:
        return store, None
    said = (
        f"the index {loc.path} was not made by mdseek on this machine: its sections are "
        "read again from the files, and its vectors serve only texts the files hold"
    )
    if kept < 0:  # unreadable: kept, renamed, never deleted
        return store, f"{said} (none could be read; the old file is now {old.name})"
    for p in (old, *companions(old)[:3]):  # its text is in the files, its vectors copied
        p.unlink(missing_ok=True)
    log.info("adopted %s: %d vectors kept for checking", loc.path, kept)
    return store, said


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
