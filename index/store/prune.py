"""Cleaning the user cache: the indexes of folders that have been missing for a
long time.

A folder that is not there may be deleted, or only unmounted (a USB disk, a
network share) or moved; its index cost a full embedding to build. So an index
is removed only when its folder has been missing for :data:`MISSING_DAYS` days
in a row and no process holds its lock (another process embedding into it).
"Missing since" is mdseek's own record: the first time a prune finds the
folder missing it writes the time into the index's cache folder
(:data:`MISSING_SINCE`), and a prune that finds the folder again deletes it.
``mdseek prune`` says, for every index, what it removes or keeps and why
(``--dry-run``: what it would); the server and the CLI run the same rule
quietly once a day (:func:`prune_daily`).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from .location import (
    FILE_MODE,
    INDEX_FILENAME,
    IndexLocationError,
    _mkdirs_private,
    cache_root,
    open_regular,
)

log = logging.getLogger(__name__)

MISSING_DAYS = 30  # an index is removed after its folder has been missing this long
MISSING_SINCE = "missing-since"  # in an index's cache folder: when its folder was first missed
PRUNE_STAMP = ".last-prune"  # in the cache root: when the last automatic prune ran
DAY = 86400.0


@dataclass(frozen=True)
class CachedIndex:
    folder: Path  # <cache root>/<folder name>-<hash>
    root: str | None  # the folder it indexes (None: the index does not say)
    size: int  # bytes of every file in ``folder``

    @property
    def root_exists(self) -> bool:
        return self.root is not None and Path(self.root).is_dir()

    def missing_since(self) -> float | None:
        """When a prune first found its folder missing (None: never, or unreadable)."""
        try:
            fd = open_regular(self.folder / MISSING_SINCE, os.O_RDONLY)
            with os.fdopen(fd) as fh:
                return float(fh.read(100).strip())
        except (OSError, ValueError):
            return None

    @property
    def lock_file(self) -> Path:
        return self.folder / (INDEX_FILENAME + ".lock")


@dataclass(frozen=True)
class Verdict:
    index: CachedIndex
    remove: bool
    why: str  # one line: what the folder is, and why the index goes or stays


def cached_indexes() -> list[CachedIndex]:
    """Every index in the user cache, with the folder it indexes and its size."""
    from .file import read_meta

    top = cache_root()
    out = []
    try:
        folders = sorted(p for p in top.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    for d in folders:
        size = sum(f.lstat().st_size for f in d.iterdir() if f.is_file() and not f.is_symlink())
        out.append(CachedIndex(d, read_meta(d / INDEX_FILENAME, "root"), size))
    return out


def _in_use(c: CachedIndex) -> bool:
    """Whether another process holds the index's lock (it is embedding into it)."""
    from filelock import FileLock, Timeout

    if not c.lock_file.exists():
        return False
    lock = FileLock(str(c.lock_file), mode=FILE_MODE, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    except OSError:  # a file system without locks: nobody can hold one
        return False
    lock.release()
    return False


def review(now: float, days: float = MISSING_DAYS, record: bool = True) -> list[Verdict]:
    """What a prune does with every index of the cache, and why. ``record``:
    write (and clear) the "missing since" records; a dry run writes nothing."""
    out = []
    for c in cached_indexes():
        if c.root is None:
            out.append(Verdict(c, False, "the index does not say which folder it is for"))
            continue
        if c.root_exists:
            if record:
                _forget(c)
            out.append(Verdict(c, False, f"{c.root} exists"))
            continue
        since = c.missing_since()
        if since is None or since > now:
            since = now
            if record:
                _record(c, now)
        missing = int((now - since) // DAY)
        what = f"{c.root} missing for {missing} day{'' if missing == 1 else 's'}"
        if now - since < days * DAY:
            limit = f"{days:g} day{'' if days == 1 else 's'}"
            out.append(Verdict(c, False, f"{what}; removed after {limit} missing (and not in use)"))
        elif _in_use(c):
            out.append(Verdict(c, False, f"{what}, but in use (another process holds its lock)"))
        else:
            out.append(Verdict(c, True, what))
    return out


def _forget(c: CachedIndex) -> None:
    try:
        (c.folder / MISSING_SINCE).unlink(missing_ok=True)
    except OSError as exc:
        log.debug("cannot clear the missing record of %s: %s", c.root, exc)


def _record(c: CachedIndex, now: float) -> None:
    try:
        fd = open_regular(c.folder / MISSING_SINCE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{now}\n")
    except OSError as exc:
        log.debug("cannot record %s as missing: %s", c.root, exc)


def remove_cached(index: CachedIndex) -> None:
    """Delete one cache folder of mdseek's (its index and companions); never a
    link, never one whose lock another process holds (it is held meanwhile)."""
    from filelock import FileLock, Timeout

    if index.folder.is_symlink() or index.folder.parent != cache_root():
        raise IndexLocationError(f"{index.folder} is not an index folder of the user cache")
    lock = FileLock(str(index.lock_file), mode=FILE_MODE, thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise IndexLocationError(f"{index.folder} is in use") from None
    try:
        shutil.rmtree(index.folder)
    finally:
        lock.release()


def prune(
    now: float | None = None, days: float = MISSING_DAYS, dry_run: bool = False
) -> list[Verdict]:
    """Remove the indexes :func:`review` says to (none with ``dry_run``); the verdicts."""
    now = time.time() if now is None else now
    verdicts = review(now, days, record=not dry_run)
    if dry_run:
        return verdicts
    done = []
    for v in verdicts:
        if v.remove:
            try:
                remove_cached(v.index)
            except (OSError, IndexLocationError) as exc:
                v = Verdict(v.index, False, f"{v.why}, but it cannot be removed ({exc})")
        done.append(v)
    return done


def prune_daily(now: float | None = None) -> list[CachedIndex]:
    """:func:`prune`, quietly and at most once a day (a stamp file, so it costs
    one stat on most calls). Returns what was removed."""
    now = time.time() if now is None else now
    stamp = cache_root() / PRUNE_STAMP
    try:
        if now - stamp.stat().st_mtime < DAY:
            return []
    except FileNotFoundError:
        pass
    except OSError:
        return []
    try:
        _mkdirs_private(stamp.parent)
        stamp.touch()
        os.utime(stamp, (now, now))
        removed = [v.index for v in prune(now) if v.remove]
    except (OSError, IndexLocationError) as exc:
        log.debug("automatic prune stopped: %s", exc)
        return []
    for c in removed:
        log.debug("pruned %s (%s missing for %d days)", c.folder, c.root, MISSING_DAYS)
    return removed
