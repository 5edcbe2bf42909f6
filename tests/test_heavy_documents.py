"""Documents of hostile shapes cost time linear in their size (issue 40): the
outline, folding and selection ranges of many headings, and the chunks of many
headings or of a very wide table."""

from __future__ import annotations

import time

from lsprotocol import types

from mdseek.index.engine.facade import outline
from mdseek.index.text.document import Heading, ParsedDocument, subtree_ends
from mdseek.index.text.parse import parse_text
from mdseek.lsp.convert import Positions
from mdseek.lsp.features import document_symbols
from mdseek.lsp.folding import folding_ranges
from mdseek.lsp.selection import selection_ranges


def _headings_doc(n: int) -> ParsedDocument:
    """``# h0``, ``## h1``, ``### h2``, ``# h3`` ... built without a parse (the
    parse has its own test below)."""
    text = "".join(f"{'#' * (i % 3 + 1)} h{i}\n" for i in range(n))
    heads = [Heading(i % 3 + 1, f"h{i}", f"h{i}", i, i + 1) for i in range(n)]
    starts, off = [], 0
    for line in text.split("\n")[:n]:
        starts.append(off)
        off += len(line) + 1
    return ParsedDocument("x.md", text, "x", heads, [], [], 0, n, _line_starts=starts)


def test_subtree_ends_by_hand():
    h = [
        Heading(lv, "t", "t", line, line + 1)
        for lv, line in [(1, 0), (2, 2), (3, 4), (2, 6), (1, 9)]
    ]
    assert subtree_ends(h, 12) == [9, 6, 6, 9, 12]
    assert subtree_ends([], 5) == []
    setext = [Heading(1, "t", "t", 0, 2), Heading(1, "u", "u", 2, 4)]
    assert subtree_ends(setext, 4) == [2, 4]


def test_outline_folding_selection_of_40000_headings_are_linear():
    """40,000 headings: the outline alone took 5.2 s (a copy of the rest of the
    headings for each one), folding and selection ranges the same."""
    doc = _headings_doc(40_000)
    t = time.perf_counter()
    entries = outline(doc)
    (chain,) = selection_ranges(doc, [], [], Positions(), [(39_999, 0)])
    took = time.perf_counter() - t
    assert [(e.line, e.end_line) for e in entries[:4]] == [(0, 3), (1, 3), (2, 3), (3, 6)]
    assert entries[-1].end_line == 40_000
    assert chain.range.start.line == 39_999
    assert took < 3.0, f"outline and selection: {took:.1f} s"
    t = time.perf_counter()
    folds = folding_ranges(doc)  # most of it markdown-it's parse of the blocks
    took = time.perf_counter() - t
    assert folds[0] == types.FoldingRange(start_line=0, end_line=2)
    assert took < 8.0, f"folding: {took:.1f} s"
    assert len(document_symbols(doc, Positions())) == 40_000 // 3 + 1


def test_chunks_of_many_headings_are_linear(tokenizer):
    """20,000 one-line sections: a Unit and three tokenizer calls each took 25 s
    at 10,000 (and a copy of the rest of the blocks for every chunk)."""
    from mdseek.index.text.chunk import Chunker

    doc = parse_text("".join(f"# h{i}\n" for i in range(20_000)), "x.md")
    t = time.perf_counter()
    chunks = Chunker(tokenizer).chunk(doc)
    took = time.perf_counter() - t
    assert len(chunks) == 20_000 and chunks[5].embedding_text == "h0 > h5\n\n# h5"
    assert chunks[5].tokens == tokenizer.count("h0 > h5\n\n# h5")
    assert took < 8.0, f"{took:.1f} s"
