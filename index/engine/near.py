"""The near-duplicates of one document's sections, from the vectors the
engine holds (:mod:`..search.neardup` decides what a near-duplicate is).

No new vector is made and no model is called: the document's chunk vectors
are read from the dense matrix, a product over the matrix's chunk rows finds
the chunks close to any of its sections, and only those chunks' sections are
read from the index and compared. When a pair is found, a second product
finds the sections near each other one, so that both are known to be each
other's nearest (within :data:`..search.neardup.GAP`). Nothing is found while
the model is not loaded (a lexical-only folder) or a chunk of the document
waits for its vector.

A check follows each save of an open note, and a save changes a chunk or
two: :class:`_Near` keeps, per engine, which chunk rows were near which
section vector, and the next check compares only what changed (a section
whose vector is new, against every row; a row new or changed, against every
section kept), the rows told apart by their chunk id and a fingerprint of
their vector.
"""

from __future__ import annotations

import threading
import weakref
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
from ..store.chunks import Chunks, SectionRow

if TYPE_CHECKING:
    from ..search.dense import DenseIndex
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
    kept = _near_rows(engine)
    with kept.lock:  # one check at a time uses what is kept
        return _check(engine, kept, rel, threshold, ratio, min_words, gap, same_file)


def _check(
    engine: Engine,
    kept: _NearRows,
    rel: str,
    threshold: float,
    ratio: float,
    min_words: int,
    gap: float | None,
    same_file: float | None,
) -> list[NearDuplicate]:
    read = _Reader(engine, kept, min_words, threshold - PREFILTER)
    mine = read.units(rel)
    if mine is None or not mine:
        return []
    others = read.near(mine)
    found = pairs(mine, others, threshold, ratio, min_words, gap=None, same_file=same_file)
    if found and gap is not None:
        # each other's own nearest sections: those near it that are not near mine
        # (a section of this note was a query already: those near it are in others)
        seen = {u.key for u in (*mine, *others)}
        ours = {u.key for u in mine}
        partners = list(
            {o.key: o for o in (others[j] for _, j, _ in found) if o.key not in ours}.values()
        )
        peers = [u for u in read.near(partners) if u.key not in seen] if partners else []
        found = within_gap(found, mine, others, gap, peers, min_words)
    if not found:
        return []
    places = read.places({mine[i].key for i, _, _ in found} | {others[j].key for _, j, _ in found})
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

    def __init__(self, engine: Engine, kept: _NearRows, min_words: int, floor: float) -> None:
        self.engine = engine
        self.floor = floor  # a chunk this near a section makes its section a candidate
        self.kept = kept
        self.min_words = min_words
        self.made: dict[tuple[str, int, int], Unit | None] = {}
        self.version: dict[str, str] = {}  # the version of each other file read
        self.versions: dict[int, str] = {}  # doc id -> its version, as read in this check
        # the matrix's chunk rows, read once for the check's passes (a copy: not kept
        # past the check), and the check's token: its rows are the same in both
        self.rows: tuple[np.ndarray, np.ndarray] | None = None
        self.token = object()
        self.own: dict[int, tuple[str, int, int]] = {}  # the note's chunk id -> its section

    def matrix_rows(self) -> tuple[np.ndarray, np.ndarray]:
        if self.rows is None:  # one reading of the matrix for the check's passes
            self.rows = self.kept.matrix.chunk_rows()
        return self.rows

    def units(self, rel: str) -> list[Unit] | None:
        """The sections of ``rel`` as compared (keyed (path, first section, last
        section): a chunk that merged small sections is one unit); None when a
        chunk has no vector yet."""
        store, kept = self.engine.store.chunks, self.kept
        kept.update(self.matrix_rows(), self.floor, self.token)  # what changed, first
        groups = store.document_section_chunks(rel, texts=False)  # (id, heading, text hash)
        self.own = {c[0]: key for key, cs in groups.items() for c in cs}
        todo = {}
        for key, cs in groups.items():
            # kept from the check before while its chunks and their texts are the same
            sig = " ".join(f"{i}:{h}" for i, _, h in cs)
            was = kept.units.get(key)
            if was is not None and was[0] == sig:
                self.made[key] = was[1]
            else:
                todo[key] = (sig, cs)
        if todo:
            texts = store.texts([c[0] for _, cs in todo.values() for c in cs])
            self._make(
                {
                    key: [(i, heading, texts[i]) for i, heading, _ in cs]
                    for key, (_, cs) in todo.items()
                    if all(c[0] in texts for c in cs)
                }
            )
            for key, (sig, cs) in todo.items():
                u = self.made.get(key)
                if u is not None:
                    kept.keep_unit(sig, u, [c[0] for c in cs])
        out = []
        for key in groups:
            u = self.made.get(key)
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

    def near(self, units: list[Unit]) -> list[Unit]:
        """The sections with a chunk at the floor (:data:`PREFILTER` under the
        threshold) of any of ``units``' vectors (only those sections' chunks read)."""
        kept, store = self.kept, self.engine.store.chunks
        near = kept.near(unit_vectors(units), self.floor, self.matrix_rows(), self.token)
        # the note's own chunks: their sections as read for units() (no other read)
        spans = {(-1, *self.own[i]) for i in near if i in self.own}
        others = {i for i in near if i not in self.own}
        for d, p, f, last, version in kept.spans_of(others, store, self.versions).values():
            spans.add((d, p, f, last))
            self.version[p] = version
        todo = {}
        for d, p, f, last in spans:
            if (p, f, last) in self.made:
                continue
            was = kept.units.get((p, f, last))
            if was is not None and was[0] == self.version[p]:
                self.made[(p, f, last)] = was[1]
            else:
                todo[(d, f, last)] = (p, f, last)
        got = store.section_chunks(todo)
        self._make({todo[k]: cs for k, cs in got.items()})
        for k, cs in got.items():  # kept for the next check while its file stays the same
            u = self.made.get(todo[k])
            if u is not None:
                kept.keep_unit(self.version[todo[k][0]], u, [c[0] for c in cs])
        out = []
        for _, p, f, last in sorted(spans, key=lambda t: t[1:]):
            u = self.made.get((p, f, last))
            if u is not None and u.words >= self.min_words:
                out.append(u)
        return out

    def places(self, keys: set) -> dict[object, Place]:
        """The places of sections (by key); another file's sections kept while
        it stays the same."""
        out: dict[object, Place] = {}
        for path in sorted({k[0] for k in keys}):
            rows = self.kept.sections_of(path, self.version.get(path), self.engine.store.chunks)
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


