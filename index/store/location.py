"""Where a workspace's index lives, and keeping it there and private.

Where (first that applies):
  explicit   ``--db`` / ``MDSEEK_INDEX`` / the ``indexPath`` setting
  workspace  ``<root>/.mdseek/index.sqlite`` if that file already exists (indexes
             made before the cache location, or a user who wants it there)
             and mdseek wrote it for this user (see below)
  cache      ``<user cache>/mdseek/indexes/<folder name>-<hash of the root>/index.sqlite``
             (``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux, ``~/Library/Caches`` on
             macOS, ``%LOCALAPPDATA%`` on Windows): nothing in the user's folder, so
             a synced notes folder never syncs (and conflicts) a live SQLite WAL.

Staying there: the index file, its ``-wal``/``-shm``/``-journal``/``.lock``
companions and the folder mdseek made for them must not be symlinks (an index
written through a link lands outside where the user thinks it is, or overwrites
the file the link points to): :func:`prepare` refuses them with
:class:`IndexLocationError`, naming the path.

Trusted: a workspace index that mdseek did not write for this user (owned by
another user, or readable/writable by others, as a clone leaves it) is not
used: the folder is indexed into the cache, with one notice. Its rows could
hold text that is not in the files. One that passes (an archive extracted by
the user leaves 0700/0600 and the user as owner) is still not adopted as it
is unless mdseek made it on this machine: :mod:`adopt` sets it aside and reads
the files again. An explicit index file owned by another user or writable by
others is refused.

Plain files: a FIFO, socket or device planted where mdseek keeps the index or
one of its companions is never opened to wait on: :func:`prepare` renames it
out of the way (``<name>.not-a-file-<time>``, one log line), and every file
mdseek opens beside an index goes through :func:`open_regular`
(``O_NONBLOCK``, ``O_NOFOLLOW``, a regular file or an OSError).

Private: the index holds the full text of the notes, so its folders are created
0700 and its files 0600 (SQLite gives ``-wal``/``-shm`` the main file's mode).
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

WORKSPACE_DIRNAME = ".mdseek"
INDEX_FILENAME = "index.sqlite"
COMPANIONS = ("-wal", "-shm", "-journal", ".lock", ".open")  # .open: see adopt.py
DIR_MODE = 0o700
FILE_MODE = 0o600


class IndexFileError(RuntimeError):
    """The index file cannot be used (not an mdseek index, newer schema, ...)."""


class IndexLocationError(IndexFileError):
    """The index would be read or written somewhere it must not be (a symlink)."""


@dataclass(frozen=True)
class IndexLocation:
    path: Path  # the SQLite file
    kind: str  # "explicit", "workspace" or "cache"
    own_dir: Path | None  # the folder mdseek made for it (None for an explicit path)
    notice: str = ""  # why the index is not where it was found (one line), if so

    @property
    def owned(self) -> bool:
        """True when the file sits in mdseek's own folder: whatever is there
        that is not a usable index may be moved aside and rebuilt."""
        return self.own_dir is not None


def cache_root() -> Path:
    """``<user cache>/mdseek/indexes``."""
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mdseek", appauthor=False)) / "indexes"


def cache_dirname(root: Path) -> str:
    """``<folder name>-<12 hex of the root path>``: readable, unique per root."""
    digest = hashlib.sha256(os.fsencode(str(root))).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-.")[:40] or "root"
    return f"{name}-{digest}"


def not_ours(path: Path, mask: int = 0o077) -> str | None:
    """Why an existing file or folder cannot have been written by mdseek for this
    user (mdseek makes them 0600/0700, owned by the user; a clone or an archive
    leaves 0644/0755), or None. A missing path or a symlink is for :func:`prepare`."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return None
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"{path} is owned by another user"
    if st.st_mode & mask:
        what = "readable or writable" if mask & 0o044 else "writable"
        return f"{path} is {what} by others (mode {st.st_mode & 0o777:o})"
    return None


def locate(root: Path, explicit: str | Path | None = None) -> IndexLocation:
    """Where the index of ``root`` (a resolved folder) lives; creates nothing.

    A workspace index that mdseek did not write for this user (:func:`not_ours`)
    is never trusted for its content, which a stranger may have crafted (text that
    is not in the files, planted vectors): the folder is indexed into the user
    cache instead, and ``notice`` says so. An explicit index file that others
    could have written is refused (IndexLocationError)."""
    cache = cache_root() / cache_dirname(root)
    in_cache = IndexLocation(cache / INDEX_FILENAME, "cache", cache)
    if explicit is not None and str(explicit) != "":
        p = Path(os.path.abspath(Path(explicit).expanduser()))
        # The folder may be reached through a link the user chose; the file itself never.
        loc = IndexLocation(p.parent.resolve() / p.name, "explicit", None)
        # The user chose it: theirs, and nobody else may have written it.
        if why := not_ours(loc.path, 0o022):
            raise IndexLocationError(
                f"{why}: mdseek does not use an index others could have written "
                "(chmod go-w it, or choose another index file with --db / MDSEEK_INDEX)"
            )
        return loc
    else:
        own = root / WORKSPACE_DIRNAME
        if not (own.is_symlink() or os.path.lexists(own / INDEX_FILENAME)):
            return in_cache
        loc = IndexLocation(own / INDEX_FILENAME, "workspace", own)
        if own.is_symlink() or loc.path.is_symlink():
            return loc  # refused by prepare, naming the link
        why = not_ours(own) or not_ours(loc.path)
    if why is None:
        return loc
    notice = f"not using the index {loc.path}: {why}; indexing into {in_cache.path} instead"
    return IndexLocation(in_cache.path, "cache", cache, notice)


