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

BM25_K1 = 1.2  # FTS5's bm25() constants
BM25_B = 0.75


def bm25_idf(df: int, rows: int) -> float:
    """FTS5's IDF of a term in ``df`` of ``rows`` rows (floored at 1e-6 as FTS5 does)."""
    return max(1e-6, math.log((rows - df + 0.5) / (df + 0.5)))


# One term's occurrences as FTS5 reports them: the term, then for each occurrence
# its row id and its column (0 title, 1 headings, 2 body), comma-separated.
PostingText = tuple[str, str, str]


@dataclass(frozen=True)
class Phrase:
    """One phrase of a MATCH: an index term, or every term starting with it."""

    term: str
    prefix: bool = False


def _counts(ids: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct row ids, occurrences in each column (n, 3)) of one term's occurrences."""
    if len(ids) > 1 and (ids[1:] >= ids[:-1]).all():  # as FTS5 lists them: by row
        starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]]))
        rows = ids[starts]
        inv = np.repeat(np.arange(len(rows)), np.diff(np.append(starts, len(ids))))
    else:
        rows, inv = np.unique(ids, return_inverse=True)
    counts = np.bincount(inv * 3 + cols, minlength=3 * len(rows)).reshape(len(rows), 3)
    return rows, np.minimum(counts, 65535).astype(np.uint16)


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
        # term -> its column-weighted counts for _f_weights (float32: small whole numbers)
        self._f: dict[str, np.ndarray] = {}
        self._f_weights: tuple[float, float, float] | None = None
        self._norm: np.ndarray | None = None  # row -> k1 * (1 - b + b * D / avgD)

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
            self._drop(int(c) for c in chunk_ids)
            self._add(postings)
            dead = len(self.alive) - len(self._row)
            if dead > max(1024, len(self.alive) // 4):
                self._compact()

    def _drop(self, chunk_ids: Iterable[int]) -> None:
        """Mark the rows of these chunk ids dead (their postings stay until compaction)."""
        self._df.clear()
        self._norm = None
        for cid in chunk_ids:
            r = self._row.pop(cid, None)
            if r is not None:
                self.alive[r] = False
                self._tokens -= self.dl[r]

    def _add(self, postings: Iterable[PostingText]) -> None:
        parsed = []
        seen = np.zeros(0, dtype=bool)  # chunk id -> in these postings (ids are rowids: small)
        for term, docs, cols in postings:
            ids, counts = _counts(
                np.fromstring(docs, dtype=np.int64, sep=","),
                np.fromstring(cols, dtype=np.int64, sep=","),
            )
            top = int(ids.max()) + 1
            if top > len(seen):
                seen = np.concatenate(
                    [seen, np.zeros(max(top, 2 * len(seen)) - len(seen), dtype=bool)]
                )
            seen[ids] = True
            parsed.append((term, ids, counts))
        if not parsed:
            return
        new_ids = np.flatnonzero(seen)
        local_of = np.cumsum(seen, dtype=np.int32) - 1  # chunk id -> its place in new_ids
        del seen
        self._drop(new_ids.tolist())  # a chunk id still live gets a new row
        base = len(self.ids)
        self._row.update(zip(new_ids.tolist(), range(base, base + len(new_ids)), strict=True))
        self.ids = np.concatenate([self.ids, new_ids])
        self.alive = np.concatenate([self.alive, np.ones(len(new_ids), dtype=bool)])
        where, sizes = [], []
        parsed.reverse()
        while parsed:  # each term's chunk ids freed as its rows are made
            term, ids, counts = parsed.pop()
            local = local_of[ids]
            where.append(local)
            sizes.append(counts.sum(axis=1, dtype=np.uint32))
            seg = (local + np.int32(base), counts)
            segs = self._post.get(term)
            if segs is None:
                self._post[term] = [seg]
                self._sorted = None
            else:
                segs.append(seg)
                self._f.pop(term, None)
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
        self._f.clear()
        self._norm = None
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

    def _weighted(self, term: str, w: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
        """(rows, column-weighted counts) of a term, dead rows included."""
        if self._f_weights != w:
            self._f.clear()
            self._f_weights = w
        rows, counts = self._merged(term)
        f = self._f.get(term)
        if f is None:
            f = self._f[term] = (counts @ np.asarray(w, dtype=np.float32)).astype(np.float32)
        return rows, f

    def _live(self, phrase: Phrase, w: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
        """(rows, column-weighted counts) of the live rows holding the phrase."""
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
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32)
        parts = [self._weighted(t, w) for t in terms]
        rows, f = (
            parts[0] if len(parts) == 1 else (np.concatenate(x) for x in zip(*parts, strict=True))
        )
        if len(self._row) < len(self.alive):  # some rows are dead
            m = self.alive[rows]
            rows, f = rows[m], f[m]
        if len(parts) > 1:  # a row holding several of the terms counts once, with their sum
            rows, inv = np.unique(rows, return_inverse=True)
            f = np.bincount(inv, weights=f, minlength=len(rows))
        return rows, f

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
                        n = (
                            len(rows)
                            if len(self._row) == len(self.alive)
                            else int(self.alive[rows].sum())
                        )
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
            if self._norm is None:
                avgdl = self._tokens / n_rows if self._tokens > 0 else 1.0
                self._norm = BM25_K1 * (1.0 - BM25_B + BM25_B * self.dl / avgdl)
            w = (float(weights[0]), float(weights[1]), float(weights[2]))
            total = np.zeros(len(self.ids), dtype=np.float64)
            hit = np.zeros(len(self.ids), dtype=bool)
            cache: dict[Phrase, tuple[np.ndarray, np.ndarray]] = {}
            for p in phrases:
                if p not in cache:
                    cache[p] = self._live(p, w)
                rows, f = cache[p]
                if len(rows) == 0:
                    continue
                idf = bm25_idf(len(rows), n_rows)
                f = f.astype(np.float64)
                total[rows] += idf * (f * (BM25_K1 + 1.0)) / (f + self._norm[rows])
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
