"""Documents of hostile shapes cost time linear in their size (issue 40): the
outline, folding and selection ranges of many headings, and the chunks of many
headings or of a very wide table."""

from __future__ import annotations

import time

from mdseek.index.engine.facade import outline
from mdseek.index.text.document import Heading, ParsedDocument, subtree_ends
from mdseek.index.text.parse import parse_text
from mdseek.lsp.server.convert import Positions
from mdseek.lsp.server.features import document_symbols
from mdseek.lsp.server.folding import folding_ranges
from mdseek.lsp.server.selection import selection_ranges


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
    assert took < 8.0, f"outline and selection: {took:.1f} s"
    small = _headings_doc(9)  # folding shares subtree_ends (its time: markdown-it's parse)
    folds = [(f.start_line, f.end_line) for f in folding_ranges(small)]
    assert folds == [(0, 2), (1, 2), (3, 5), (4, 5), (6, 8), (7, 8)]
    assert len(document_symbols(doc, Positions())) == 40_000 // 3 + 1


def test_chunks_of_many_headings_are_linear(tokenizer):
    """10,000 one-line sections (the most a file may hold): a Unit and three
    tokenizer calls each, and a copy of the rest of the blocks for every chunk,
    took 25 s."""
    from mdseek.index.text.chunk import Chunker

    doc = parse_text("".join(f"# h{i}\n" for i in range(10_000)), "x.md")
    t = time.perf_counter()
    chunks = Chunker(tokenizer).chunk(doc)
    took = time.perf_counter() - t
    assert len(chunks) == 10_000 and chunks[5].embedding_text == "h0 > h5\n\n# h5"
    assert chunks[5].tokens == tokenizer.count("h0 > h5\n\n# h5")
    assert took < 8.0, f"{took:.1f} s"


def _table(cols: int) -> str:
    rows = ["|" + "|".join(f" c{i} " for i in range(cols)) + "|"]
    rows.append("|" + "|".join("---" for _ in range(cols)) + "|")
    rows += ["|" + "|".join(f" v{r}.{i} " for i in range(cols)) + "|" for r in range(5)]
    return "# Wide\n\n" + "\n".join(rows) + "\n\nAfter the table.\n"


def test_a_table_wider_than_the_limit_reads_as_paragraphs():
    """markdown-it makes three tokens of every cell: a 4.2 MB table of 50,000
    columns cost 2 GB. Past MAX_TABLE_COLUMNS every parser reads it as text."""
    import tracemalloc

    from mdseek.index.links.links import find_links
    from mdseek.index.text.markdown import MAX_TABLE_COLUMNS
    from mdseek.index.text.structure import nested_blocks

    narrow = parse_text(_table(3), "n.md")
    assert [b.kind for b in narrow.blocks] == ["heading", "table", "paragraph"]
    text = _table(MAX_TABLE_COLUMNS + 500)
    tracemalloc.start()
    try:
        doc = parse_text(text, "w.md")
        kinds = {b.kind for b in nested_blocks(doc)}
        find_links(doc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [b.kind for b in doc.blocks] == ["heading", "paragraph", "paragraph"]
    assert "table" not in kinds
    assert peak < 8_000_000, f"{peak / 1e6:.1f} MB"


def test_a_file_with_more_headings_than_the_limit_is_refused(tmp_path):
    """200,000 headings (1.9 MB) did not parse and chunk in 120 s, and a 5 MB
    file of them took 914 MB to index: past MAX_HEADINGS a file is not read,
    with one line saying why, the same in every front end."""
    import pytest

    from mdseek.index.text.parse import MAX_HEADINGS, TooManyHeadings, check_structure

    check_structure("# h\n" * MAX_HEADINGS)  # at the limit: read
    check_structure("#hashtag\n" * (MAX_HEADINGS + 1))  # not headings
    text = "".join(f"# h{i}\n" for i in range(MAX_HEADINGS + 1))
    with pytest.raises(TooManyHeadings, match="10,001 heading lines, more than the 10,000"):
        parse_text(text, "many.md")
    import subprocess
    import sys

    (tmp_path / "many.md").write_text(text)
    out = subprocess.run(
        [sys.executable, "-m", "mdseek", "chunks", str(tmp_path / "many.md")],
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0 and "10,001 heading lines" in out.stderr
    assert out.stderr.count("\n") == 1, out.stderr


def test_client_columns_match_the_codec_in_every_encoding():
    """The counted columns are pygls's, on lines short and long (past the
    stride of remembered columns), ASCII or not, astral or not."""
    import random

    from lsprotocol import types
    from pygls.workspace.position_codec import PositionCodec

    from mdseek.lsp.server.convert import STRIDE

    rnd = random.Random(40)
    alphabet = "ab [](#x)é—中😀\U0001f600"
    lines = ["", "plain ascii", "a😀b é", "x" * (3 * STRIDE + 5)]
    lines += ["".join(rnd.choice(alphabet) for _ in range(n)) for n in (7, STRIDE, 5 * STRIDE + 3)]
    for enc in (
        types.PositionEncodingKind.Utf16,
        types.PositionEncodingKind.Utf8,
        types.PositionEncodingKind.Utf32,
    ):
        pos, codec = Positions(enc), PositionCodec(enc)
        for n, line in enumerate(lines):
            cols = sorted(
                {0, len(line), len(line) + 9, *(rnd.randrange(len(line) + 1) for _ in range(40))}
            )
            for col in cols:
                want = codec.client_num_units(line[:col])
                p = pos.to_client(lines, n, col)
                assert (p.line, p.character) == (n, want), (enc, n, col)
                assert pos.from_client(lines, p) == (n, min(col, len(line)))


def test_columns_of_many_links_on_one_long_line_count_the_line_about_once(monkeypatch):
    """Each column was counted from the start of its line, character by
    character in Python: 200,000 links on lines of ten took 150 of a
    document-links request's 260 s, and one 5 MB line of links would take
    hours. Now a long line's columns are remembered every few hundred code
    points."""
    counted = []
    units = Positions.units
    monkeypatch.setattr(
        Positions, "units", lambda self, t: counted.append(len(t)) or units(self, t)
    )
    line = "[é](#a) " * 20_000  # 160,000 code points, not ASCII
    pos = Positions()
    cols = range(0, len(line), 400)  # 400 columns, as many links' starts and ends
    got = [pos.to_client([line], 0, c).character for c in cols]
    assert got[:3] == [0, 400, 800] and got[-1] == len(line) - 400
    assert sum(counted) <= 2 * len(line)  # was 400 half lines: 100 times the line