def _refuse_link(p: Path, what: str) -> None:
    if p.is_symlink():
        try:
            target = os.readlink(p)
        except OSError:
            target = "?"
        raise IndexLocationError(
            f"{p} is a symlink (to {target}); mdseek does not follow links for its {what}: "
            "remove the link, or choose another index file with --db / MDSEEK_INDEX"
        )


def _mkdirs_private(folder: Path) -> None:
    """Create ``folder`` and any missing parents as 0700 (existing ones are left alone)."""
    missing = []
    p = folder
    while not p.exists() and not p.is_symlink():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass


def open_regular(path: Path | str, flags: int, mode: int = FILE_MODE) -> int:
    """``os.open`` for a file mdseek keeps beside an index (a lock, a record):
    never through a symlink, never waiting on a FIFO or a device put there
    (opened non-blocking, then blocking again), a regular file or OSError."""
    extra = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags | extra, mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def odd_file(p: Path) -> bool:
    """Whether something that is neither a regular file nor a symlink (a FIFO,
    a socket, a device, a folder) sits at ``p``."""
    try:
        m = os.lstat(p).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(m) or stat.S_ISLNK(m))


def _set_aside_odd(p: Path, main: bool, owned: bool) -> None:
    if not odd_file(p):
        return
    if main and not owned:
        raise IndexLocationError(
            f"{p} is not a regular file: choose another index file with --db / MDSEEK_INDEX"
        )
    if main:  # with its -wal and -shm, which belong to no index now
        dest = move_aside(p, "not-a-file")
    else:
        dest = p.with_name(f"{p.name}.not-a-file-{time.strftime('%Y%m%d-%H%M%S')}")
        os.replace(p, dest)
    log.warning("%s is not a regular file: moved aside to %s", p, dest.name)


def prepare(loc: IndexLocation) -> None:
    """Check the location (no symlinks; a FIFO or device at the index's paths
    moved aside) and create its folder, private. Raises IndexLocationError, or
    OSError if the folder cannot be made."""
    if loc.own_dir is not None:
        _refuse_link(loc.own_dir, "index folder")
    for p in (loc.path, *companions(loc.path)):
        _refuse_link(p, "index")
        _set_aside_odd(p, p == loc.path, loc.owned)
    folder = loc.path.parent
    _mkdirs_private(folder)
    if loc.own_dir is not None:
        _refuse_link(loc.own_dir, "index folder")  # again: nothing swapped in meanwhile
        if (folder.stat().st_mode & 0o777) != DIR_MODE:
            try:
                os.chmod(folder, DIR_MODE)
            except OSError as exc:
                log.warning("cannot make %s private: %s", folder, exc)
    if loc.kind == "workspace":
        gi = folder / ".gitignore"
        if not gi.exists() and not gi.is_symlink():
            gi.write_text("# mdseek's index; safe to delete\n*\n")


def companions(path: Path) -> list[Path]:
    return [path.with_name(path.name + s) for s in COMPANIONS]


def create_private(path: Path) -> None:
    """Create ``path`` empty and 0600 if it does not exist (never through a link).
    SQLite then gives its -wal and -shm the same mode."""
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.close(os.open(path, flags, FILE_MODE))
    except FileExistsError:
        _refuse_link(path, "index")


def make_private(*paths: Path) -> None:
    for p in paths:
        try:
            if not p.is_symlink() and p.exists() and (p.stat().st_mode & 0o777) != FILE_MODE:
                os.chmod(p, FILE_MODE)
        except OSError as exc:  # someone else's file (an explicit --db): leave it
            log.debug("cannot chmod %s: %s", p, exc)


def move_aside(path: Path, why: str) -> Path:
    """Rename an unusable index (and its -wal/-shm) to ``<name>.<why>-<time>``;
    never deletes anything. Returns the new path of the main file."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    n = 0
    while True:
        dest = path.with_name(f"{path.name}.{why}-{stamp}" + (f"-{n}" if n else ""))
        if not os.path.lexists(dest):
            break
        n += 1
    os.replace(path, dest)
    for suffix in ("-wal", "-shm", "-journal"):
        side = path.with_name(path.name + suffix)
        if os.path.lexists(side):
            os.replace(side, dest.with_name(dest.name + suffix))
    return dest
