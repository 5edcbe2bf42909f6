"""Section chunking sized in the embedding model's own tokens.

A section runs from a heading to the next heading of any level (the preamble
before the first heading is section 0). Sections become chunks:

* Every section is its own chunk by default (``floor`` 0), so every section has
  its own vector and its own score. With a ``floor`` above 0, a section whose
  body is below it merges forward into the next section (the chunk keeps the
  first heading; every covered section stays in the chunk's ``sections``).
* A chunk's *embedded text* is ``breadcrumb + "\\n\\n" + text`` and always fits the
  model's window (special tokens included), verified with the real tokenizer.
* An over-budget chunk is cut at block boundaries (headings, paragraphs, lists,
  tables, fences). A single block over the budget is cut too, never truncated:
  a list between items, a fence between lines (each piece's embedded text is
  re-wrapped in the fence's marker and info string), anything else at sentence,
  then word, then token boundaries. No cut ever falls inside a fence except
  between its lines, with the re-wrap.
* Chunks tile the body: consecutive character ranges, no overlap, no gap except
  whitespace-only text outside any section (blank lines before the first heading).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from dataclasses import dataclass, field

from .model import ModelTokenizer
from .parse import Block, ParsedDocument

# Priority of a cut: lower is coarser and preferred.
BLOCK, ITEM, SENTENCE, WORD, TOKEN = 0, 1, 2, 3, 4

DEFAULT_FLOOR = 0  # body tokens; smaller sections merge forward (0: none do)

_SENTENCE_END = re.compile(r"[.!?;:][\"')\]]*\s+")
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    heading: str  # heading of the section the chunk starts in (title for the preamble)
    heading_path: tuple[str, ...]  # breadcrumb parts: (title, h2, h3, ...)
    start_line: int  # 0-based
    end_line: int  # exclusive
    start_offset: int  # character offsets into the normalised text
    end_offset: int
    text: str  # raw source text, for display
    embedding_text: str  # what the model reads: breadcrumb + blank line + text
    tokens: int  # tokens of embedding_text, special tokens included
    sections: tuple[int, ...] = field(default=())  # ordinals of the sections it covers

    @property
    def breadcrumb(self) -> str:
        return " > ".join(self.heading_path)

    @property
    def text_hash(self) -> str:
        return hashlib.sha1(self.embedding_text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class _Fence:
    start: int  # offset of the opening line
    body: int  # offset of the first line after the opener
    end: int  # offset just past the fence (after the closing line, or doc end)
    opener: str
    closer: str


class Chunker:
    def __init__(
        self, tokenizer: ModelTokenizer, budget: int | None = None, floor: int = DEFAULT_FLOOR
    ):
        self.tok = tokenizer
        window = tokenizer.window
        self.budget = min(budget, window) if budget else window
        self.floor = floor

    @property
    def signature(self) -> str:
        """Changes whenever the chunking of the same text could change."""
        return f"v1:{self.tok.name}:{self.budget}:{self.floor}"

    # -- public -------------------------------------------------------------

    def chunk(self, doc: ParsedDocument) -> list[Chunk]:
        if not doc.sections:
            return []
        return _DocChunker(self, doc).run()


class _DocChunker:
    def __init__(self, chunker: Chunker, doc: ParsedDocument):
        self.c = chunker
        self.doc = doc
        self.text = doc.text
        self.sec_starts = [doc.line_offset(s.start_line) for s in doc.sections]
        self.sec_ends = [doc.line_offset(s.end_line) for s in doc.sections]
        self.fences: list[_Fence] = []
        self.cuts: list[tuple[int, int]] = []  # (offset, priority)
        self._collect_cuts(doc.blocks)
        self.cut_offsets = [o for o, _ in self.cuts]
        self._prefix_cache: dict[int, str] = {}
        # WordPiece maps an over-long word (>100 chars) to one [UNK]: no token is
        # wider than that, so a piece longer than budget*128 characters cannot fit.
        self.max_chars = chunker.budget * 128

    # -- cut candidates -----------------------------------------------------

    def _collect_cuts(self, blocks: list[Block]) -> None:
        doc = self.doc
        cuts: dict[int, int] = {}

        def add(off: int, prio: int) -> None:
            if off not in cuts or cuts[off] > prio:
                cuts[off] = prio

        after_heading = False
        for b in blocks:
            start = doc.line_offset(b.start_line)
            end = doc.line_offset(b.end_line)
            # Never leave a heading alone at the end of a piece: the block right
            # after a heading is not a block-level cut.
            if not after_heading:
                add(start, BLOCK)
            after_heading = b.kind == "heading"
            if b.kind == "fence":
                lines = self.text[start:end].split("\n")
                opener = lines[0].strip()
                closer = b.fence_markup
                body = doc.line_offset(b.start_line + 1)
                self.fences.append(_Fence(start, body, end, opener, closer))
                for ln in range(b.start_line + 2, b.end_line):
                    add(doc.line_offset(ln), ITEM)
                self._text_cuts(body, end, add, allow_sentences=False)
            elif b.kind in ("bullet_list", "ordered_list"):
                for a, _ in b.items:
                    add(doc.line_offset(a), ITEM)
                self._text_cuts(start, end, add, allow_sentences=True)
            elif b.kind in ("paragraph", "blockquote", "table", "html_block", "code_block"):
                if b.kind in ("table", "html_block", "code_block", "blockquote"):
                    for ln in range(b.start_line + 1, b.end_line):
                        add(doc.line_offset(ln), ITEM)
                self._text_cuts(start, end, add, allow_sentences=b.kind != "code_block")
        # Sections start at heading lines (or the preamble's first line).
        for off in self.sec_starts:
            add(off, BLOCK)
        self.cuts = sorted(cuts.items())
        self.fences.sort(key=lambda f: f.start)

    def _text_cuts(self, a: int, b: int, add, allow_sentences: bool) -> None:
        seg = self.text[a:b]
        if allow_sentences:
            for m in _SENTENCE_END.finditer(seg):
                add(a + m.end(), SENTENCE)
        for m in _WHITESPACE.finditer(seg):
            add(a + m.end(), WORD)

    # -- embedded text ------------------------------------------------------

    def _section_at(self, off: int) -> int:
        i = bisect.bisect_right(self.sec_starts, off) - 1
        return max(0, i)

    def _prefix(self, off: int) -> str:
        i = self._section_at(off)
        p = self._prefix_cache.get(i)
        if p is None:
            p = self._short_breadcrumb(self.doc.sections[i].path) + "\n\n"
            self._prefix_cache[i] = p
        return p

    def _short_breadcrumb(self, path: tuple[str, ...]) -> str:
        """The breadcrumb, shortened when it would take over half the budget
        (absurdly long headings): title > … > own heading, then cut by tokens."""
        limit = self.c.budget // 2
        full = " > ".join(path)
        if self.c.tok.count(full) <= limit:
            return full
        short = " > ".join((path[0], "…", path[-1])) if len(path) > 2 else full
        if self.c.tok.count(short) <= limit:
            return short
        offs = self.c.tok.offsets(short)
        keep = limit - self.c.tok.special_overhead() - 1
        return short[: offs[keep][0]].rstrip() + " …" if keep < len(offs) else short

    def _fence_at(self, off: int) -> _Fence | None:
        for f in self.fences:
            if f.body <= off < f.end:
                return f
            if f.start > off:
                break
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
        return self._prefix(a) + body.strip("\n")

    def fits(self, a: int, b: int) -> bool:
        if b - a > self.max_chars:
            return False  # cannot fit: a word piece never spans this many characters
        return self.c.tok.count(self.embedding_text(a, b)) <= self.c.budget

    def body_tokens(self, a: int, b: int) -> int:
        if b - a > max(self.c.floor, 1) * 100:
            return self.c.budget * 2  # surely large; don't tokenize megabytes to know it
        return self.c.tok.count(self.text[a:b]) - self.c.tok.special_overhead()

    # -- algorithm ----------------------------------------------------------

    def run(self) -> list[Chunk]:
        units = self._merged_units()
        spans: list[tuple[int, int]] = []
        for a, b in units:
            spans.extend(self._split(a, b))
        return [self._make_chunk(i, a, b) for i, (a, b) in enumerate(spans)]

    def _merged_units(self) -> list[tuple[int, int]]:
        units: list[tuple[int, int]] = []
        n = len(self.doc.sections)
        i = 0
        while i < n:
            a, b = self.sec_starts[i], self.sec_ends[i]
            while i + 1 < n and self.body_tokens(a, b) < self.c.floor:
                i += 1
                b = self.sec_ends[i]
            if self.text[a:b].strip():
                units.append((a, b))
            elif units:
                # Whitespace-only section text joins the previous unit (tiling).
                units[-1] = (units[-1][0], b)
            i += 1
        return units

    def _split(self, a: int, b: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        while a < b:
            # No piece can reach past the character where the budget-th token
            # starts: one short tokenization bounds everything below.
            end = self._budget_end(a, min(b, a + self.max_chars))
            if end >= b and self.fits(a, b):
                out.append((a, b))
                break
            cut = self._best_cut(a, b, end)
            out.append((a, cut))
            a = cut
        return out

    def _best_cut(self, a: int, b: int, end: int) -> int:
        """The farthest cut in (a, end] whose piece fits, at the coarsest level that has one."""
        lo = bisect.bisect_right(self.cut_offsets, a)
        hi = bisect.bisect_right(self.cut_offsets, end)
        cands = self.cuts[lo:hi]
        for level in (BLOCK, ITEM, SENTENCE, WORD):
            offs = [o for o, p in cands if p <= level]
            best = self._farthest_fitting(a, offs)
            if best is not None:
                # A sentence cut that leaves a tiny piece: prefer packing words.
                if level == SENTENCE and self.body_tokens(a, best) < self.c.budget // 3:
                    continue
                return best
        return self._token_cut(a, b)

    def _budget_end(self, a: int, limit: int) -> int:
        """Offset where the budget-th token after ``a`` starts (or ``limit``).
        Tokenizes a growing window: typical text needs one short call."""
        span = self.c.budget * 8
        while True:
            end = min(limit, a + span)
            offs = self.c.tok.offsets(self.text[a:end])
            if len(offs) > self.c.budget:
                return a + offs[self.c.budget][0]
            if end >= limit:
                return limit
            span *= 4

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

    def _token_cut(self, a: int, b: int) -> int:
        """No whitespace cut fits (one enormous word): cut between model tokens."""
        seg = self.text[a : min(b, a + self.max_chars)]
        offs = self.c.tok.offsets(seg)
        ends = sorted({a + e for _, e in offs if 0 < e < len(seg)})
        best = self._farthest_fitting(a, ends)
        if best is None:
            # Even one token does not fit next to the breadcrumb: take one character.
            return a + 1
        return best

    def _make_chunk(self, ordinal: int, a: int, b: int) -> Chunk:
        doc = self.doc
        sec = doc.sections[self._section_at(a)]
        first = self._section_at(a)
        last = max(first, bisect.bisect_left(self.sec_starts, b) - 1)
        covered = tuple(
            i for i in range(first, last + 1) if self.sec_starts[i] < b and self.sec_ends[i] > a
        )
        emb = self.embedding_text(a, b)
        return Chunk(
            ordinal=ordinal,
            heading=sec.title,
            heading_path=sec.path,
            start_line=doc.offset_line(a),
            end_line=doc.offset_line(b - 1) + 1 if b > a else doc.offset_line(a),
            start_offset=a,
            end_offset=b,
            text=self.text[a:b],
            embedding_text=emb,
            tokens=self.c.tok.count(emb),
            sections=covered or (self._section_at(a),),
        )
