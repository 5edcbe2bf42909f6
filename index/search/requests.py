"""What a client may ask for (a search; a file, a section of it), checked in one
place, with the one-line errors every front end (CLI, MCP, language server)
shows in the same words.

The checks take what a protocol handed over (any JSON value) and return the
clean value, or raise :class:`BadRequest` whose text is the whole message:
no type names, no library's wording.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..settings import DEFAULT_MODE, MAX_LIMIT, Mode
from ..text.files import matches
from .filters import NO_FILTER, BadFilter, Filter
from .query import Query

MODES = tuple(m.value for m in Mode)  # :class:`Mode` is the settings table's (its choices)


@dataclass(frozen=True)
class SearchRequest:
    """One search as a front end asks it, built once (:meth:`make`) and handed
    down unchanged: the query read once (:class:`Query`: its words, the words
    to highlight, whether the last word is a prefix), how many results, the
    ranking, the path globs a result must pass (``rg -g`` style, see
    :func:`path_wanted`; a filter on results) and whether each result says
    why it ranked (``explain``), and the tags and front-matter fields a
    result's note must have (``filter``, :mod:`.filters`; a filter on results
    too). Values come checked by this module's checks.

    Every search option is a field here, once: a front end names the ones it
    sets (:meth:`make`), the layers between hand the value down whole, and the
    searcher reads it (:meth:`Searcher.search`)."""

    query: Query
    limit: int = 10
    mode: Mode = DEFAULT_MODE
    paths: tuple[str, ...] = ()
    explain: bool = False
    filter: Filter = NO_FILTER

    def __post_init__(self) -> None:  # a mode by its word, globs as any sequence
        object.__setattr__(self, "mode", Mode(self.mode))
        object.__setattr__(self, "paths", tuple(self.paths))

    @classmethod
    def make(
        cls, text: str, *fields: Any, prefix_last: bool = False, **options: Any
    ) -> SearchRequest:
        """A search for ``text`` with the fields after ``query`` (in their order,
        or by name: ``limit``, ``mode``, ...); ``prefix_last``: as you type, the
        last word may be a prefix."""
        return cls(Query.parse(text, prefix_last), *fields, **options)

    @property
    def text(self) -> str:
        return self.query.text


MAX_GLOB_CHARS = 1000


class BadRequest(ValueError):
    """A search parameter out of its range; ``str()`` is the one-line message."""


FILE_HINT = "give a markdown file's path as search or outline shows it"


def _got(value: Any) -> str:
    """A value a client gave, shortened, as the messages quote it."""
    return repr(value[:40]) if isinstance(value, str) else str(value)[:40]


def _text(name: str, value: Any, hint: str) -> str:
    if value is None:
        raise BadRequest(f"{name} is missing: {hint}")
    if not isinstance(value, str):
        raise BadRequest(f"{name} must be text: {hint}")
    if not value.strip():
        raise BadRequest(f"{name} is empty: {hint}")
    return value


def _optional_text(name: str, value: Any, hint: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise BadRequest(f"{name} must be text: {hint}")
    return value


def _whole(name: str, value: Any, low: int, high: int | None) -> int:
    within = f" from {low} to {high}" if high is not None else f", {low} or more"
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(str(value).strip())
        except ValueError:
            raise BadRequest(
                f"{name} must be a whole number{within} (got {str(value)[:40]!r})"
            ) from None
    if value < low or (high is not None and value > high):
        raise BadRequest(f"{name} must be a whole number{within} (got {value})")
    return value


def check_query(query: Any) -> str:
    return _text("query", query, "say what you are looking for, in words")


def check_file(path: Any) -> str:
    """A markdown file's path as a client names it (search and outline show them)."""
    return _text("path", path, FILE_HINT)


def check_heading(heading: Any) -> str | None:
    return _optional_text("heading", heading, "give a heading as outline shows it")


def check_anchor(anchor: Any) -> str | None:
    return _optional_text("anchor", anchor, "give a heading's anchor as search or outline shows it")


def check_limit(limit: Any) -> int:
    return _whole("limit", limit, 1, MAX_LIMIT)


