"""Section chunking sized in the embedding model's own tokens, in time linear in the input.

A section runs from a heading to the next heading of any level (the preamble
before the first heading is section 0). Sections become chunks:

* Every section is its own chunk by default (``floor`` 0), so every section has
  its own vector and its own score. With a ``floor`` above 0, a section whose
  body is below it merges forward into the next section (the chunk keeps the
  first heading; every covered section stays in the chunk's ``sections``).
* A chunk's *embedded text* is ``breadcrumb + "\\n\\n" + text`` and always fits the
  model's window (special tokens included), verified with the real tokenizer.
  The breadcrumb's title carries the note's front-matter aliases
  (:func:`.aliases.search_title`), so a note is found by any of its names.
* Chunks tile the body: consecutive character ranges, no overlap, no gap except
  text that shows nothing (:func:`.markdown.has_visible_text`: blank lines, HTML
  comments, bare anchors, link reference definitions) before the first chunk.
  A section with no visible text is never a chunk of its own.

Where an over-budget unit is cut, and how each cut is priced without
re-tokenizing: :mod:`.cuts`. The finer vectors inside a chunk: :mod:`.passages`.

Incremental: a unit (a section, or small sections merged) is split the same
way whenever its text and its sections' breadcrumbs are the same, so a chunker
remembers the pieces of recent units (and the token counts of recent sections):
re-chunking a saved document tokenizes only the sections that changed.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from ..model.tokenizer import ModelTokenizer, TokenSpans
from .aliases import doc_aliases, search_title
from .cuts import Unit
from .document import ParsedDocument
from .markdown import has_visible_text
from .passages import PASSAGE_SPLIT, PASSAGE_WORDS, Passage, chunk_passages

DEFAULT_FLOOR = 0  # body tokens; smaller sections merge forward (0: none do)
MAX_CHARS_PER_TOKEN = 128  # a chunk holds at most budget * this many characters
CRUMB_CHARS_PER_TOKEN = 16  # a breadcrumb holds at most budget * this many characters
COUNT_BATCH = 256  # embedded texts counted per tokenizer call
CACHE_CHARS = 8_000_000  # characters of unit text whose pieces a chunker remembers


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
    passages: tuple[Passage, ...] = field(default=())  # finer vectors inside it (or none)

    @property
    def breadcrumb(self) -> str:
        return " > ".join(self.heading_path)

    @property
    def text_hash(self) -> str:
        return hashlib.sha1(self.embedding_text.encode("utf-8")).hexdigest()


class _LRU:
    """A dict that forgets its oldest entries beyond ``capacity`` (summed sizes)."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.size = 0
        self.data: OrderedDict = OrderedDict()

    def get(self, key):
        v = self.data.get(key)
        if v is not None:
            self.data.move_to_end(key)
            return v[0]
        return None

    def put(self, key, value, size: int) -> None:
        if size > self.capacity:
            return
        old = self.data.pop(key, None)
        if old is not None:
            self.size -= old[1]
        self.data[key] = (value, size)
        self.size += size
        while self.size > self.capacity and self.data:
            _, (_, s) = self.data.popitem(last=False)
            self.size -= s


class Chunker:
    def __init__(
        self,
        tokenizer: ModelTokenizer,
        budget: int | None = None,
        floor: int = DEFAULT_FLOOR,
        cache_chars: int = CACHE_CHARS,
        passage_words: int = PASSAGE_WORDS,
        passage_split: int = PASSAGE_SPLIT,
    ):
        self.tok = tokenizer
        window = tokenizer.window
        self.budget = min(budget, window) if budget else window
        self.floor = max(0, int(floor))
        self.passage_words = max(0, int(passage_words))
        self.passage_split = max(0, int(passage_split))
        self.max_chars = self.budget * MAX_CHARS_PER_TOKEN
        self._units = _LRU(cache_chars)  # (unit text, breadcrumbs) -> pieces
        self._counts = _LRU(cache_chars)  # section text -> body tokens
        self._lock = threading.Lock()
        # What the last documents cost: sections tokenized, units split or reused,
        # pieces whose offset price was wrong (re-split with real counts).
        self.stats = {
            "documents": 0,
            "sections_tokenized": 0,
            "units_split": 0,
            "units_reused": 0,
            "pieces": 0,
            "resplit": 0,
        }

    @functools.cached_property
    def specials(self) -> int:
        """Tokens the model adds around any text (asked once, when first chunking)."""
        return self.tok.special_overhead()

    @property
    def signature(self) -> str:
        """Changes whenever the chunking of the same text could change."""
        # v4: aliases in breadcrumbs; v5: passages
        split = f":s{self.passage_split}" if self.passage_split else ""
        return f"v5:{self.tok.name}:{self.budget}:{self.floor}:{self.passage_words}{split}"

    # -- public -------------------------------------------------------------

    def chunk(self, doc: ParsedDocument) -> list[Chunk]:
        if not doc.sections:
            return []
        with self._lock:
            self.stats["documents"] += 1
            return _DocChunker(self, doc).run()


