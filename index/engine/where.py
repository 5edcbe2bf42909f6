"""Where one section ranked for a query, and why (``mdseek search --explain
--section PATH:LINE``): its place in what search shows (hybrid, after the
score floor) and in each retriever's own ranking, with the scores that put it
there and the best result's beside them.

Every ranking here is the engine's own search, asked for all its candidates,
so the answer is what a search does, not a second account of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..search.requests import Mode
from .engine import Engine, SearchResult

ALL = 10_000  # "every candidate": more sections than any retriever returns


@dataclass
class Place:
    """The section in one ranking: its rank (None: not in it) and score parts."""

    rank: int | None = None
    score: float | None = None
    of: int = 0  # sections in that ranking
    best: float | None = None  # the top section's score
    raw: float | None = None  # a retriever's own score (BM25, cosine) of the section
    best_raw: float | None = None  # and of the top section
    explain: dict = field(default_factory=dict)


def _find(results: list[SearchResult], path: str, line: int) -> tuple[int, SearchResult] | None:
    for n, r in enumerate(results, 1):
        first, last = r.lines()
        if r.path == path and first <= line <= last:
            return n, r
    return None


def where_ranked(engine: Engine, query: str, path: str, line: int) -> dict:
    """Where the section of ``path`` (relative to the folder) holding 1-based
    ``line`` ranked for ``query``: ``{"section", "hybrid", "lexical", "dense",
    "why"}``, each ranking a :class:`Place` as a dict."""
    places: dict[str, Place] = {}
    heading = None
    for mode in Mode:
        res = engine.search(query, limit=ALL, mode=mode, explain=True)
        if res.mode != mode and mode != Mode.HYBRID:
            continue  # no model: no dense ranking
        found = _find(res.results, path, line)
        top = res.results[0] if res.results else None
        p = Place(of=len(res.results), best=top.score if top else None)
        if top is not None and mode != Mode.HYBRID:
            p.best_raw = ((top.explain or {}).get(mode) or {}).get("raw")
        if found is not None:
            p.rank, r = found
            p.score = r.score
            p.explain = r.explain or {}
            if mode != Mode.HYBRID:
                p.raw = (p.explain.get(mode) or {}).get("raw")
            heading = heading or r.breadcrumb
        places[mode] = p
    return {
        "section": {"path": path, "line": line, "breadcrumb": heading},
        **{m: vars(p) for m, p in places.items()},
        "why": _why(places),
    }


def _why(places: dict[str, Place]) -> str:
    shown = places.get(Mode.HYBRID)
    sides = {m: p for m, p in places.items() if m != Mode.HYBRID}
    found_by = [m for m, p in sides.items() if p.rank is not None]
    if shown is not None and shown.rank is not None:
        return f"shown at #{shown.rank}" + (
            f" (found by {' and '.join(found_by)})" if found_by else ""
        )
    if not found_by:
        return (
            "no retriever has it among its candidates: its words are not the query's "
            "and its meaning is farther than the candidates'"
        )
    return (
        f"found by {' and '.join(found_by)} but not shown: the fused score fell under "
        "the score floor (see docs/ranking.md#the-score-floor)"
    )
