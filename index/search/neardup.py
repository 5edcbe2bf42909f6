"""Near-duplicate sections: two sections that say the same thing, found by
their vectors.

A section's vector is the mean of its chunks' vectors, made unit length (one
chunk, for most sections: its own vector). Two sections are near-duplicates
when the cosine of their vectors is at least :data:`THRESHOLD` and their
lengths are comparable (the shorter at least :data:`LENGTH_RATIO` of the
longer, in words of the body: :func:`body_words`), so a short section is never
the duplicate of a long one that merely covers its topic. Cosine is symmetric
and so is the length test: when one section names another, the other names it
back (both ways). Two sections of one file are held to :data:`SAME_FILE`
(never, as shipped): there, a high cosine is most often one template written
twice for other ends (the "enable" and the "disable" procedure, the fully
and the partially disconnected install), not a copy. And each of the two is the other's nearest section, or
nearly: the pair's cosine is within :data:`GAP` of each one's best match
(:func:`pairs`). A section with a closer match elsewhere shares a template with
this one, not its text (two procedures' steps on one page); three copies of one
text are each other's nearest within a hair, and all pair. A section of fewer
than :data:`MIN_WORDS` words under its heading says too little to be compared
(a heading alone, a one-line note: its vector is mostly its breadcrumb's).

The threshold was chosen on labelled pairs of the product docs
(``benchmarks/near_duplicates.py``, benchmarks/README.md "Near-duplicate
sections"): the highest recall on the dev half at a precision of at least 0.9
there, the strictest setting of those that tie.

Pure: the engine hands in the vectors (``engine/near.py``); no I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# The four chosen together on the dev half of the labelled pairs (benchmarks/README.md,
# "Near-duplicate sections"): the highest recall at a precision of at least 0.9.
THRESHOLD = 0.855  # the cosine of two sections' vectors at and above which they are near-duplicates
LENGTH_RATIO = 0.9  # the shorter section's words over the longer's, at least
GAP = 0.03  # each of a pair within this cosine of its own nearest section
# The threshold of two sections of one file (Unit.file); None: never flagged
# (of the pairs of one file the earlier rule flagged, 1 in 6 was a near-duplicate).
SAME_FILE: float | None = None
MIN_WORDS = 20  # sections of fewer words under their heading are never compared
# A candidate section is found through one of its chunks scoring at least
# THRESHOLD - PREFILTER against the section (the exact test is on the mean).
PREFILTER = 0.1


@dataclass(frozen=True)
class Unit:
    """One section as compared: its key (whatever the caller names it by), the
    chunks' vectors (rows), its length (:func:`body_words`) and its file (None:
    unknown, never the same as another's)."""

    key: object
    vectors: np.ndarray  # (chunks, dim)
    words: int
    file: object = None

    def same_file(self, other: Unit) -> bool:
        return self.file is not None and self.file == other.file


_WORD = re.compile(r"\w+")


@lru_cache(maxsize=8192)
def _words(text: str) -> int:
    # each save checks the saved note again: its unchanged chunks are counted once
    return len(_WORD.findall(text))


def body_words(texts: Sequence[str], heading: str) -> int:
    """Words of a section's chunk texts (in order), its heading's not counted
    (the heading is in the first chunk's first two lines, ATX or setext)."""
    n = sum(_words(t) for t in texts)
    if texts and heading and heading in "\n".join(texts[0].split("\n", 2)[:2]):
        n -= len(_WORD.findall(heading))
    return max(n, 0)


def unit_vectors(units: Sequence[Unit]) -> np.ndarray:
    """:func:`unit_vector` of each unit, as rows (one product for all)."""
    m = np.stack(
        [u.vectors[0] if len(u.vectors) == 1 else u.vectors.mean(axis=0) for u in units]
    ).astype(np.float32)
    n = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(n == 0, 1.0, n)


