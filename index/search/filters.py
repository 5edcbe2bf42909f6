"""Filters on a search's notes: tags and front-matter fields, one grammar for
every front end (the CLI's ``--tag`` and ``--where``, ``mdseek/search``'s and
MCP ``search``'s ``tag`` and ``where``, a ``#tag`` or ``field=value`` word
leading a workspace/symbol query).

A term is one of:

- ``#runbook``: the note has the tag (in its text or its front matter's
  ``tags:``), or a tag under it: ``#area`` matches ``#area/sub`` too, and
  ``#area/sub`` matches ``#area/sub/x``; case ignored;
- ``field=value`` / ``field!=value``: a front-matter field equals (or not)
  the value, case ignored; a list field matches when any element does;
- ``field~value``: the field contains the value (case ignored; any element
  of a list);
- ``field<value``, ``<=``, ``>``, ``>=``: numbers as numbers, dates (YAML
  dates, or text written ``YYYY-MM-DD`` with an optional time) as dates;
  a value of another kind cannot be compared, and the answer says so;
- ``path=GLOB`` / ``path!=GLOB``: the note's path passes the glob as a
  ``--path`` glob does (the engine applies them with the request's own).

Every term must hold (AND). A field no note of the folder has is not an
error: the answer is empty, with a note naming the fields there are. Filters
choose among the notes the index holds and never change it.

Pure: what a note holds comes in as :func:`props_of`'s JSON (the documents
table's ``props`` column), read by the store.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")

OPS = ("!=", "<=", ">=", "=", "~", "<", ">")  # longest first
_FIELD = re.compile(r"[A-Za-z_][\w.-]*")
_TAG = re.compile(r"#?([\w/-]+)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?")
MAX_TERMS = 32
MAX_TERM_CHARS = 200


class BadFilter(ValueError):
    """A filter term that cannot be read; ``str()`` is the one-line message."""


@dataclass(frozen=True)
class Test:
    """One front-matter test: ``field`` ``op`` ``value`` (field names ignore case)."""

    field: str
    op: str
    value: str

    def __str__(self) -> str:
        return f"{self.field}{self.op}{self.value}"


@dataclass(frozen=True)
class Filter:
    """Tags (lower case, without ``#``), field tests and path globs (``rg -g``
    style, ``!`` leaves out: ``path=GLOB`` / ``path!=GLOB`` terms), all of
    which must hold."""

    tags: tuple[str, ...] = ()
    tests: tuple[Test, ...] = ()
    paths: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.tags or self.tests or self.paths)

    @property
    def on_notes(self) -> bool:
        """Whether it asks about a note's tags or fields (paths need no reading)."""
        return bool(self.tags or self.tests)

    def __str__(self) -> str:
        paths = [f"path!={g[1:]}" if g.startswith("!") else f"path={g}" for g in self.paths]
        return " ".join([f"#{t}" for t in self.tags] + [str(t) for t in self.tests] + paths)

    @classmethod
    def make(cls, tags: Iterable[str] = (), where: Iterable[str] = ()) -> Filter:
        """From tags (``runbook`` or ``#runbook``) and ``field OP value`` terms;
        BadFilter with one line for a term that cannot be read."""
        tag_list, tests, paths = [], [], []
        for raw in tags:
            tag_list.append(_tag(raw))
        for raw in where:
            term = raw.strip()
            if term.startswith("#"):
                tag_list.append(_tag(term))
                continue
            t = _test(term)
            if t.field != "path":
                tests.append(t)
            elif t.op in ("=", "!="):
                paths.append(("!" if t.op == "!=" else "") + t.value)
            else:
                raise BadFilter(f"bad filter {term[:60]!r}: path takes = or != and a glob")
        if len(tag_list) + len(tests) + len(paths) > MAX_TERMS:
            raise BadFilter(f"at most {MAX_TERMS} filter terms")
        return cls(
            tuple(dict.fromkeys(tag_list)), tuple(dict.fromkeys(tests)), tuple(dict.fromkeys(paths))
        )

    def select(self, props: Mapping[str, str | None]) -> tuple[set[str], list[str]]:
        """The notes (paths) of ``props`` (path -> :func:`props_of`'s JSON) that
        pass, and notes for people: a field no note has, a value that cannot
        be compared."""
        facts = {p: _load(raw) for p, raw in props.items()}
        known = {k for tags, fields in facts.values() for k in fields}
        notes = []
        unread = sum(1 for raw in props.values() if raw is None)
        if unread:  # an index from before filters, not yet read again
            notes.append(
                f"{unread} of {len(props)} notes not yet read for filters "
                "(the index is being brought up to date)"
            )
        missing = [t.field for t in self.tests if t.field.lower() not in known]
        if missing:
            there = ", ".join(sorted(known)[:12]) or "none"
            notes.append(
                f"no note has the field {', '.join(dict.fromkeys(missing))} "
                f"(fields in this folder: {there})"
            )
            return set(), notes
        out = set()
        cannot: dict[str, str] = {}
        for path, (tags, fields) in facts.items():
            if not all(_has_tag(tags, t) for t in self.tags):
                continue
            if all(_holds(fields, t, cannot) for t in self.tests):
                out.add(path)
        notes += [f"{term}: {why}" for term, why in cannot.items()]
        return out, notes


NO_FILTER = Filter()