def check_line(line: Any) -> int | None:
    """A 1-based line (None: not given)."""
    return None if line is None else _whole("line", line, 1, None)


def check_flag(name: str, value: Any) -> bool:
    """A yes/no option: true or false (JSON's, or the words)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise BadRequest(f"{name} must be true or false (got {_got(value)})")


def unknown_argument(name: Any, command: str, known: Iterable[str]) -> BadRequest:
    """An argument the command does not take (a misspelled name, most often)."""
    takes = ", ".join(known)
    return BadRequest(
        f"unknown argument {_got(str(name))}: {command} "
        + (f"takes {takes}" if takes else "takes no arguments")
    )


def check_mode(mode: Any) -> Mode:
    if mode not in MODES:
        raise BadRequest(
            f"mode must be {', '.join(MODES[:-1])} or {MODES[-1]} (got {str(mode)[:40]!r})"
        )
    return Mode(mode)


def check_globs(globs: Any) -> tuple[str, ...]:
    """Path globs (``rg -g`` style; ``!`` excludes): one text or a list of texts."""
    if globs is None:
        return ()
    if isinstance(globs, str):
        globs = [globs]
    if not isinstance(globs, list | tuple):
        raise BadRequest("path must be a glob or a list of globs, e.g. 'docs/**' or '!drafts/**'")
    out = []
    for g in globs:
        if not isinstance(g, str):
            raise BadRequest(
                "path must be a glob or a list of globs, e.g. 'docs/**' or '!drafts/**'"
            )
        body = g[1:] if g.startswith("!") else g
        if not body.strip() or "\0" in g or len(g) > MAX_GLOB_CHARS:
            raise BadRequest(
                f"bad path glob {g[:60]!r}: give a glob such as 'docs/**', '*.md' or '!drafts/**'"
            )
        if "[" in body or "]" in body:
            raise BadRequest(
                f"bad path glob {g[:60]!r}: globs here know *, ** and ? but no [...] "
                "(for a bracket in a name, put ? in its place)"
            )
        try:
            matches("probe.md", [body])  # the matcher's own objections (if any), as our words
        except (ValueError, RecursionError) as exc:
            raise BadRequest(f"bad path glob {g[:60]!r}: {exc}") from None
        out.append(g)
    return tuple(out)


def check_filter(tag: Any = None, where: Any = None) -> Filter:
    """Tags (``runbook``, ``#area/sub``) and ``field OP value`` terms, each one
    text or a list of texts (:mod:`.filters`)."""

    def texts(name: str, v: Any, example: str) -> list[str]:
        if v is None:
            return []
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list | tuple) or not all(isinstance(x, str) for x in v):
            raise BadRequest(f"{name} must be a text or a list of texts, e.g. {example}")
        return list(v)

    try:
        flt = Filter.make(
            texts("tag", tag, "'runbook' or ['#area/sub']"),
            texts("where", where, "'status=published' or ['owner~ops', 'date>=2024-01-01']"),
        )
    except BadFilter as exc:
        raise BadRequest(str(exc)) from None
    check_globs(list(flt.paths))  # path=GLOB terms: the path globs' own checks
    return flt


def _variants(glob: str) -> list[str]:
    """A glob without ``/`` matches names in any folder (``*.md``, ``ch14*``)."""
    g = glob.strip()
    return [g.lstrip("/")] if "/" in g else [g, "**/" + g]


def path_wanted(rel: str, globs: Sequence[str]) -> bool:
    """Whether a result's path passes path globs like ``rg -g``: with any plain
    glob, the path (or a folder above it) must match one; a ``!glob`` it matches
    (or a folder above it matches) leaves it out."""
    if not globs:
        return True
    parts = rel.split("/")
    candidates = [rel] + ["/".join(parts[:i]) for i in range(1, len(parts))]

    def hit(pats: Iterable[str]) -> bool:
        pats = [v for p in pats for v in _variants(p)]
        return any(matches(c, pats) for c in candidates)

    plain = [g for g in globs if not g.startswith("!")]
    negated = [g[1:] for g in globs if g.startswith("!")]
    if plain and not hit(plain):
        return False
    return not (negated and hit(negated))