class _DocChunker:
    def __init__(self, chunker: Chunker, doc: ParsedDocument):
        self.c = chunker
        self.tok = chunker.tok
        self.budget = chunker.budget
        self.specials = chunker.specials
        self.doc = doc
        self.text = doc.text
        self.sec_starts = [doc.line_offset(s.start_line) for s in doc.sections]
        self.sec_ends = [doc.line_offset(s.end_line) for s in doc.sections]
        self.block_lines = [b.start_line for b in doc.blocks]
        self._prefix_cache: dict[int, tuple[str, int]] = {}
        self.aliases = doc_aliases(doc)
        self._spans: dict[int, TokenSpans] = {}  # section -> its tokens (absolute offsets)

    # -- sections -------------------------------------------------------------

    def section_at(self, off: int) -> int:
        return max(0, bisect.bisect_right(self.sec_starts, off) - 1)

    def section_spans(self, i: int) -> TokenSpans:
        """Tokens of section ``i`` (absolute offsets), one tokenizer pass."""
        sp = self._spans.get(i)
        if sp is None:
            a, b = self.sec_starts[i], self.sec_ends[i]
            text = self.text[a:b]
            sp = self.tok.token_spans(text).shifted(a)
            self._spans[i] = sp
            self.c.stats["sections_tokenized"] += 1
            self.c._counts.put(text, len(sp), len(text))
        return sp

    def section_tokens(self, i: int) -> int:
        n = self.c._counts.get(self.text[self.sec_starts[i] : self.sec_ends[i]])
        return n if n is not None else len(self.section_spans(i))

    def prefix(self, off: int) -> tuple[str, int]:
        """(breadcrumb + blank line, its tokens without specials) of the section at ``off``."""
        i = self.section_at(off)
        p = self._prefix_cache.get(i)
        if p is None:
            crumb = self._short_breadcrumb(self.embedded_path(i))
            p = (crumb + "\n\n", self.tok.count(crumb) - self.specials)
            self._prefix_cache[i] = p
        return p

    def embedded_path(self, i: int) -> tuple[str, ...]:
        """Section ``i``'s breadcrumb as the model reads it: the note's aliases
        join its title (``Incident response (IR, Outage playbook) > Paging``)."""
        path = self.doc.sections[i].path
        return (search_title(path[0], self.aliases), *path[1:]) if self.aliases else path

    def _short_breadcrumb(self, path: tuple[str, ...]) -> str:
        """The breadcrumb, shortened when it would take over half the budget
        (absurdly long headings): title > … > own heading, then cut by tokens."""
        limit = self.budget // 2
        chars = self.budget * CRUMB_CHARS_PER_TOKEN
        count = self.tok.count
        full = " > ".join(path)
        if len(full) <= chars and count(full) <= limit:
            return full
        short = " > ".join((path[0], "…", path[-1])) if len(path) > 2 else full
        short = short[:chars]
        if count(short) <= limit:
            return short
        offs = self.tok.offsets(short)
        keep = limit - self.specials - 1
        cut = short[: offs[keep][0]].rstrip() + " …" if keep < len(offs) else short
        while count(cut) > limit and len(cut) > 2:
            cut = cut[: len(cut) // 2].rstrip() + " …"
        return cut

    # -- algorithm ----------------------------------------------------------

    def run(self) -> list[Chunk]:
        units = self._merged_units()
        chunks: list[Chunk] = []
        for a, b, first, last in units:
            key = (self.text[a:b], tuple(self.embedded_path(i) for i in range(first, last + 1)))
            pieces = self.c._units.get(key)
            if pieces is None:
                pieces = Unit(self, a, b, first, last).pieces()
                self.c._units.put(key, pieces, 2 * len(key[0]) + 64)
                self.c.stats["units_split"] += 1
            else:
                self.c.stats["units_reused"] += 1
            for x, y, t, k in pieces:
                chunks.append(self._make_chunk(len(chunks), a + x, a + y, t, k))
        self.c.stats["pieces"] += len(chunks)
        return chunks

    def _count(self, texts: list[str]) -> list[int]:
        out: list[int] = []
        for i in range(0, len(texts), COUNT_BATCH):
            out.extend(self.tok.count_many(texts[i : i + COUNT_BATCH]))
        return out

    def _merged_units(self) -> list[tuple[int, int, int, int]]:
        """(start, end, first section, last section) of each unit to split."""
        units: list[tuple[int, int, int, int]] = []
        n = len(self.doc.sections)
        floor = self.c.floor
        i = 0
        while i < n:
            first = i
            a, b = self.sec_starts[i], self.sec_ends[i]
            if floor:
                tokens = self.section_tokens(i)
                while i + 1 < n and tokens < floor:
                    i += 1
                    b = self.sec_ends[i]
                    tokens += self.section_tokens(i)
            if has_visible_text(self.text[a:b]):
                units.append((a, b, first, i))
            elif units:
                # Section text that shows nothing (blank, a comment, a bare anchor, link
                # reference definitions) joins the previous unit, or is left out before
                # the first one: it is never a chunk, so never embedded nor a result.
                pa, _, pf, _ = units[-1]
                units[-1] = (pa, b, pf, i)
            i += 1
        return units

    def _make_chunk(self, ordinal: int, a: int, b: int, emb: str, tokens: int) -> Chunk:
        doc = self.doc
        first = self.section_at(a)
        sec = doc.sections[first]
        last = max(first, bisect.bisect_left(self.sec_starts, b) - 1)
        covered = tuple(
            i for i in range(first, last + 1) if self.sec_starts[i] < b and self.sec_ends[i] > a
        )
        return Chunk(
            passages=chunk_passages(
                doc,
                self.block_lines,
                a,
                b,
                emb,
                self.c.passage_words,
                self.prefix,
                self.c.passage_split,
            ),
            ordinal=ordinal,
            heading=sec.title,
            heading_path=sec.path,
            start_line=doc.offset_line(a),
            end_line=doc.offset_line(b - 1) + 1 if b > a else doc.offset_line(a),
            start_offset=a,
            end_offset=b,
            text=self.text[a:b],
            embedding_text=emb,
            tokens=tokens,
            sections=covered or (first,),
        )
