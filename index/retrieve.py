"""Hybrid retrieval: safe FTS5 queries, pooling chunks to sections, and
reciprocal rank fusion.

Pure functions over ranked lists; :mod:`mdseek.index.engine` feeds them from
the store (BM25) and the dense matrix (cosine).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

_WORD = re.compile(r"\w+", re.UNICODE)

# Fusion and FTS defaults (see benchmarks/README.md for how they were measured).
RRF_K = 60
FTS_WEIGHTS = (2.0, 4.0, 1.0)  # title, headings (breadcrumb), body
CANDIDATES = 100  # chunks taken from each retriever before pooling

SectionKey = tuple[int, int]  # (doc id, section ordinal)


def fts_query(text: str, prefix_last: bool = False, max_terms: int = 32) -> str:
    """An FTS5 MATCH expression for arbitrary user text that never raises.

    Each word becomes a quoted string (so ``AND``, ``NEAR``, ``-``, ``:``, ``*``,
    parentheses and quotes are plain text), OR-ed together so BM25 ranks partial
    matches. ``prefix_last`` makes the last word a prefix (as-you-type search)."""
    words: list[str] = []
    seen: set[str] = set()
    for w in _WORD.findall(text.lower()):
        if w not in seen:
            seen.add(w)
            words.append(w)
    words = words[:max_terms]
    if not words:
        return ""
    parts = ['"' + w.replace('"', '""') + '"' for w in words]
    if prefix_last and text and not text[-1].isspace() and len(words[-1]) >= 2:
        parts[-1] += "*"
    return " OR ".join(parts)


def query_terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 2]


def pool_to_sections(
    ranked_chunks: Sequence[tuple[int, float]],
    chunk_sections: dict[int, tuple[int, int, int]],
) -> list[tuple[SectionKey, float, int]]:
    """Max-pool chunk scores to sections.

    ``ranked_chunks``: (chunk id, score), best first. ``chunk_sections``: chunk id
    -> (doc id, first section ordinal, last section ordinal). Returns (section,
    score, best chunk id) best first; a merged chunk credits every section it
    covers, a split section takes its best chunk."""
    best: dict[SectionKey, tuple[float, int, int]] = {}
    for order, (cid, score) in enumerate(ranked_chunks):
        span = chunk_sections.get(cid)
        if span is None:
            continue
        doc, first, last = span
        for ordinal in range(first, last + 1):
            key = (doc, ordinal)
            cur = best.get(key)
            if cur is None or score > cur[0]:
                best[key] = (score, cid, order)
    items = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][2], kv[0]))
    return [(k, v[0], v[1]) for k, v in items]


@dataclass
class Fused:
    key: SectionKey
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # retriever -> 1-based rank
    raw: dict[str, float] = field(default_factory=dict)  # retriever -> its own score
    best_chunk: int | None = None


def rrf(
    lists: dict[str, Sequence[tuple[SectionKey, float, int]]],
    k: int = RRF_K,
    weights: dict[str, float] | None = None,
) -> list[Fused]:
    """Reciprocal rank fusion of pooled section lists: sum of w / (k + rank)."""
    fused: dict[SectionKey, Fused] = {}
    for name, ranked in lists.items():
        w = (weights or {}).get(name, 1.0)
        for rank, (key, score, cid) in enumerate(ranked, start=1):
            f = fused.get(key)
            if f is None:
                f = fused[key] = Fused(key, 0.0, best_chunk=cid)
            f.score += w / (k + rank)
            f.ranks[name] = rank
            f.raw[name] = score
            if rank < min((r for n, r in f.ranks.items() if n != name), default=10**9):
                f.best_chunk = cid
    return sorted(fused.values(), key=lambda f: (-f.score, min(f.ranks.values()), f.key))
