"""Ignore files: ``.gitignore``, ``.ignore`` and ``.mdseekignore``, nested, with
negation, read with ``pathspec`` as git reads them (:class:`Ignores`).

Each folder's three files are read together, in that order, so a later line
wins over an earlier one (an ``.mdseekignore`` line over a ``.gitignore``
line, as ripgrep ranks ``.ignore`` over ``.gitignore``); a deeper folder's
files win over a shallower folder's; a file inside an ignored folder stays
ignored whatever a deeper ``!pattern`` says (git never looks inside an
ignored folder). Paths are matched relative to the folder that holds the
ignore file, case as written. Only files inside the workspace folder count:
an ignore file above it, ``.git/info/exclude`` and git's global excludes are
not read.

Bad input stays cheap: a line over ``MAX_LINE`` characters is left out; a
glob's ``*`` runs inside one path segment are matched without backtracking
(:class:`_LinearPattern`: every ``*`` but a segment's last one takes its
earliest match, which is exact for globs), so ``*a*a*a*a*b`` against a long
name costs what ``*b`` does; a file of 10,000 lines costs 10,000 patterns a
path, in the regex engine's C loop for a path no line matches
(tests/test_ignore_files.py times both). An unreadable ignore file is
as if absent. The rules a folder's files make are kept while the files'
sizes and times stay the same.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

log = logging.getLogger(__name__)

IGNORE_FILES = (".gitignore", ".ignore", ".mdseekignore")  # later lines win
MAX_LINE = 1000  # characters: a longer line is left out
MAX_BYTES = 5_000_000  # an ignore file's bytes read at most
_CACHED = 4096  # folders whose rules are kept (per process)
_JOINED = 200  # patterns joined into one regex for the "does any match?" check


def _split_stars(seg: str) -> list[str]:
    """A segment glob cut at its ``*`` (not escaped, not inside ``[...]``)."""
    pieces, cur, i, n = [], [], 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "\\" and i + 1 < n:
            cur.append(seg[i : i + 2])
            i += 2
        elif c == "[":
            j = i + 1
            if j < n and seg[j] in "!^":
                j += 1
            if j < n and seg[j] == "]":
                j += 1
            while j < n and seg[j] != "]":
                j += 1
            if j < n:  # a whole bracket expression
                cur.append(seg[i : j + 1])
                i = j + 1
            else:  # no closing bracket: pathspec's own rule applies
                cur.append(c)
                i += 1
        elif c == "*":
            pieces.append("".join(cur))
            cur = []
            i += 1
        else:
            cur.append(c)
            i += 1
    pieces.append("".join(cur))
    return pieces


class _LinearPattern(GitIgnoreSpecPattern):
    """pathspec's gitignore pattern, with a segment's ``*`` runs as atomic,
    lazy groups: ``A*B*C*D`` becomes ``A(?>[^/]*?B)(?>[^/]*?C)[^/]*D``. Taking
    each middle piece's earliest place never loses a match (the rest of the
    segment only grows), and nothing is tried twice: linear in the name."""

    __slots__ = ()

    @staticmethod
    def _translate_segment_glob(pattern, range_error):  # type: ignore[no-untyped-def]
        base = GitIgnoreSpecPattern._translate_segment_glob
        pieces = _split_stars(pattern)
        if len(pieces) <= 2:  # at most one star: no backtracking to speak of
            return base(pattern, range_error)
        tr = [base(p, range_error) if p else "" for p in pieces]
        middle = "".join(f"(?>[^/]*?{t})" for t in tr[1:-1])
        return tr[0] + middle + "[^/]*" + tr[-1]


@dataclass(frozen=True)
class _Rules:
    """One folder's ignore files made into one spec; ``sources[i]``: the file
    whose line made pattern ``i``; ``any_of``: the patterns' regexes joined a
    few hundred at a time, so a path no pattern matches (most paths) is told
    in one pass of the regex engine instead of a Python loop over every line."""

    spec: GitIgnoreSpec
    sources: tuple[str, ...]
    any_of: tuple[re.Pattern[str], ...] = ()

    def matches_any(self, path: str) -> bool:
        return not self.any_of or any(r.match(path) for r in self.any_of)


def _joined(patterns: list[_LinearPattern]) -> tuple[re.Pattern[str], ...]:
    if len(patterns) < _JOINED // 4:
        return ()
    try:
        texts = [
            "(?:" + p.regex.pattern.replace("(?P<ps_d>/)", "/") + ")"
            for p in patterns
            if p.regex is not None
        ]
        return tuple(
            re.compile("|".join(texts[i : i + _JOINED])) for i in range(0, len(texts), _JOINED)
        )
    except (AttributeError, TypeError, re.error):  # another pathspec's insides: no shortcut
        return ()


def _stamp(folder: Path) -> tuple:
    out = []
    for name in IGNORE_FILES:
        try:
            st = os.stat(folder / name)
            out.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            continue
    return tuple(out)


def _read_rules(folder: Path, stamp: tuple) -> _Rules | None:
    patterns: list[_LinearPattern] = []
    sources: list[str] = []
    for name, *_ in stamp:
        try:
            with open(folder / name, "rb") as fh:
                data = fh.read(MAX_BYTES)
        except OSError:
            continue
        text = data.decode("utf-8", "replace").lstrip("\ufeff")
        for line in text.splitlines():
            if len(line) > MAX_LINE:
                log.info("%s: a line of %d characters left out", folder / name, len(line))
                continue
            try:
                pattern = _LinearPattern(line)
            except ValueError:  # what git would not read either
                continue
            if pattern.include is not None:  # not a comment or a blank line
                patterns.append(pattern)
                sources.append(name)
    if not patterns:
        return None
    return _Rules(GitIgnoreSpec(patterns), tuple(sources), _joined(patterns))


_lock = threading.Lock()
_cache: dict[Path, tuple[tuple, _Rules | None]] = {}


def rules_of(folder: Path) -> _Rules | None:
    """The rules ``folder``'s ignore files make (None: no such file), kept
    while the files' sizes and times stay the same."""
    stamp = _stamp(folder)
    if not stamp:
        return None
    with _lock:
        got = _cache.get(folder)
    if got is not None and got[0] == stamp:
        return got[1]
    rules = _read_rules(folder, stamp)
    with _lock:
        if len(_cache) >= _CACHED:
            _cache.clear()
        _cache[folder] = (stamp, rules)
    return rules


