"""Cutting one unit (a section, or small sections merged: :mod:`.chunk`) into
pieces whose embedded texts fit the model's window.

* An over-budget chunk is cut at block boundaries (headings, paragraphs, lists,
  tables, fences). A single block over the budget is cut too, never truncated:
  a list between items, a fence between lines (each piece's embedded text is
  re-wrapped in the fence's marker and info string), anything else at sentence,
  then word, then token boundaries. No cut ever falls inside a fence except
  between its lines, with the re-wrap, and never inside a fence that fits the
  window on its own (it gets a chunk of its own instead).
* A run with no whitespace (a pasted blob, minified code, one enormous word) is
  cut between model tokens; a single token wider than ``max_chars`` characters
  (WordPiece reads any word over 100 characters as one ``[UNK]``) is cut into
  ``max_chars`` pieces. No chunk is longer than ``max_chars`` characters.

Linear time: each section is tokenized once, with character offsets
(:meth:`ModelTokenizer.token_spans`), and every candidate cut is priced from
those offsets (tokens between two offsets = a difference of two indexes), so
choosing a cut never re-tokenizes. The chosen pieces' embedded texts are then
counted in one batch by the real tokenizer: that count is the chunk's
``tokens``, and a piece the offsets mispriced (a cut inside a word, a tokenizer
whose tokens span whitespace) is re-split with real counts.
"""

from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..model.tokenizer import ModelTokenizer, TokenSpans
from .document import ParsedDocument

log = logging.getLogger(__name__)

# Priority of a cut: lower is coarser and preferred. A cut that would leave a
# heading alone at the end of a piece comes after token cuts: it is taken only
# where a token cut would fall inside a fence that fits the window on its own.
BLOCK, ITEM, SENTENCE, WORD, AFTER_HEADING = 0, 1, 2, 3, 4

ROUND = 256  # pieces chosen from the offsets before they are counted
MAX_WORD_REREAD = 256  # characters of a word re-tokenized when a piece starts inside it

_SENTENCE_END = re.compile(r"[.!?;:][\"')\]]*\s+")
_WHITESPACE = re.compile(r"\s+")


@dataclass
class _Fence:
    start: int  # offset of the opening line
    body: int  # offset of the first line after the opener
    end: int  # offset just past the fence (after the closing line, or doc end)
    opener: str  # what a continuation piece starts with (the opening line)
    closer: str  # what a piece cut inside the fence ends with
    opener_cost: int = 0  # tokens, specials excluded
    closer_cost: int = 0
    fits: bool = False  # the whole fence fits the window on its own


# (start, end) relative to the unit, embedded text, tokens
_Piece = tuple[int, int, str, int]


class _Settings(Protocol):
    """What a unit reads of the chunker (:class:`.chunk.Chunker`)."""

    max_chars: int
    stats: dict[str, int]


class Chunking(Protocol):
    """The document being chunked, as a unit reads it (:class:`.chunk._DocChunker`)."""

    doc: ParsedDocument
    text: str
    tok: ModelTokenizer
    budget: int
    specials: int
    block_lines: list[int]
    sec_starts: list[int]

    @property
    def c(self) -> _Settings: ...

    def section_spans(self, i: int) -> TokenSpans: ...

    def prefix(self, off: int) -> tuple[str, int]: ...

    def _count(self, texts: list[str]) -> list[int]: ...


