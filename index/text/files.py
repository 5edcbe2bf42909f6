"""Which files of a workspace are indexed: include/exclude globs, symlinks, size.

Globs match the path relative to the root with ``/`` separators; ``**`` spans
any number of folders (``**/*.md`` matches ``a.md`` and ``x/y/a.md``), ``*`` and
``?`` stay inside one folder. Globs ignore case (``**/*.md`` also indexes
``NOTES.MD``; ``**/*.markdown`` indexes ``x.Markdown``), as on the file systems of
macOS and Windows. A symlink is followed only when its target is inside the
root and the target's own path (relative to the root) passes the include/exclude
filter too: ``leak.md -> .env`` or ``notes.md -> .git/config`` is never read
(and symlinked folders are not descended, so there is no cycle and no file is
seen twice). :func:`check_file` is the one check every reader of a folder's
files goes through (the index, the language server's features, the MCP tools),
and :func:`read_found` reads what it admitted.

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
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..settings import DEFAULT_INCLUDE, DEFAULT_MAX_FILE_SIZE
from .ignore import Ignores

log = logging.getLogger(__name__)

DEFAULT_EXCLUDE = ("**/.git/**", "**/node_modules/**", "**/.mdseek/**", "**/.venv/**")


def display_path(path: str) -> str:
    """``path`` as shown to people: bytes that are not UTF-8 become U+FFFD."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return os.fsencode(path).decode("utf-8", "replace")


MAX_GLOB_LENGTH = 1000  # characters: a longer glob is an error, not a pattern


class BadGlob(ValueError):
    """A glob that is not matched (too long); its message is one line for people."""


# Glob tokens; a glob is matched by simulating its automaton (a set of states
# per character), never by a backtracking regex: time grows with the path's
# length times the glob's, whatever the glob (``"*a"*14 + "x"`` took 8 s as a
# regex; Python's re, and the libraries that translate globs to it, backtrack).
_STAR, _GLOBSTAR, _GLOBSTAR_DIR, _ANY = "*", "**", "**/", "?"


class _Glob:
    """One compiled glob: tokens, and a lazily built table of state transitions."""

    __slots__ = ("tokens", "closure", "moves")

    def __init__(self, pattern: str):
        p = pattern.replace("\\", "/").lower()
        toks: list[str] = []
        i = 0
        while i < len(p):
            if p.startswith("**/", i):
                toks.append(_GLOBSTAR_DIR)
                i += 3
            elif p.startswith("**", i):
                toks.append(_GLOBSTAR)
                i += 2
            else:
                toks.append(p[i])  # "*", "?" or a literal character
                i += 1
        self.tokens = tuple(toks)
        m = len(toks)
        # States 0..m: "the first i tokens are matched"; m + 1 + i: inside the
        # i-th token "**/" (some characters read, waiting for its "/").
        # A star token can match nothing: state i also stands for state i + 1.
        closure = []
        for i in range(m + 1):
            j = i
            while j < m and toks[j] in (_STAR, _GLOBSTAR, _GLOBSTAR_DIR):
                j += 1
            closure.append(frozenset(range(i, j + 1)))
        self.closure = closure
        self.moves: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _step(self, states: frozenset[int], c: str) -> frozenset[int]:
        toks, m = self.tokens, len(self.tokens)
        out: set[int] = set()
        for s in states:
            if s > m:  # inside a "**/": any character, and "/" ends it
                out.add(s)
                if c == "/":
                    out |= self.closure[s - m]
                continue
            if s == m:
                continue
            t = toks[s]
            if t == _GLOBSTAR_DIR:
                out.add(m + 1 + s)
                if c == "/":
                    out |= self.closure[s + 1]
            elif t == _GLOBSTAR or (t == _STAR and c != "/"):
                out |= self.closure[s]
            elif t == c or (t == _ANY and c != "/"):
                out |= self.closure[s + 1]
        return frozenset(out)

    def match(self, text: str) -> bool:
        states = self.closure[0]
        moves = self.moves
        if len(moves) > 4096:  # bound the table a hostile path could grow
            moves.clear()
        for c in text.lower():
            nxt = moves.get((states, c))
            if nxt is None:
                nxt = moves[(states, c)] = self._step(states, c)
            if not nxt:
                return False
            states = nxt
        return len(self.tokens) in states


