"""Expand selection's stops inside a line (lsp/server/selection.py), beyond the
VS Code cases of tests/peers: what is not emphasis, and underscores. Hand-made
lines, expected columns counted by hand."""

from __future__ import annotations

import time

from mdseek.index.links.links import find_links
from mdseek.index.text.parse import parse_text
from mdseek.index.text.structure import nested_blocks
from mdseek.lsp.server.convert import Positions
from mdseek.lsp.server.selection import selection_ranges


def _chain(text: str, col: int) -> list[tuple[int, int]]:
    doc = parse_text(text)
    (sel,) = selection_ranges(doc, nested_blocks(doc), find_links(doc), Positions(), [(0, col)])
    out = []
    while sel is not None:
        out.append((sel.range.start.character, sel.range.end.character))
        sel = sel.parent
    return out


def test_emphasis_stops_and_what_is_none():
    assert _chain("say __big word__ now", 8) == [(6, 14), (4, 16), (0, 20)]
    assert _chain("say _one_ now", 6) == [(5, 8), (4, 9), (0, 13)]
    assert _chain("a snake_case_name here", 9) == [(0, 22)]  # no emphasis inside a word
    assert _chain("see `**not bold**` here", 9) == [(5, 17), (4, 18), (0, 23)]  # code only
    assert _chain("2 * 3 * 4", 4) == [(0, 9)]  # a lone * beside spaces
    assert _chain("**bold**", 1) == [(0, 8)]  # on the marks: the span, not its text


def test_a_long_line_of_stars_is_no_quadratic_scan():
    """Emphasis is looked for near the cursor only: a 60 KB line of '*a ' took
    29 s (every '*' scanned to the line's end), 600 KB would take hours."""
    text = "*a " * 200_000
    t = time.perf_counter()
    assert _chain(text, 300_000) == [(0, 600_000)]
    assert time.perf_counter() - t < 5.0
