"""What a client may ask a search for, checked in one place, with the one-line
errors every front end (CLI, MCP, language server) shows in the same words.

The checks take what a protocol handed over (any JSON value) and return the
clean value, or raise :class:`BadRequest` whose text is the whole message:
no type names, no library's wording.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .files import DEFAULT_EXCLUDE, FileFilter, matches

MODES = ("hybrid", "lexical", "dense")
MAX_LIMIT = 200  # results one search returns at most
MAX_GLOB_CHARS = 1000


class BadRequest(ValueError):
    """A search parameter out of its range; ``str()`` is the one-line message."""


def check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise BadRequest("query must be text: say what you are looking for, in words")
    if not query.strip():
        raise BadRequest("query is empty: say what you are looking for, in words")
    return query


def check_limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int):
        try:
            limit = int(str(limit).strip())
        except ValueError:
            raise BadRequest(
                f"limit must be a whole number from 1 to {MAX_LIMIT} (got {str(limit)[:40]!r})"
            ) from None
    if not 1 <= limit <= MAX_LIMIT:
        raise BadRequest(f"limit must be a whole number from 1 to {MAX_LIMIT} (got {limit})")
    return limit


def check_mode(mode: Any) -> str:
    if mode not in MODES:
        raise BadRequest(f"mode must be hybrid, lexical or dense (got {str(mode)[:40]!r})")
    return str(mode)


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
        try:
            matches("probe.md", [body])  # the matcher's own objections (if any), as our words
        except (ValueError, RecursionError) as exc:
            raise BadRequest(f"bad path glob {g[:60]!r}: {exc}") from None
        out.append(g)
    return tuple(out)


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


def filter_differs(stored: dict | None, wanted: dict) -> str | None:
    """The one-line message when a search asks for an index shaped otherwise
    than the one it has (``stored`` None: the index never said; anything goes)."""
    if stored is None or stored == wanted:
        return None
    parts = []
    for key, label in (("include", "--include"), ("exclude", "--exclude")):
        if stored.get(key) != wanted.get(key):
            own = [g for g in stored.get(key) or [] if g not in DEFAULT_EXCLUDE]
            parts.append(f"{label} {' '.join(own) or '(default)'}")
    if stored.get("max_file_size") != wanted.get("max_file_size"):
        parts.append(f"--max-file-size {stored.get('max_file_size')}")
    return (
        "the index holds files chosen by "
        + ", ".join(parts)
        + "; search does not change what the index holds: filter results with --path GLOB,"
        " or run `mdseek index` with the options you want"
    )


def filter_spec(flt: FileFilter) -> dict:
    """What shapes an index, as the index remembers it (a meta row)."""
    return {
        "include": list(flt.include),
        "exclude": list(flt.exclude),
        "max_file_size": flt.max_file_size,
    }


def filter_from_spec(spec: Any) -> FileFilter | None:
    """A remembered filter back (None if the row is missing or not understood)."""
    try:
        return FileFilter(
            include=tuple(str(g) for g in spec["include"]),
            exclude=tuple(str(g) for g in spec["exclude"]),
            max_file_size=int(spec["max_file_size"]),
        )
    except (TypeError, KeyError, ValueError):
        return None