def check_glob(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used as a glob (one line), or None."""
    if len(pattern) > MAX_GLOB_LENGTH:
        return (
            f"a glob of {len(pattern):,} characters is over the {MAX_GLOB_LENGTH:,}-character limit"
        )
    return None


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> _Glob:
    why = check_glob(pattern)
    if why:
        raise BadGlob(why)
    return _Glob(pattern)


def matches(rel: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Whether ``rel`` matches any of the globs (case ignored; ``**`` spans folders,
    ``*`` and ``?`` stay inside one). BadGlob for a glob over the length limit."""
    return any(_compiled(p).match(rel) for p in patterns)


@dataclass(frozen=True)
class FileFilter:
    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    ignore_files: bool = True  # .gitignore, .ignore, .mdseekignore (ignore.py) leave files out

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
    real: Path | None = None  # what is read: the symlink's checked target, else ``path``

    @property
    def source(self) -> Path:
        return self.real or self.path


def relpath(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError, RuntimeError):  # outside, or a symlink loop
        return False


MAX_IGNORED_LISTED = 10_000  # entries of an ignored folder looked at to count its files


def ignored_why(root: Path, rel: str, flt: FileFilter) -> str | None:
    """Why the ignore files leave ``rel`` out ("ignored by .gitignore"), or
    None (also when the filter does not read ignore files)."""
    return Ignores(root.resolve()).why(rel) if flt.ignore_files else None


def _ignored_inside(folder: Path, rel_dir: str, flt: FileFilter, why: str, out: list) -> None:
    """The files the globs want inside an ignored folder, for the count."""
    seen = 0
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        base = relpath(folder, Path(dirpath))
        prefix = rel_dir + ("" if base == "." else "/" + base) + "/"
        dirnames[:] = [n for n in dirnames if not matches(prefix + n + "/\0", flt.exclude)]
        for name in filenames:
            if flt.wants(prefix + name):
                out.append((prefix + name, why))
        seen += len(filenames) + len(dirnames)
        if seen > MAX_IGNORED_LISTED:
            return


def scan(
    root: Path,
    flt: FileFilter,
    skipped: list[tuple[str, str]] | None = None,
    ignored: list[tuple[str, str]] | None = None,
) -> Iterator[FoundFile]:
    """Every file to index under ``root``; skipped files are logged (and appended
    to ``skipped`` as (relative path, reason)); ``ignored`` gets the files the
    globs want that an ignore file leaves out, with why (an ignored folder is
    not descended: its files are only counted, up to ``MAX_IGNORED_LISTED``)."""
    root = root.resolve()
    ignores = Ignores(root) if flt.ignore_files else None

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
            if ignores is not None and (why := ignores.folder_ignored(rel_dir[:-1])):
                log.debug("not entering %s: %s", display_path(rel_dir), why)
                if ignored is not None:
                    _ignored_inside(d / name, rel_dir[:-1], flt, why, ignored)
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = prefix + name
            found = _check(root, d / name, rel, flt, skip)
            if found is not None and ignores is not None and (why := ignores.why(rel)):
                if ignored is not None:
                    ignored.append((rel, why))
                continue
            if found is not None:
                yield found


def other_files(root: Path, flt: FileFilter, limit: int = 200_000) -> list[str]:
    """Workspace-relative paths of the folder's files that are not indexed
    (images, PDFs: what Obsidian's ``![[name.png]]`` names, wherever it sits),
    under :func:`scan`'s folder rules: excluded folders pruned, symlinked folders
    and files not followed; at most ``limit``."""
    root = root.resolve()
    ignores = Ignores(root) if flt.ignore_files else None
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        d = Path(dirpath)
        base = relpath(root, d)
        prefix = "" if base == "." else base + "/"
        dirnames[:] = [
            n
            for n in sorted(dirnames)
            if not matches(prefix + n + "/\0", flt.exclude)
            and not (d / n).is_symlink()
            and not (ignores is not None and ignores.folder_ignored(prefix + n))
        ]
        for name in sorted(filenames):
            rel = prefix + name
            if flt.wants(rel) or matches(rel, flt.exclude) or (d / name).is_symlink():
                continue
            if ignores is not None and ignores.why(rel):
                continue
            out.append(rel)
            if len(out) >= limit:
                return out
    return out


Attachment = Callable[[str], bool]  # a file a link may open that the filter does not include


def check_file(
    root: Path, p: Path, flt: FileFilter, skip=None, attachment: Attachment | None = None
) -> FoundFile | None:
    """A FoundFile for ``p`` if it may be read, else None (reason given to
    ``skip``): the one check before any byte of a folder's file is read. ``p``
    (absolute, or relative to ``root``) must lie inside the root through no
    symlinked folder, and pass the filter; a symlink, its target must too
    (inside the root, and its own relative path passing the filter), and be a
    regular file within the size limit. ``attachment``: names (a picture, a
    PDF) admitted although the filter does not include them, when it does not
    exclude them, whatever their size."""
    root = root.resolve()
    say = skip or (lambda r, why: log.info("skipping %s: %s", display_path(r), why))
    if p.is_absolute():
        try:
            rel = relpath(root, Path(os.path.normpath(p)))
        except ValueError:
            say(str(p), "outside the workspace")
            return None
    else:
        rel = Path(os.path.normpath(p)).as_posix()
    if rel == "." or rel == ".." or rel.startswith("../") or Path(rel).is_absolute():
        say(rel, "outside the workspace")
        return None
    # Every folder between the root and the file: the scan descends no symlinked
    # folder, so a file reached through one is not indexed either.
    folder = root
    for part in Path(rel).parts[:-1]:
        folder = folder / part
        if folder.is_symlink():
            say(rel, "inside a symlinked folder (not followed)")
            return None
    if flt.ignore_files and (why := Ignores(root).why(rel)):
        say(rel, why)
        return None
    return _check(root, root / rel, rel, flt, skip, attachment)


def _wanted(rel: str, flt: FileFilter, attachment: Attachment | None) -> bool:
    if flt.wants(rel):
        return True
    return attachment is not None and attachment(rel) and not matches(rel, flt.exclude)


def _check(
    root: Path, p: Path, rel: str, flt: FileFilter, skip=None, attachment: Attachment | None = None
) -> FoundFile | None:
    """check_file with ``root`` already resolved, ``p`` inside it through no
    symlinked folder and ``rel`` known (the scan's hot path)."""
    if not _wanted(rel, flt, attachment):
        return None
    skip = skip or (lambda r, why: log.info("skipping %s: %s", display_path(r), why))
    real = p
    if p.is_symlink():
        try:
            real = p.resolve(strict=True)
        except RuntimeError:  # Python 3.11-3.12 say a loop this way
            skip(rel, "symlink loop")
            return None
        except OSError as exc:
            why = "symlink loop" if exc.errno == errno.ELOOP else "broken symlink"
            skip(rel, f"{why} ({exc.strerror or exc})")
            return None
        if not inside(root, real):
            skip(rel, "symlink to a target outside the workspace")
            return None
        # The target's own path passes the filter too: `leak.md -> .env`, or a
        # link into .git/ or an excluded folder, is never read through the link.
        if not _wanted(relpath(root, real), flt, attachment):
            skip(rel, "symlink to a file this folder does not index")
            return None
    try:
        st = real.stat()
    except OSError as exc:
        skip(rel, f"cannot stat ({exc.strerror or exc})")
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    limited = flt.wants(rel) or (real is not p and flt.wants(relpath(root, real)))
    if limited and st.st_size > flt.max_file_size:
        skip(rel, f"{st.st_size:,} bytes is over the {flt.max_file_size:,}-byte limit")
        return None
    return FoundFile(rel, p, st.st_size, st.st_mtime_ns, st.st_ctime_ns, real)


def read_found(found: FoundFile, limit: int) -> bytes:
    """The bytes of a file :func:`check_file` admitted, read from its checked
    real path: no symlink swapped in since (``O_NOFOLLOW``), nothing but a
    regular file (a FIFO put there is not waited on), at most ``limit`` bytes
    (OSError beyond)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(found.source, flags)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"over the {limit:,}-byte limit")
    return data


def filter_spec(flt: FileFilter) -> dict:
    """What shapes an index, as the index remembers it (a meta row)."""
    return {
        "include": list(flt.include),
        "exclude": list(flt.exclude),
        "max_file_size": flt.max_file_size,
        "ignore_files": flt.ignore_files,
    }


def filter_from_spec(spec: Any) -> FileFilter | None:
    """A remembered filter back (None if the row is missing or not understood)."""
    try:
        return FileFilter(
            include=tuple(str(g) for g in spec["include"]),
            exclude=tuple(str(g) for g in spec["exclude"]),
            max_file_size=int(spec["max_file_size"]),
            ignore_files=bool(spec.get("ignore_files", True)),
        )
    except (TypeError, KeyError, ValueError):
        return None
