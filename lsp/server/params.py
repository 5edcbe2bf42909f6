"""Typed params of the custom ``mdseek/*`` requests.

pygls structures the params of standard LSP methods into lsprotocol types; for
methods it does not know it hands over nested namedtuples (or whatever JSON
came). :func:`structure` turns that into one of the attrs classes below, whose
converters and validators check each field; unknown keys are ignored.
"""

from __future__ import annotations

from typing import Any, TypeVar

import attrs

from mdseek.index.api import requests

T = TypeVar("T")


class InvalidParams(ValueError):
    """The params of a request do not have the documented shape."""


def plain(obj: Any) -> Any:
    """Nested namedtuples (pygls' view of unknown JSON) back to dicts and lists."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [plain(v) for v in obj]
    return obj


def structure(raw: Any, cls: type[T]) -> T:
    """``raw`` params as ``cls``; ``None`` gives the defaults. Raises InvalidParams."""
    data = plain(raw)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidParams(f"params must be an object, not {type(data).__name__}")
    names = {a.name for a in attrs.fields(cls)}  # type: ignore[arg-type]
    data = {k: v for k, v in data.items() if k in names}
    try:
        return cls(**data)
    except (TypeError, ValueError) as exc:
        raise InvalidParams(str(exc)) from exc


def _query(value: Any) -> str:
    return requests.check_query(value)


def _paths(value: Any) -> tuple[str, ...]:
    return requests.check_globs(value)


def _tags(value: Any) -> tuple[str, ...]:
    return requests.check_filter(tag=value).tags


def _where(value: Any) -> tuple[str, ...]:
    requests.check_filter(where=value)  # the filter's own words for a bad term
    return () if value is None else (value,) if isinstance(value, str) else tuple(value)


def _limit(value: Any) -> int | None:
    """None (= the configured default), or a limit the shared check accepts."""
    return None if value is None else requests.check_limit(value)


@attrs.define
class SearchParams:
    """``mdseek/search``: ``query`` (text), ``limit`` (1 to the settings table's
    MAX_LIMIT; default: the ``searchLimit`` setting), ``path`` (globs like
    ``rg -g``, ``!`` excludes: a filter on results), ``tag`` and ``where``
    (tags and front-matter terms a result's note must pass, one text or a
    list: :mod:`mdseek.index.search.filters`). A query or limit out of range is an InvalidParams error
    in the words the CLI and MCP use (:mod:`mdseek.index.search.requests`).
    ``explain`` (true): each result carries its score parts."""

    query: str = attrs.field(default=None, converter=_query)  # left out: "query is missing"
    limit: int | None = attrs.field(default=None, converter=_limit)
    path: tuple[str, ...] = attrs.field(default=(), converter=_paths)
    explain: bool = attrs.field(default=False, converter=lambda v: v is True)
    tag: tuple[str, ...] = attrs.field(default=(), converter=_tags)
    where: tuple[str, ...] = attrs.field(default=(), converter=_where)