class Ignores:
    """What a workspace folder's ignore files leave out. One object serves one
    scan or one check: it reads each folder's rules once and remembers each
    folder's verdict, so make a new one to see the files as they are now."""

    def __init__(self, root: Path):
        self.root = root
        self._folders: dict[str, str | None] = {}  # rel folder -> why it is ignored
        self._rules: dict[tuple[str, ...], _Rules | None] = {}  # each folder's, stat'ed once

    def _rules_of(self, parts: tuple[str, ...]) -> _Rules | None:
        if parts not in self._rules:
            self._rules[parts] = rules_of(self.root.joinpath(*parts))
        return self._rules[parts]

    def why(self, rel: str, is_dir: bool = False) -> str | None:
        """Why the workspace-relative ``rel`` is ignored ("ignored by
        docs/.gitignore"), or None."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            why = self._folder("/".join(parts[:i]))
            if why:
                return why
        return self._match(parts, is_dir)

    def folder_ignored(self, rel_dir: str) -> str | None:
        """:meth:`why` for a folder whose parents a walk found not ignored."""
        return self._folder(rel_dir, parents_known=True)

    def _folder(self, rel_dir: str, parents_known: bool = False) -> str | None:
        if rel_dir in self._folders:
            return self._folders[rel_dir]
        parts = rel_dir.split("/")
        why = None
        if not parents_known:
            for i in range(1, len(parts)):
                why = self._folder("/".join(parts[:i]))
                if why:
                    break
        why = why or self._match(parts, True)
        self._folders[rel_dir] = why
        return why

    def _match(self, parts: list[str], is_dir: bool) -> str | None:
        for depth in range(len(parts) - 1, -1, -1):
            base = parts[:depth]
            rules = self._rules_of(tuple(base))
            if rules is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            if not rules.matches_any(sub):
                continue
            res = rules.spec.check_file(sub)
            if res.include is None or res.index is None:
                continue
            if not res.include:  # a "!pattern": not ignored
                return None
            where = "/".join(base + [rules.sources[res.index]])
            return f"ignored by {where}"
        return None
