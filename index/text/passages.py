"""Passages, the finer vectors inside a chunk: a chunk of several paragraphs
(or list items, tables, fences) also carries *passages*, runs of its blocks of
at least ``passage_words`` words each (two or more per chunk, else none),
embedded with the chunk's breadcrumb beside the chunk's own vector. A question
answered by one paragraph of a long section matches that paragraph's vector
more closely than the whole section's; the section's dense score is the best
of its chunk and passage cosines (:mod:`dense`). Passages are never results
and never cut a chunk: they only score one.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from .document import ParsedDocument
from .markdown import has_visible_text

# Words a passage holds at least (blocks are packed until they reach it); 0 = no
# passages. Chosen on the dev halves (benchmarks/README.md, "Passage vectors").
PASSAGE_WORDS = 30
# A block longer than this many words is cut at its sentence ends into runs of
# at least half as many words, each its own passage (0 = blocks are never cut).
PASSAGE_SPLIT = 0
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
PASSAGE_SKIP = frozenset({"heading", "hr", "front_matter"})  # blocks no passage reads


@dataclass(frozen=True)
class Passage:
    """A run of a chunk's blocks with a vector of its own (see the module)."""

    start: int  # character offsets into the chunk's ``text``
    end: int
    embedding_text: str  # the chunk's breadcrumb + blank line + the passage's text

    @property
    def text_hash(self) -> str:
        return hashlib.sha1(self.embedding_text.encode("utf-8")).hexdigest()


def sentence_runs(text: str, s: int, e: int, split: int) -> list[tuple[int, int]]:
    """``text[s:e]`` as is when it holds ``split`` words or fewer, else cut at
    sentence ends into runs of at least ``split // 2`` words (a short last run
    joins the one before)."""
    if len(text[s:e].split()) <= split:
        return [(s, e)]
    want = max(1, split // 2)
    runs: list[list[int]] = []  # [start, end, words]
    pos = s
    ends = [m.start() for m in _SENTENCE_END.finditer(text, s, e)] + [e]
    for end in ends:
        words = len(text[pos:end].split())
        if runs and runs[-1][2] < want:
            runs[-1][1], runs[-1][2] = end, runs[-1][2] + words
        elif words:
            runs.append([pos, end, words])
        pos = end
        while pos < e and text[pos].isspace():
            pos += 1
    if len(runs) > 1 and runs[-1][2] < want:
        tail = runs.pop()
        runs[-1][1] = tail[1]
    return [(a, b) for a, b, _ in runs]


def chunk_passages(
    doc: ParsedDocument,
    block_lines: list[int],
    a: int,
    b: int,
    emb: str,
    want: int,
    prefix: Callable[[int], tuple[str, int]],
    split: int = PASSAGE_SPLIT,
) -> tuple[Passage, ...]:
    """The passages of the chunk ``[a, b)`` of ``doc`` (see the module): its
    blocks (a list's items one by one) clipped to the chunk, packed in order
    until each run holds ``want`` words (the chunker's ``passage_words``); a
    short last run joins the one before. None unless the chunk has two runs or
    more. ``block_lines``: each block's first line; ``prefix``: the breadcrumb
    (and its tokens) of the section at an offset; ``emb``: the chunk's embedded text;
    ``split``: a block of more words is first cut into sentence runs (:data:`PASSAGE_SPLIT`)."""
    if not want:
        return ()
    first, last = doc.offset_line(a), doc.offset_line(max(a, b - 1)) + 1
    lo = bisect.bisect_left(block_lines, first)
    while lo > 0 and doc.blocks[lo - 1].end_line > first:
        lo -= 1  # a block that starts above the chunk and runs into it
    spans: list[tuple[int, int]] = []
    for blk in doc.blocks[lo:]:
        if blk.start_line >= last:
            break
        if blk.kind in PASSAGE_SKIP or blk.end_line <= first:
            continue
        parts = blk.items if blk.items else ((blk.start_line, blk.end_line),)
        for x, y in parts:
            s, e = max(a, doc.line_offset(x)), min(b, doc.line_offset(y))
            if e > s and has_visible_text(doc.text[s:e]):
                spans += sentence_runs(doc.text, s, e, split) if split else [(s, e)]
    runs: list[list[int]] = []  # [start, end, words]
    for s, e in spans:
        words = len(doc.text[s:e].split())
        if runs and runs[-1][2] < want:
            runs[-1][1], runs[-1][2] = e, runs[-1][2] + words
        else:
            runs.append([s, e, words])
    if len(runs) > 1 and runs[-1][2] < want:
        tail = runs.pop()
        runs[-1][1], runs[-1][2] = tail[1], runs[-1][2] + tail[2]
    if len(runs) < 2:
        return ()
    crumb = prefix(a)[0]
    out = []
    for s, e, _ in runs:
        body = doc.text[s:e].strip("\n")
        if body and crumb + body != emb:
            out.append(Passage(s - a, e - a, crumb + body))
    return tuple(out) if len(out) > 1 else ()
