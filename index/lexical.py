"""FTS5's BM25, answered from memory.

FTS5 ranks a query by calling ``bm25()`` on every row that holds any query
word; at 100k chunks a typical query matches most rows and that scoring, not
the match, is the time (about 1.3 µs a row). This module keeps the same
postings in numpy -- per index term, the rows holding it and the term's count
in each of the three columns (title, headings, body) -- read from FTS5 itself
(its ``fts5vocab`` instance table), so terms are exactly the index's (porter
stems, folded diacritics). A query's BM25 is then a few vector operations over
the postings of its words, and the scores are FTS5's own formula:

    score = sum over phrases of idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgD))

with ``idf = max(1e-6, ln((N - n + 0.5) / (n + 0.5)))``, ``f`` the column-weighted
count, ``D`` the row's tokens, ``avgD`` the mean over rows and ``n`` the rows
holding the phrase. Rows removed or rewritten are masked out and re-added from
their new text; the postings are compacted when a quarter of the rows is dead.

Phrases of one term and prefix phrases are answered here; anything else (a
word FTS5 splits into several tokens, like ``foo_bar``) stays with FTS5.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

K1 = 1.2  # FTS5's bm25() constants
B = 0.75

# One term's postings as FTS5 reports them: term, then comma-separated row ids
# and the term's count in each column (title, headings, body), row by row.
PostingText = tuple[str, str, str, str, str]


@dataclass(frozen=True)
class Phrase:
    """One phrase of a MATCH: an index term, or every term starting with it."""

    term: str
    prefix: bool = False


class LexicalIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clear()

    def _clear(self) -> None:
        self.ids = np.zeros(0, dtype=np.int64)  # row -> chunk id
        self.alive = np.zeros(0, dtype=bool)
        self.dl = np.zeros(0, dtype=np.float64)  # row -> tokens in the row
        self._row: dict[int, int] = {}  # chunk id -> row
        # term -> segments of (rows int32, counts uint16 (n, 3)); merged when read
        self._post: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        self._sorted: list[str] | None = None
        self._tokens = 0.0  # tokens over the live rows
        self._df: dict[str, int] = {}  # term -> live rows holding it (cleared on change)

    def __len__(self) -> int:
        return len(self._row)

    # -- building -------------------------------------------------------------

    def reset(self, postings: Iterable[PostingText]) -> None:
        """Replace everything with the postings of a whole FTS5 index."""
        with self._lock:
            self._clear()
            self._add(postings)

    def refresh(self, chunk_ids: Iterable[int], postings: Iterable[PostingText]) -> None:
        """Rows ``chunk_ids`` were deleted or rewritten: drop what the index held
        for them, then add ``postings`` (their current text's, if any)."""
        with self._lock:
            self._df.clear()
            for cid in chunk_ids:
                r = self._row.pop(int(cid), None)
                if r is not None:
                    self.alive[r] = False
                    self._tokens -= self.dl[r]
            self._add(postings)
            dead = len(self.alive) - len(self._row)
            if dead > max(1024, len(self.alive) // 4):
                self._compact()

    def _add(self, postings: Iterable[PostingText]) -> None:
        parsed = []
        for term, docs, c0, c1, c2 in postings:
            ids = np.fromstring(docs, dtype=np.int64, sep=",")
            counts = np.stack(
                [np.fromstring(c, dtype=np.int64, sep=",") for c in (c0, c1, c2)], axis=1
            )
            parsed.append((term, ids, np.minimum(counts, 65535).astype(np.uint16)))
        if not parsed:
            return
        self._df.clear()
        new_ids = np.unique(np.concatenate([ids for _, ids, _ in parsed]))
        for cid in new_ids.tolist():  # a chunk id still live gets a new row
            r = self._row.pop(cid, None)
            if r is not None:
                self.alive[r] = False
                self._tokens -= self.dl[r]
        base = len(self.ids)
        self._row.update(zip(new_ids.tolist(), range(base, base + len(new_ids)), strict=True))
        self.ids = np.concatenate([self.ids, new_ids])
        self.alive = np.concatenate([self.alive, np.ones(len(new_ids), dtype=bool)])
        where, sizes = [], []
        for term, ids, counts in parsed:
            local = np.searchsorted(new_ids, ids)
            where.append(local)
            sizes.append(counts.sum(axis=1, dtype=np.float64))
            seg = ((local + base).astype(np.int32), counts)
            segs = self._post.get(term)
            if segs is None:
                self._post[term] = [seg]
                self._sorted = None
            else:
                segs.append(seg)
        dl = np.bincount(np.concatenate(where), np.concatenate(sizes), minlength=len(new_ids))
        self.dl = np.concatenate([self.dl, dl])
        self._tokens += float(dl.sum())

    def _compact(self) -> None:
        keep = self.alive
        remap = np.cumsum(keep, dtype=np.int64) - 1
        post: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        for term in list(self._post):
            rows, counts = self._merged(term)
            m = keep[rows]
            if m.any():
                post[term] = [(remap[rows[m]].astype(np.int32), counts[m])]
        self._post = post
        self._sorted = None
        self.ids = self.ids[keep]
        self.dl = self.dl[keep]
        self.alive = np.ones(len(self.ids), dtype=bool)
        self._row = {int(c): r for r, c in enumerate(self.ids.tolist())}

    def _merged(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        segs = self._post[term]
        if len(segs) > 1:
            segs[:] = [(np.concatenate([s[0] for s in segs]), np.concatenate([s[1] for s in segs]))]
        return segs[0]

    # -- reading --------------------------------------------------------------

    def _live(self, phrase: Phrase) -> tuple[np.ndarray, np.ndarray]:
        """(rows, counts per column) of the live rows holding the phrase."""
        if phrase.prefix:
            if self._sorted is None:
                self._sorted = sorted(self._post)
            i = bisect.bisect_left(self._sorted, phrase.term)
            terms = []
            while i < len(self._sorted) and self._sorted[i].startswith(phrase.term):
                terms.append(self._sorted[i])
                i += 1
        else:
            terms = [phrase.term] if phrase.term in self._post else []
        if not terms:
            return np.zeros(0, dtype=np.int32), np.zeros((0, 3), dtype=np.uint16)
        parts = [self._merged(t) for t in terms]
        rows = np.concatenate([p[0] for p in parts])
        counts = np.concatenate([p[1] for p in parts]).astype(np.int64)
        if len(self._row) < len(self.alive):  # some rows are dead
            m = self.alive[rows]
            rows, counts = rows[m], counts[m]
        if len(parts) > 1:  # a row holding several of the terms counts once, with their sum
            rows, inv = np.unique(rows, return_inverse=True)
            summed = np.zeros((len(rows), 3), dtype=np.int64)
            np.add.at(summed, inv, counts)
            counts = summed
        return rows, counts

    def doc_freq(self, terms: Iterable[str]) -> dict[str, int]:
        """term -> live rows holding it."""
        with self._lock:
            out = {}
            for t in terms:
                n = self._df.get(t)
                if n is None:
                    if t not in self._post:
                        n = 0
                    else:
                        rows = self._merged(t)[0]
                        n = len(rows) if len(self._row) == len(self.alive) else int(self.alive[rows].sum())
                    self._df[t] = n
                out[t] = n
            return out

    def search(
        self, phrases: Sequence[Phrase], limit: int, weights: tuple[float, float, float]
    ) -> list[tuple[int, float]]:
        """(chunk id, BM25: higher is better) of the best rows, as FTS5's
        ``bm25(weights)`` ranks an OR of ``phrases`` (a phrase given twice
        counts twice, as in FTS5)."""
        with self._lock:
            n_rows = len(self._row)
            if not phrases or n_rows == 0 or limit <= 0:
                return []
            avgdl = self._tokens / n_rows if self._tokens > 0 else 1.0
            w = np.asarray(weights, dtype=np.float64)
            total = np.zeros(len(self.ids), dtype=np.float64)
            hit = np.zeros(len(self.ids), dtype=bool)
            cache: dict[Phrase, tuple[np.ndarray, np.ndarray]] = {}
            for p in phrases:
                if p not in cache:
                    cache[p] = self._live(p)
                rows, counts = cache[p]
                if len(rows) == 0:
                    continue
                idf = max(1e-6, math.log((n_rows - len(rows) + 0.5) / (len(rows) + 0.5)))
                f = counts @ w
                norm = K1 * (1.0 - B + B * self.dl[rows] / avgdl)
                total[rows] += idf * (f * (K1 + 1.0)) / (f + norm)
                hit[rows] = True
            cand = np.flatnonzero(hit)
            if len(cand) == 0:
                return []
            scores = total[cand]
            if len(cand) > limit:
                top = np.argpartition(-scores, limit - 1)[:limit]
                cand, scores = cand[top], scores[top]
            order = np.lexsort((self.ids[cand], -scores))
            return [(int(self.ids[cand[i]]), float(scores[i])) for i in order]