class _NearRows:
    """Which chunk rows of an engine's matrix are near which query vectors (a
    cosine of at least ``floor``), kept from one check to the next (see the
    module)."""

    MAX = 4096  # query vectors kept; past it, all are forgotten

    def __init__(self, matrix: DenseIndex) -> None:
        self.matrix = matrix
        self.lock = threading.RLock()
        self._forget(-2.0, 0)

    def _forget(self, floor: float, dim: int) -> None:
        self.floor = floor
        self.ids = np.zeros(0, np.int64)  # chunk ids of the rows seen
        self.marks = np.zeros(0, np.int64)  # each row's id and fingerprint, packed
        # a fixed direction no row is likely orthogonal to (numpy.random costs 50 ms to import)
        self.probe = np.sin(np.arange(1, dim + 1, dtype=np.float32) * 12.9898).astype(np.float32)
        self.seen: dict[bytes, set[int]] = {}  # a query vector's bytes -> chunk ids
        self.last: object = None  # the check whose rows were compared last (its token)
        # what the index said of other files, with each file's version (Chunks.versions)
        self.spans: dict[int, tuple[int, str, int, int, str]] = {}  # Chunks.versioned_spans
        self.units: dict[tuple[str, int, int], tuple[str, Unit]] = {}
        self.unit_of: dict[int, tuple[str, int, int]] = {}  # chunk id -> the unit it is in
        self.sections: dict[str, tuple[str, dict[int, SectionRow]]] = {}

    def keep_unit(self, version: str, unit: Unit, chunk_ids: list[int]) -> None:
        if len(self.units) > self.MAX:
            self.units, self.unit_of = {}, {}
        key = unit.key
        assert isinstance(key, tuple)
        self.units[key] = (version, unit)
        for i in chunk_ids:
            self.unit_of[i] = key

    def spans_of(
        self, ids: set[int], store: Chunks, now: dict[int, str]
    ) -> dict[int, tuple[int, str, int, int, str]]:
        """:meth:`Chunks.versioned_spans` of ``ids``: those kept, while their
        file's version stays, and the others read; ``now``: the versions read
        in this check (those it lacks are read and added)."""
        have = {i: self.spans[i] for i in ids if i in self.spans}
        docs = {s[0] for s in have.values()}
        if docs - now.keys():
            now.update(store.versions(docs - now.keys()))
        out = {i: s for i, s in have.items() if now.get(s[0]) == s[4]}
        missing = [i for i in ids if i not in out]
        if missing:
            if len(self.spans) > 8 * self.MAX:
                self.spans = {}
            got = store.versioned_spans(missing)
            self.spans.update(got)
            out.update(got)
        return out

    def sections_of(self, path: str, version: str | None, store: Chunks) -> dict[int, SectionRow]:
        """A file's sections by ordinal, kept while its version stays (``None``:
        not known, read)."""
        was = self.sections.get(path)
        if version is not None and was is not None and was[0] == version:
            return was[1]
        rows = {s.ordinal: s for s in store.document_sections(path)}
        if version is not None:
            if len(self.sections) > self.MAX:
                self.sections = {}
            self.sections[path] = (version, rows)
        return rows

    def _changed(self, ids: set[int]) -> None:
        """Rows new, changed or gone: what was kept of them is dropped."""
        for i in ids:
            self.spans.pop(i, None)
            key = self.unit_of.pop(i, None)
            if key is not None:
                self.units.pop(key, None)

    def near(
        self,
        qs: np.ndarray,
        floor: float,
        rows: tuple[np.ndarray, np.ndarray] | None = None,
        token: object = None,
    ) -> set[int]:
        """The chunks whose own row has a cosine of at least ``floor`` with any
        row of ``qs`` (unit vectors). ``rows``, ``token``: see :meth:`update`."""
        ids, mat = self.matrix.chunk_rows() if rows is None else rows
        with self.lock:
            self.update((ids, mat), floor, token)
            if not len(mat) or not len(qs):
                return set()
            return self._answer(np.ascontiguousarray(qs, dtype=np.float32), ids, mat, floor)

    def update(self, rows: tuple[np.ndarray, np.ndarray], floor: float, token: object) -> None:
        """What is kept brought up to the matrix's chunk ``rows`` as read (ids,
        vectors): a row new, changed or gone drops what was kept of it, and each
        query kept is compared with the new and changed rows. ``token``: one
        object for the passes of one check over the same rows (done once)."""
        ids, mat = rows
        with self.lock:
            dim = mat.shape[1] if mat.ndim == 2 else 0
            if floor != self.floor or len(self.probe) != dim:
                self._forget(floor, dim)
            if token is not None and token is self.last:  # the rows of the pass before
                return
            self.last = token
            prints = np.einsum("ij,j->i", mat, self.probe).astype(np.float32)
            marks = (ids << 32) | prints.view(np.uint32).astype(np.int64)
            fresh = ~_within(marks, self.marks)
            gone = set(self.ids[~_within(self.marks, marks)].tolist())
            self._changed(gone | set(ids[fresh].tolist()))
            if len(self.seen) > self.MAX or 2 * int(fresh.sum()) > len(mat):
                # too many kept, or most rows new (a folder indexed anew): bringing
                # them up to date would cost more than a fresh look
                self.seen = {}
            if self.seen and (fresh.any() or gone):
                # the rows that changed, against every query kept
                keys = list(self.seen)
                kept = np.frombuffer(b"".join(keys), np.float32).reshape(len(keys), -1)
                sims = _cosines(kept, mat[fresh])
                fids = ids[fresh]
                for n, k in enumerate(keys):
                    hits = self.seen[k] - gone
                    hits.update(fids[sims[n] >= floor].tolist())
                    self.seen[k] = hits
            self.ids, self.marks = ids, marks

    def _answer(self, qs: np.ndarray, ids: np.ndarray, mat: np.ndarray, floor: float) -> set[int]:
        out: set[int] = set()
        todo = [n for n, q in enumerate(qs) if q.tobytes() not in self.seen]
        if todo:
            sims = _cosines(qs[todo], mat)
            for n, row in zip(todo, sims, strict=True):
                self.seen[qs[n].tobytes()] = set(ids[row >= floor].tolist())
        for q in qs:
            out |= self.seen[q.tobytes()]
        return out


def forget_near_rows(engine: Engine) -> None:
    """What the engine's checks kept of the rows near each section, dropped."""
    with _NEAR_LOCK:
        _NEAR.pop(engine, None)


def _within(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether each of ``a`` is in ``b`` (np.isin without its sorts of both)."""
    if not len(b):
        return np.zeros(len(a), bool)
    s = np.sort(b)
    return s[np.minimum(np.searchsorted(s, a), len(s) - 1)] == a


def _near_rows(engine: Engine) -> _NearRows:
    with _NEAR_LOCK:
        got = _NEAR.get(engine)
        if got is None:
            got = _NEAR[engine] = _NearRows(engine.dense_side.matrix)
        return got


_NEAR: weakref.WeakKeyDictionary[Engine, _NearRows] = weakref.WeakKeyDictionary()
_NEAR_LOCK = threading.Lock()


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # a few rows: einsum's own loop (BLAS's threads cost more than the product on
    # a busy machine); many: BLAS
    if len(a) * len(b) <= 50_000:
        return np.einsum("ij,kj->ik", a, b)
    return a @ b.T
