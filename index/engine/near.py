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
    SAME_FILE,
    THRESHOLD,
    Unit,
    body_words,
    pairs,
    unit_vector,
    unit_vectors,
    within_gap,
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
    same_file: float | None = SAME_FILE,
) -> list[NearDuplicate]:
    """Each section of ``rel`` (folder-relative) with its near-duplicates in the
    folder (in its own file at ``same_file`` only; None, the default: never),
    in the order of the document, the best match of a section first."""
    if not engine.models.embedder.loaded:
        return []
    engine.dense_side.sync()
    read = _Reader(engine, min_words)
    mine = read.units(rel)
    if mine is None or not mine:
        return []
    others = read.near(mine, threshold)
    found = pairs(mine, others, threshold, ratio, min_words, gap=None, same_file=same_file)
    if found and gap is not None:
        # each other's own nearest sections: those near it that are not near mine
        # (a section of this note was a query already: those near it are in others)
        seen = {u.key for u in (*mine, *others)}
        ours = {u.key for u in mine}
        partners = list(
            {o.key: o for o in (others[j] for _, j, _ in found) if o.key not in ours}.values()
        )
        peers = [u for u in read.near(partners, threshold) if u.key not in seen] if partners else []
        found = within_gap(found, mine, others, gap, peers, min_words)
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


class _Reader:
    """One call's reads: a section made a :class:`Unit` (its vectors and words)
    once, and of the other files only the sections compared are read."""

    def __init__(self, engine: Engine, min_words: int) -> None:
        self.engine = engine
        self.min_words = min_words
        self.made: dict[tuple[str, int, int], Unit | None] = {}

    def units(self, rel: str) -> list[Unit] | None:
        """The sections of ``rel`` as compared (keyed (path, first section, last
        section): a chunk that merged small sections is one unit); None when a
        chunk has no vector yet."""
        groups: dict[tuple[str, int, int], list[ChunkRow]] = defaultdict(list)
        for c in self.engine.store.chunks.document_chunks(rel):
            groups[(c.path, c.section_first, c.section_last)].append(c)
        self._make({k: [(c.id, c.heading, c.text) for c in cs] for k, cs in groups.items()})
        out = []
        for key in groups:
            u = self.made[key]
            if u is None:
                return None
            if u.words >= self.min_words:
                out.append(u)
        return out

    def _make(self, groups: dict[tuple[str, int, int], list[tuple[int, str, str]]]) -> None:
        """Sections from their chunks' (id, heading, text), kept for the call;
        the vectors read in one go (section by section when one waits for its vector)."""
        mat = self.engine.dense_side.matrix.vectors([c[0] for cs in groups.values() for c in cs])
        if mat is None:
            for key, cs in groups.items():
                self.made[key] = self._unit(key, cs)
            return
        if not len(mat):
            return
        # each section's mean, made unit length once (one chunk: its own vector)
        starts = np.cumsum([0] + [len(cs) for cs in groups.values()])[:-1]
        means = np.add.reduceat(mat, starts, axis=0)
        norms = np.linalg.norm(means, axis=1, keepdims=True)
        vecs = (means / np.where(norms == 0, 1.0, norms)).astype(np.float32)
        for n, (key, cs) in enumerate(groups.items()):
            words = body_words([c[2] for c in cs], cs[0][1])
            self.made[key] = Unit(key, vecs[n : n + 1], words, key[0])

    def _unit(self, key: tuple[str, int, int], cs: list[tuple[int, str, str]]) -> Unit | None:
        """A section from its chunks' (id, heading, text); None when one has no vector yet."""
        vector = self.engine.dense_side.matrix.vector
        vecs = [vector(c[0]) for c in cs]
        got = [v for v in vecs if v is not None]
        if len(got) < len(vecs) or not got:
            return None
        # held as its one unit vector (the mean, made once: the same for every product)
        vec = unit_vector(np.stack(got))[None, :]
        return Unit(key, vec, body_words([c[2] for c in cs], cs[0][1]), key[0])

    def near(self, units: list[Unit], threshold: float) -> list[Unit]:
        """The sections with a chunk within :data:`PREFILTER` under ``threshold``
        of any of ``units``' vectors (only those sections' chunks read)."""
        qs = unit_vectors(units)
        near = self.engine.dense_side.matrix.chunks_near(qs, threshold - PREFILTER)
        spans = {(d, p, f, last) for d, p, f, last in self.engine.store.chunks.spans(near).values()}
        todo = {(d, f, last): (p, f, last) for d, p, f, last in spans}
        todo = {k: key for k, key in todo.items() if key not in self.made}
        got = self.engine.store.chunks.section_chunks(todo)
        self._make({todo[k]: cs for k, cs in got.items()})
        out = []
        for _, p, f, last in sorted(spans, key=lambda t: t[1:]):
            u = self.made.get((p, f, last))
            if u is not None and u.words >= self.min_words:
                out.append(u)
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
