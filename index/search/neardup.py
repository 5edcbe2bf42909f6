"""Near-duplicate sections: two sections that say the same thing, found by
their vectors.

A section's vector is the mean of its chunks' vectors, made unit length (one
chunk, for most sections: its own vector). Two sections are near-duplicates
when the cosine of their vectors is at least :data:`THRESHOLD` and their
lengths are comparable (the shorter at least :data:`LENGTH_RATIO` of the
longer, in words of the body: :func:`body_words`), so a short section is never
the duplicate of a long one that merely covers its topic. Cosine is symmetric
and so is the length test: when one section names another, the other names it
back (both ways). A section of fewer than :data:`MIN_WORDS` words under its
heading says too little to be compared (a heading alone, a one-line note: its
vector is mostly its breadcrumb's).

The threshold was chosen on labelled pairs of the product docs
(``benchmarks/near_duplicates.py``, benchmarks/README.md "Near-duplicate
sections"): precision on the held-out half at least 0.9.

Pure: the engine hands in the vectors (``engine/near.py``); no I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Both chosen together on the dev half of the labelled pairs (benchmarks/README.md,
# "Near-duplicate sections"): the highest recall at a precision of at least 0.9.
THRESHOLD = 0.94  # the cosine of two sections' vectors at and above which they are near-duplicates
LENGTH_RATIO = 0.9  # the shorter section's words over the longer's, at least
MIN_WORDS = 20  # sections of fewer words under their heading are never compared
# A candidate section is found through one of its chunks scoring at least
# THRESHOLD - PREFILTER against the section (the exact test is on the mean).
PREFILTER = 0.1


@dataclass(frozen=True)
class Unit:
    """One section as compared: its key (whatever the caller names it by), the
    chunks' vectors (rows) and its length (:func:`body_words`)."""

    key: object
    vectors: np.ndarray  # (chunks, dim)
    words: int


_WORD = re.compile(r"\w+")


def body_words(texts: Sequence[str], heading: str) -> int:
    """Words of a section's chunk texts (in order), its heading's not counted
    (the heading is in the first chunk's first two lines, ATX or setext)."""
    n = sum(len(_WORD.findall(t)) for t in texts)
    if texts and heading and heading in "\n".join(texts[0].split("\n", 2)[:2]):
        n -= len(_WORD.findall(heading))
    return max(n, 0)


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
) -> list[tuple[int, int, float]]:
    """(index in ``mine``, index in ``others``, cosine) of every near-duplicate
    pair, best first; a unit never pairs with one of the same key."""
    if not mine or not others:
        return []
    a = np.stack([unit_vector(u.vectors) for u in mine])
    b = np.stack([unit_vector(u.vectors) for u in others])
    sims = a @ b.T
    out = []
    for i, j in zip(*np.nonzero(sims >= threshold), strict=True):
        u, v = mine[int(i)], others[int(j)]
        if u.key != v.key and comparable(u.words, v.words, ratio, min_words):
            out.append((int(i), int(j), float(sims[i, j])))
    out.sort(key=lambda t: (-t[2], t[0], t[1]))
    return out
