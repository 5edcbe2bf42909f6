"""Which files of a workspace are indexed: include/exclude globs, symlinks, size.

Globs match the path relative to the root with ``/`` separators; ``**`` spans
any number of folders (``**/*.md`` matches ``a.md`` and ``x/y/a.md``), ``*`` and
``?`` stay inside one folder. Globs ignore case (``**/*.md`` also indexes
``NOTES.MD``; ``**/*.markdown`` indexes ``x.Markdown``), as on the file systems of
macOS and Windows. A symlink is followed only when its target is inside the
root (and symlinked folders are not descended, so there is no cycle and no file
is seen twice).

Size limit (a policy, not a crutch: chunking is linear in any input): a file
over ``max_file_size`` bytes (default 5 MB, ``--max-file-size`` or the
``maxFileSize`` setting) is skipped with one log line saying so; a text that
large is a data dump or a log more often than notes.

Paths are ``str`` as ``os`` gives them: a name that is not valid UTF-8 carries
surrogate escapes (``os.fsdecode``), so it still opens; ``display_path`` shows it
with U+FFFD for the bad bytes.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_INCLUDE = ("**/*.md", "**/*.markdown")
DEFAULT_EXCLUDE = ("**/.git/**", "**/node_modules/**", "**/.mdseek/**", "**/.venv/**")
DEFAULT_MAX_FILE_SIZE = 5_000_000


def display_path(path: str) -> str:
    """``path`` as shown to people: bytes that are not UTF-8 become U+FFFD."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "replace")


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    p = pattern.replace("\\", "/")
    while i < len(p):
        if p.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif p.startswith("**", i):
            out.append(".*")
            i += 2
        elif p[i] == "*":
            out.append("[^/]*")
            i += 1
        elif p[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(p[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.IGNORECASE)


def matches(rel: str, patterns: tuple[str, ...] | list[str]) -> bool:
    return any(glob_regex(p).match(rel) for p in patterns)


@dataclass(frozen=True)
class FileFilter:
    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    max_file_size: int = DEFAULT_MAX_FILE_SIZE

    def wants(self, rel: str) -> bool:
        # A folder pattern like **/.git/** must also exclude .git itself's files.
        return matches(rel, self.include) and not matches(rel, self.exclude)


@dataclass(frozen=True)
class FoundFile:
    rel: str  # posix path relative to the root
    path: Path  # absolute path (inside the root)
    size: int
    mtime_ns: int
    ctime_ns: int = 0  # changes with permissions too (a file made readable again)


def relpath(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError, RuntimeError):  # outside, or a symlink loop
        return False


def scan(
    root: Path, flt: FileFilter, skipped: list[tuple[str, str]] | None = None
) -> Iterator[FoundFile]:
    """Every file to index under ``root``; skipped files are logged (and appended
    to ``skipped`` as (relative path, reason))."""
    root = root.resolve()

    def skip(rel: str, why: str) -> None:
        log.info("skipping %s: %s", display_path(rel), why)
        if skipped is not None:
            skipped.append((rel, why))

    def walk_error(exc: OSError) -> None:
        where = relpath(root, Path(exc.filename)) if exc.filename else "."
        skip(where + "/", f"cannot list ({exc.strerror or exc})")

    for dirpath, dirnames, filenames in os.walk(root, onerror=walk_error, followlinks=False):
        d = Path(dirpath)
        base = relpath(root, d)
        prefix = "" if base == "." else base + "/"
        keep = []
        for name in sorted(dirnames):
            rel_dir = relpath(root, d / name) + "/"
            # Prune a folder when an exclude glob covers everything in it (e.g. **/.git/**).
            if matches(rel_dir + "\0", flt.exclude):
                continue
            if (d / name).is_symlink():
                skip(rel_dir, "symlinked folder (not followed)")
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = prefix + name
            if not flt.wants(rel):
                continue
            found = _check(root, d / name, rel, flt, skip)
            if found is not None:
                yield found


def check_file(root: Path, p: Path, flt: FileFilter, skip=None) -> FoundFile | None:
    """A FoundFile for ``p`` if it may be indexed, else None (reason given to ``skip``)."""
    root = root.resolve()
    rel = relpath(root, p) if p.is_absolute() else p.as_posix()
    return _check(root, p, rel, flt, skip)


def _check(root: Path, p: Path, rel: str, flt: FileFilter, skip=None) -> FoundFile | None:
    """check_file with ``root`` already resolved and ``rel`` known (the scan's hot path)."""
    skip = skip or (lambda r, why: log.info("skipping %s: %s", display_path(r), why))
    if p.is_symlink():
        try:
            target = p.resolve(strict=True)
        except RuntimeError:  # Python 3.11-3.12 say a loop this way
            skip(rel, "symlink loop")
            return None
        except OSError as exc:
            why = "symlink loop" if exc.errno == errno.ELOOP else "broken symlink"
            skip(rel, f"{why} ({exc.strerror or exc})")
            return None
        if not inside(root, target):
            skip(rel, "symlink to a target outside the workspace")
            return None
    try:
        st = p.stat()
    except OSError as exc:
        skip(rel, f"cannot stat ({exc.strerror or exc})")
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    if st.st_size > flt.max_file_size:
        skip(rel, f"{st.st_size:,} bytes is over the {flt.max_file_size:,}-byte limit")
        return None
    return FoundFile(rel, p, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