def unit_vector(vectors: np.ndarray) -> np.ndarray:
    """The mean of a section's chunk vectors, unit length."""
    m = np.asarray(vectors, dtype=np.float32).reshape(-1, vectors.shape[-1]).mean(axis=0)
    return (m / (np.linalg.norm(m) or 1.0)).astype(np.float32)


def comparable(a: int, b: int, ratio: float = LENGTH_RATIO, min_words: int = MIN_WORDS) -> bool:
    """Whether sections of ``a`` and ``b`` words may be near-duplicates."""
    lo, hi = min(a, b), max(a, b)
    return lo >= min_words and lo >= ratio * hi


def pairs(
    mine: Sequence[Unit],
    others: Sequence[Unit],
    threshold: float = THRESHOLD,
    ratio: float = LENGTH_RATIO,
    min_words: int = MIN_WORDS,
    gap: float | None = GAP,
    peers: Sequence[Unit] = (),
    same_file: float | None = SAME_FILE,
) -> list[tuple[int, int, float]]:
    """(index in ``mine``, index in ``others``, cosine) of every near-duplicate
    pair, best first; a unit never pairs with one of the same key, and two
    units of one file only at ``same_file`` or more (None: never).

    With ``gap``, a pair stands only when its cosine is within ``gap`` of each
    unit's nearest unit of at least ``min_words`` words among ``mine``,
    ``others`` and ``peers`` (the caller hands in as ``peers`` the sections
    near the others that neither list holds); ``None`` leaves the test out."""
    if not mine or not others:
        return []
    sims = _cosines(unit_vectors(mine), unit_vectors(others))
    out = []
    for i, j in zip(*np.nonzero(sims >= threshold), strict=True):
        u, v, s = mine[int(i)], others[int(j)], float(sims[i, j])
        if u.key == v.key or not comparable(u.words, v.words, ratio, min_words):
            continue
        if u.same_file(v) and (same_file is None or s < same_file):
            continue
        out.append((int(i), int(j), s))
    if out and gap is not None:
        out = within_gap(out, mine, others, gap, peers, min_words)
    out.sort(key=lambda t: (-t[2], t[0], t[1]))
    return out


def within_gap(
    found: list[tuple[int, int, float]],
    mine: Sequence[Unit],
    others: Sequence[Unit],
    gap: float = GAP,
    peers: Sequence[Unit] = (),
    min_words: int = MIN_WORDS,
) -> list[tuple[int, int, float]]:
    """The pairs of ``found`` (:func:`pairs` without the gap) whose cosine is
    within ``gap`` of each unit's nearest (see :func:`pairs`)."""
    wanted = {mine[i].key for i, _, _ in found} | {others[j].key for _, j, _ in found}
    best = nearest([*mine, *others, *peers], min_words, wanted)
    return [
        (i, j, s)
        for i, j, s in found
        if s >= best[mine[i].key] - gap and s >= best[others[j].key] - gap
    ]


def nearest(
    units: Sequence[Unit], min_words: int = MIN_WORDS, of: set | None = None
) -> dict[object, float]:
    """Each unit's (of those keyed in ``of``, when given) cosine to its nearest
    other unit (by key) of at least ``min_words`` words; -1.0 when it has none."""
    pool = {u.key: u for u in units}
    keys = list(pool)
    rows = [k for k in keys if of is None or k in of]
    sims = _cosines(unit_vectors([pool[k] for k in rows]), unit_vectors([pool[k] for k in keys]))
    col = {k: c for c, k in enumerate(keys)}
    sims[np.arange(len(rows)), [col[k] for k in rows]] = -1.0
    sims[:, np.fromiter((pool[k].words < min_words for k in keys), bool, len(keys))] = -1.0
    return dict(zip(rows, sims.max(axis=1).tolist(), strict=True))


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # einsum's own loop, not BLAS: for a few hundred rows, BLAS's threads cost
    # more than the product on a busy machine (29 x 110 rows: 0.2 ms, against
    # 35 ms through a @ b.T at load 8 on 2 cores)
    return np.einsum("ij,kj->ik", a, b)
