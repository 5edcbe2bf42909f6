"""The near-duplicates of one document's sections, from the vectors the
engine holds (:mod:`..search.neardup` decides what a near-duplicate is).

No new vector is made and no model is called: the document's chunk vectors
are read from the dense matrix, one matrix product over the matrix finds the
chunks close to any of its sections, and only those chunks' sections are
read from the index and compared. When a pair is found, a second product
finds the sections near each other one, so that both are known to be each
other's nearest (within :data:`..search.neardup.GAP`). Nothing is found while
the model is not loaded (a lexical-only folder) or a chunk of the document
waits for its vector.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..search.neardup import (
    GAP,
    LENGTH_RATIO,
    MIN_WORDS,
    PREFILTER,
    THRESHOLD,
    Unit,
    body_words,
    pairs,
    unit_vector,
)
from ..store.chunks import ChunkRow, SectionRow

if TYPE_CHECKING:
    from .engine import Engine


@dataclass(frozen=True)
class Place:
    """A section: its file (folder-relative), heading (text, slug; "" for a
    preamble), lines (0-based, end exclusive) and the line after its heading."""

    path: str
    heading: str
    slug: str
    start_line: int
    end_line: int
    body_line: int


@dataclass(frozen=True)
class NearDuplicate:
    """A section of the document (``section``) that says what ``other`` says."""

    section: Place
    other: Place
    score: float  # the cosine of the two sections' vectors


def near_duplicates(
    engine: Engine,
    rel: str,
    threshold: float = THRESHOLD,
    ratio: float = LENGTH_RATIO,
    min_words: int = MIN_WORDS,
    gap: float | None = GAP,
) -> list[NearDuplicate]:
    """Each section of ``rel`` (folder-relative) with its near-duplicates in the
    folder (its own file included), in the order of the document, the best
    match of a section first."""
    if not engine.models.embedder.loaded:
        return []
    dense = engine.dense_side
    dense.sync()
    mine = _units(engine, rel, min_words)
    if mine is None or not mine:
        return []
    others = _near(engine, mine, threshold, min_words, {rel: mine})
    found = pairs(mine, others, threshold, ratio, min_words, gap=None)
    if found and gap is not None:
        # each other's own nearest sections: those near it that are not near mine
        partners = list({others[j].key: others[j] for _, j, _ in found}.values())
        seen = {u.key for u in (*mine, *others)}
        peers = [u for u in _near(engine, partners, threshold, min_words) if u.key not in seen]
        found = pairs(mine, others, threshold, ratio, min_words, gap, peers)
    if not found:
        return []
    places = _places(
        engine, {mine[i].key for i, _, _ in found} | {others[j].key for _, j, _ in found}
    )
    out = []
    for i, j, score in found:
        a, b = places.get(mine[i].key), places.get(others[j].key)
        if a is not None and b is not None:
            out.append(NearDuplicate(a, b, score))
    out.sort(key=lambda d: (d.section.start_line, -d.score, d.other.path, d.other.start_line))
    return out


def _near(
    engine: Engine,
    units: list[Unit],
    threshold: float,
    min_words: int,
    known: dict[str, list[Unit]] | None = None,
) -> list[Unit]:
    """The sections with a chunk within :data:`PREFILTER` under ``threshold`` of
    any of ``units``' vectors (``known``: documents' units already read)."""
    qs = np.stack([unit_vector(u.vectors) for u in units])
    near = engine.dense_side.matrix.chunks_near(qs, threshold - PREFILTER)
    wanted = {(p, f, last) for _, p, f, last in engine.store.chunks.spans(near).values()}
    out: list[Unit] = []
    for path in sorted({k[0] for k in wanted}):
        got = (known or {}).get(path)
        if got is None:
            got = _units(engine, path, min_words)
        out += [u for u in got or () if u.key in wanted]
    return out


def _units(engine: Engine, rel: str, min_words: int) -> list[Unit] | None:
    """A document's sections as compared (keyed (path, first section, last
    section): a chunk that merged small sections is one unit); None when a
    chunk has no vector yet."""
    vector = engine.dense_side.matrix.vector
    groups: dict[tuple[str, int, int], list[ChunkRow]] = defaultdict(list)
    for c in engine.store.chunks.document_chunks(rel):
        groups[(c.path, c.section_first, c.section_last)].append(c)
    out = []
    for key, cs in groups.items():
        vecs = [vector(c.id) for c in cs]
        got = [v for v in vecs if v is not None]
        if len(got) < len(vecs):
            return None
        words = body_words([c.text for c in cs], cs[0].heading)
        if words >= min_words:
            out.append(Unit(key, np.stack(got), words))
    return out


def _places(engine: Engine, keys: set) -> dict[object, Place]:
    out: dict[object, Place] = {}
    for path in sorted({k[0] for k in keys}):
        rows: dict[int, SectionRow] = {
            s.ordinal: s for s in engine.store.chunks.document_sections(path)
        }
        for k in keys:
            if k[0] != path or k[1] not in rows or k[2] not in rows:
                continue
            first, last = rows[k[1]], rows[k[2]]
            out[k] = Place(
                path,
                first.heading if first.level else "",
                first.slug if first.level else "",
                first.start_line,
                last.end_line,
                first.heading_end_line if first.level else first.start_line,
            )
    return out