def _tag(raw: str) -> str:
    m = _TAG.fullmatch(raw.strip())
    if not m or len(raw) > MAX_TERM_CHARS:
        raise BadFilter(f"bad tag {raw[:60]!r}: give a tag such as runbook, #runbook or #area/sub")
    return m.group(1).strip("/").lower()


def _test(term: str) -> Test:
    if len(term) > MAX_TERM_CHARS:
        raise BadFilter(f"a filter term of {len(term)} characters is over {MAX_TERM_CHARS}")
    m = _FIELD.match(term)
    rest = term[m.end() :].lstrip() if m else ""
    op = next((o for o in OPS if rest.startswith(o)), None)
    if not m or op is None or not rest[len(op) :].strip():
        raise BadFilter(
            f"bad filter {term[:60]!r}: write field=value, field~text, field!=value, "
            "field<value or field>value (e.g. status=published, owner~ops, date>=2024-01-01)"
        )
    return Test(m.group(0).lower(), op, rest[len(op) :].strip())


def split_query(text: str) -> tuple[Filter, str]:
    """A query's leading filter words (``#runbook``, ``status=published``) and
    the rest: ``#runbook restart the database`` -> (#runbook, "restart the
    database"). Words that do not read as a filter end the filter part."""
    words = text.split()
    taken: list[str] = []
    for w in words:
        if w.startswith("#") and _TAG.fullmatch(w) and len(w) > 1:
            taken.append(w)
        elif not w.startswith("#") and _FIELD.match(w) and any(o in w for o in OPS):
            try:
                _test(w)
            except BadFilter:
                break
            taken.append(w)
        else:
            break
    if not taken:
        return Filter(), text
    return Filter.make(where=taken), " ".join(words[len(taken) :])


# -- what a note holds ----------------------------------------------------------------


def _plain(v: Any, depth: int = 0) -> Any:
    """A front-matter value as JSON: dates as ISO text, other objects as text."""
    if depth > 8:
        return None
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, dt.date | dt.datetime):
        return v.isoformat()
    if isinstance(v, list | tuple | set):
        return [_plain(x, depth + 1) for x in list(v)[:1000]]
    if isinstance(v, dict):
        return {str(k): _plain(x, depth + 1) for k, x in list(v.items())[:200]}
    return str(v)


def props_of(front_matter: Mapping[str, Any], tags: Sequence[str]) -> str:
    """What a filter reads of a note, as the index stores it: its tags (lower
    case, once each) and its front matter's fields (keys lower case)."""
    fields = {str(k).lower(): _plain(v) for k, v in front_matter.items()}
    text = json.dumps(
        {"tags": sorted({t.lower() for t in tags}), "fields": fields},
        ensure_ascii=False,
        sort_keys=True,
    )
    # YAML escapes can spell a lone surrogate ("\ud800"), which SQLite cannot store.
    return _SURROGATE.sub("\ufffd", text)


def _load(raw: str | None) -> tuple[list[str], dict[str, Any]]:
    try:
        got = json.loads(raw) if raw else {}
    except ValueError:
        got = {}
    if not isinstance(got, dict):
        return [], {}
    tags = [str(t) for t in got.get("tags") or []]
    fields = got.get("fields")
    return tags, fields if isinstance(fields, dict) else {}


def _has_tag(tags: list[str], want: str) -> bool:
    return any(t == want or t.startswith(want + "/") for t in tags)


def _values(v: Any) -> list[Any]:
    return list(v) if isinstance(v, list) else [v]


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    if isinstance(v, dict | list):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def _number(s: Any) -> float | None:
    if isinstance(s, bool):
        return None
    if isinstance(s, int | float):
        return float(s)
    try:
        f = float(str(s).strip())
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def _date(s: Any) -> dt.datetime | None:
    if not isinstance(s, str) or not _DATE.fullmatch(s.strip()):
        return None
    try:
        d = dt.datetime.fromisoformat(s.strip())
    except ValueError:
        return None
    return d.replace(tzinfo=None)


def _holds(fields: dict[str, Any], t: Test, cannot: dict[str, str]) -> bool:
    if t.field not in fields:
        return t.op == "!="
    vals = _values(fields[t.field])
    want = t.value.lower()
    if t.op == "=":
        return any(_text(v).lower() == want for v in vals)
    if t.op == "!=":
        return not any(_text(v).lower() == want for v in vals)
    if t.op == "~":
        return any(want in _text(v).lower() for v in vals)
    return any(_compare(v, t, cannot) for v in vals)


def _compare(v: Any, t: Test, cannot: dict[str, str]) -> bool:
    a: float | dt.datetime | None
    b: float | dt.datetime | None
    if (b := _date(t.value)) is not None:
        a = _date(_text(v))
        kind = "a date"
    elif (b := _number(t.value)) is not None:
        a = _number(v)
        kind = "a number"
    else:
        cannot[str(t)] = f"{t.value!r} is neither a number nor a date (YYYY-MM-DD): cannot compare"
        return False
    if a is None and kind == "a number" and _date(_text(v)) is not None:
        cannot.setdefault(str(t), f"{t.field} holds dates: compare with a date such as 2024-01-31")
        return False
    if a is None:
        cannot.setdefault(
            str(t), f"some notes' {t.field} is not {kind} (e.g. {_text(v)[:40]!r}): left out"
        )
        return False
    return {
        "<": a < b,  # type: ignore[operator]
        "<=": a <= b,  # type: ignore[operator]
        ">": a > b,  # type: ignore[operator]
        ">=": a >= b,  # type: ignore[operator]
    }[t.op]