class Unit:
    """Splits one unit ``[a, b)`` (a section, or small sections merged) into
    pieces whose embedded texts fit the budget."""

    def __init__(self, d: Chunking, a: int, b: int, first: int, last: int):
        self.d = d
        self.a, self.b = a, b
        self.text = d.text
        self.budget = d.budget
        self.specials = d.specials
        self.max_chars = d.c.max_chars
        spans = TokenSpans.concat([d.section_spans(i) for i in range(first, last + 1)])
        self.starts, self.ends = spans.starts, spans.ends
        self.word_starts = np.flatnonzero(spans.word_start)  # indexes of tokens that start a word
        self.fences: list[_Fence] = []
        self.fence_starts: list[int] = []
        self._collect_cuts()

    # -- token arithmetic on the one pass -------------------------------------

    def _first_token(self, off: int) -> tuple[int, int]:
        """(index of the first token starting at or after ``off``, 1 if a token
        straddles ``off`` else 0)."""
        i = int(np.searchsorted(self.starts, off, "left"))
        done = int(np.searchsorted(self.ends, off, "right"))
        return i, int(i > done)

    def _start(self, a: int) -> tuple[int, int]:
        """How a piece starting at ``a`` is priced: (index of the first token of
        the one pass it holds whole, tokens it holds before that token). A piece
        that starts inside a word (a cut between word pieces) re-reads that word
        from ``a``: its rest is tokenized anew (``##``-less), so it is counted anew."""
        first, straddle = self._first_token(a)
        if straddle or first >= len(self.starts) or self.starts[first] != a:
            return first, straddle
        # Token ``first`` starts at ``a``: does it continue a word?
        w = int(np.searchsorted(self.word_starts, first, "left"))
        if w < len(self.word_starts) and self.word_starts[w] == first:
            return first, 0
        nxt = int(self.word_starts[w]) if w < len(self.word_starts) else len(self.starts)
        end = int(self.ends[nxt - 1])
        if end - a > MAX_WORD_REREAD:
            return first, 1  # a very long word (not WordPiece): priced roughly, counted later
        return nxt, self.d.tok.count(self.text[a:end]) - self.specials

    def tokens(self, a: int, b: int) -> int:
        """Body tokens of ``text[a:b]`` by the offsets (a token cut at the end counts once)."""
        if b <= a:
            return 0
        i, before = self._start(a)
        j = int(np.searchsorted(self.ends, b, "right"))
        return max(0, j - i) + before + self._first_token(b)[1]

    # -- cut candidates -----------------------------------------------------

    def _collect_cuts(self) -> None:
        d, doc, text = self.d, self.d.doc, self.text
        lines = doc._line_starts
        offs: list[int] = []
        prios: list[int] = []

        def add(off: int, prio: int) -> None:
            offs.append(off)
            prios.append(prio)

        def add_all(new: list[int], prio: int) -> None:
            offs.extend(new)
            prios.extend([prio] * len(new))

        first_line, last_line = doc.offset_line(self.a), doc.offset_line(self.b - 1) + 1
        lo = bisect.bisect_left(d.block_lines, first_line)
        hi = bisect.bisect_left(d.block_lines, last_line)
        after_heading = False
        for b in doc.blocks[lo:hi]:
            start = doc.line_offset(b.start_line)
            end = doc.line_offset(b.end_line)
            add(start, AFTER_HEADING if after_heading else BLOCK)
            after_heading = b.kind == "heading"
            if b.kind == "fence":
                nl = text.find("\n", start, end)
                body = doc.line_offset(b.start_line + 1)
                opener = text[start : nl if nl >= 0 else end].strip()
                self.fences.append(_Fence(start, body, end, opener, b.fence_markup))
                add_all(lines[b.start_line + 2 : b.end_line], ITEM)
                add(end, BLOCK)  # the fence's end, even when blank lines follow
                self._text_cuts(body, end, add_all, allow_sentences=False)
            elif b.kind in ("bullet_list", "ordered_list"):
                add_all([doc.line_offset(x) for x, _ in b.items], ITEM)
                self._text_cuts(start, end, add_all, allow_sentences=True)
            elif b.kind in ("paragraph", "blockquote", "table", "html_block", "code_block"):
                if b.kind in ("table", "html_block", "code_block", "blockquote"):
                    add_all(lines[b.start_line + 1 : b.end_line], ITEM)
                self._text_cuts(start, end, add_all, allow_sentences=b.kind != "code_block")
        # Sections start at heading lines (or the preamble's first line).
        s_lo = bisect.bisect_right(d.sec_starts, self.a)
        s_hi = bisect.bisect_left(d.sec_starts, self.b)
        add_all(d.sec_starts[s_lo:s_hi], BLOCK)

        self.fences.sort(key=lambda f: f.start)
        self.fence_starts = [f.start for f in self.fences]
        for f in self.fences:
            self._price_fence(f)

        # One cut per offset, at its coarsest priority, inside the unit.
        o = np.asarray(offs, dtype=np.int64)
        p = np.asarray(prios, dtype=np.int8)
        order = np.lexsort((p, o))
        o, p = o[order], p[order]
        keep = np.ones(len(o), dtype=bool)
        keep[1:] = o[1:] != o[:-1]
        keep &= (o > self.a) & (o <= self.b)
        self.cut_off, self.cut_prio = o[keep], p[keep]
        # Per cut: tokens that end at or before it, and whether a token straddles it.
        self.cut_done = np.searchsorted(self.ends, self.cut_off, "right").astype(np.int64)
        started = np.searchsorted(self.starts, self.cut_off, "left")
        self.cut_straddle = (started > self.cut_done).astype(np.int64)
        # A piece that ends inside a fence pays for the re-wrapping closer; no
        # piece ends inside a fence that fits on its own.
        self.cut_closer = np.zeros(len(self.cut_off), dtype=np.int64)
        self.cut_banned = np.zeros(len(self.cut_off), dtype=bool)
        for f in self.fences:
            lo_ = np.searchsorted(self.cut_off, f.body, "right")
            hi_ = np.searchsorted(self.cut_off, f.end, "left")
            self.cut_closer[lo_:hi_] = f.closer_cost
            if f.fits:
                self.cut_banned[np.searchsorted(self.cut_off, f.start, "right") : hi_] = True

    def _text_cuts(self, a: int, b: int, add_all, allow_sentences: bool) -> None:
        if allow_sentences:
            add_all([m.end() for m in _SENTENCE_END.finditer(self.text, a, b)], SENTENCE)
        add_all([m.end() for m in _WHITESPACE.finditer(self.text, a, b)], WORD)

    def _price_fence(self, f: _Fence) -> None:
        tok, limit = self.d.tok, self.budget // 8
        short = len(f.opener) <= 4 * self.budget and len(f.closer) <= 4 * self.budget
        if short:
            f.opener_cost = tok.count(f.opener) - self.specials
            f.closer_cost = tok.count(f.closer) - self.specials
        if not short or f.opener_cost > limit or f.closer_cost > limit:
            # An absurd marker or info string: re-wrap with a short one instead.
            marker = f.closer[:3] or "```"
            info = f.opener.lstrip(f.closer[:1]).split()
            f.opener = marker + (info[0][:16] if info else "")
            f.closer = marker
            f.opener_cost = tok.count(f.opener) - self.specials
            f.closer_cost = tok.count(f.closer) - self.specials
        if f.end - f.start > self.max_chars:
            return
        est = self.d.prefix(f.start)[1] + self.tokens(f.start, f.end) + self.specials
        if est <= self.budget + 8:  # close enough to ask the tokenizer
            f.fits = tok.count(self.embedding_text(f.start, f.end)) <= self.budget

    # -- embedded text ------------------------------------------------------

    def _fence_at(self, off: int) -> _Fence | None:
        i = bisect.bisect_right(self.fence_starts, off) - 1
        if i >= 0:
            f = self.fences[i]
            if f.body <= off < f.end:
                return f
        return None

    def embedding_text(self, a: int, b: int) -> str:
        body = self.text[a:b]
        fa = self._fence_at(a)
        if fa is not None and a > fa.start:
            body = fa.opener + "\n" + body
        fb = self._fence_at(b) if b < len(self.text) else None
        if fb is not None and b > fb.body and b < fb.end:
            if not body.endswith("\n"):
                body += "\n"
            body += fb.closer
        return self.d.prefix(a)[0] + body.strip("\n")

    def _room(self, a: int) -> int:
        """Body tokens (closer included) a piece starting at ``a`` may hold."""
        fa = self._fence_at(a)
        opener = fa.opener_cost if fa is not None and a > fa.start else 0
        return self.budget - self.specials - self.d.prefix(a)[1] - opener

    def _closer_cost(self, b: int) -> int:
        f = self._fence_at(b) if b < len(self.text) else None
        return f.closer_cost if f is not None and f.body < b < f.end else 0

    # -- splitting ------------------------------------------------------------

    def pieces(self) -> list[_Piece]:
        """The unit's pieces (offsets relative to the unit), each counted by the
        real tokenizer. Pieces are chosen from the offsets a round at a time and
        counted in one batch; the first one the offsets mispriced is cut again
        with real counts, and the next round starts after it (short rounds
        after a miss, doubling while the prices hold)."""
        out: list[_Piece] = []
        a, b = self.a, self.b
        size = ROUND
        while a < b:
            spans: list[tuple[int, int]] = []
            x = a
            while x < b and len(spans) < size:
                cut = self._next_cut(x, b)
                spans.append((x, cut))
                x = cut
            texts = [self.embedding_text(p, q) for p, q in spans]
            size = min(ROUND, size * 2)
            for (p, q), t, n in zip(spans, texts, self.d._count(texts), strict=True):
                missed = n > self.budget
                if missed:
                    self.d.c.stats["resplit"] += 1
                    q = self._exact_cut(p, q)
                    t = self.embedding_text(p, q)
                    n = self.d.tok.count(t)
                    size = 4
                out.append((p - self.a, q - self.a, t, n))
                a = q
                if missed:
                    break
        return out

    def _next_cut(self, a: int, b: int) -> int:
        """End of the piece that starts at ``a``: ``b`` if the rest fits, else the
        farthest cut that fits at the coarsest level that has one, priced from the
        token offsets."""
        room = self._room(a)
        first, straddle = self._start(a)
        limit = a + self.max_chars
        if b <= limit and self.tokens(a, b) + self._closer_cost(b) <= room:
            return b
        # No piece reaches past the start of the token that would overflow.
        k = first + max(0, room - straddle)
        end = min(b, limit, int(self.starts[k]) if k < len(self.starts) else b)
        lo = int(np.searchsorted(self.cut_off, a, "right"))
        hi = int(np.searchsorted(self.cut_off, end, "right"))
        if hi > lo:
            body = self.cut_done[lo:hi] - first + straddle + self.cut_straddle[lo:hi]
            ok = (body + self.cut_closer[lo:hi] <= room) & ~self.cut_banned[lo:hi]
            prio = self.cut_prio[lo:hi]
            for level in (BLOCK, ITEM, SENTENCE, WORD):
                idx = np.flatnonzero(ok & (prio <= level))
                if idx.size:
                    j = int(idx[-1])
                    # A sentence cut that leaves a tiny piece: prefer packing words.
                    if level == SENTENCE and body[j] < self.budget // 3:
                        continue
                    return int(self.cut_off[lo + j])
        cut = self._token_cut(a, b, first, straddle, room)
        if hi > lo and self._in_fitting_fence(cut):
            idx = np.flatnonzero(ok)
            if idx.size:
                return int(self.cut_off[lo + int(idx[-1])])
        return cut

    def _in_fitting_fence(self, off: int) -> bool:
        i = bisect.bisect_right(self.fence_starts, off) - 1
        return i >= 0 and self.fences[i].fits and self.fences[i].start < off < self.fences[i].end

    def _token_cut(self, a: int, b: int, first: int, straddle: int, room: int) -> int:
        """No whitespace cut fits (one enormous word, a blob): cut between model
        tokens, or inside a token wider than ``max_chars`` characters."""
        limit = min(b, a + self.max_chars)
        k = first + room - straddle - 1  # the last token that fits
        while k >= first:
            cut = min(int(self.ends[k]) if k < len(self.ends) else limit, limit)
            over = self._closer_cost(cut) - (room - straddle - (k - first + 1))
            if over <= 0:
                return max(cut, a + 1)
            k -= over
        return limit if first >= len(self.starts) or self.starts[first] >= limit else a + 1

    # -- exact fallback -------------------------------------------------------

    def fits(self, a: int, b: int) -> bool:
        if b - a > self.max_chars:
            return False
        return self.d.tok.count(self.embedding_text(a, b)) <= self.budget

    def _exact_cut(self, a: int, b: int) -> int:
        """The farthest cut in ``(a, b)`` whose piece fits by the real tokenizer,
        at the coarsest level that has one (binary searches: a few counts of
        one window each)."""
        lo = int(np.searchsorted(self.cut_off, a, "right"))
        hi = int(np.searchsorted(self.cut_off, b, "left"))
        offs, prio = self.cut_off[lo:hi], self.cut_prio[lo:hi]
        for level in (BLOCK, ITEM, SENTENCE, WORD, AFTER_HEADING):
            cut = self._farthest_fitting(a, [int(o) for o in offs[prio <= level]])
            if cut is not None:
                return cut
        return self._token_cut_exact(a, b)

    def _farthest_fitting(self, a: int, offs: list[int]) -> int | None:
        lo, hi, best = 0, len(offs) - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            if self.fits(a, offs[mid]):
                best = offs[mid]
                lo = mid + 1
            else:
                hi = mid - 1
        return best

    def _token_cut_exact(self, a: int, b: int) -> int:
        seg = self.text[a : min(b, a + self.max_chars)]
        ends = sorted({a + e for _, e in self.d.tok.offsets(seg) if 0 < e < len(seg)})
        best = self._farthest_fitting(a, ends if a + len(seg) >= b else [*ends, a + len(seg)])
        if best is None:
            # Not one token fits beside the breadcrumb (cannot happen with the
            # breadcrumb capped at half the budget); one character still progresses.
            log.debug("%s: no token fits at offset %d", self.d.doc.path, a)
            return a + 1
        return best
