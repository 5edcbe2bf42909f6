"""textDocument/foldingRange: sections, front matter, fences, lists and their
items, block quotes, tables, HTML blocks and comments, and ``<!-- #region -->``
markers.

A section folds from its heading to the last non-blank line before the next
heading of the same or a higher level (so an H2 folds its H3s). Blocks come
from markdown-it's tokens (:mod:`mdseek.index.text.structure`), so a ``#`` or a
``-`` inside a fence never starts a fold. Lines only (no columns), so the
position encoding does not matter.
"""

from __future__ import annotations

import re

from lsprotocol import types

from mdseek.index.text.document import ParsedDocument
from mdseek.index.text.structure import nested_blocks

FOLDED_BLOCKS = ("bullet_list", "ordered_list", "list_item", "blockquote", "fence",
                 "code_block", "table")  # fmt: skip
_REGION = re.compile(r"^\s*<!--\s*#?(end)?region\b.*-->\s*$", re.IGNORECASE)


def folding_ranges(doc: ParsedDocument) -> list[types.FoldingRange]:
    lines = doc.lines()
    found: dict[tuple[int, int], types.FoldingRangeKind | None] = {}

    def add(start: int, end: int, kind: types.FoldingRangeKind | None = None) -> None:
        """Lines ``start`` .. ``end`` (exclusive), trailing blank lines left out."""
        last = min(end, len(lines)) - 1
        while last > start and not lines[last].strip():
            last -= 1
        if last > start:
            found.setdefault((start, last), kind)

    if doc.front_matter or doc.body_start_line > 0:
        add(0, doc.body_start_line)
    for i, h in enumerate(doc.headings):
        nxt = next((g.line for g in doc.headings[i + 1 :] if g.level <= h.level), doc.line_count)
        add(h.line, nxt)
    regions: list[int] = []
    for b in nested_blocks(doc):
        if b.kind in FOLDED_BLOCKS:
            add(b.start_line, b.end_line)
        elif b.kind == "html_block":
            for n in range(b.start_line, b.end_line):
                m = _REGION.match(lines[n])
                if m and not m.group(1):
                    regions.append(n)
                elif m and regions:
                    start = regions.pop()
                    found[(start, n)] = types.FoldingRangeKind.Region
            if _REGION.match(lines[b.start_line]):
                continue
            if b.content.lstrip().startswith("<!--"):
                add(b.start_line, b.end_line, types.FoldingRangeKind.Comment)
            else:  # <div> ... </div>, <details> ...
                add(b.start_line, b.end_line)
    return [
        types.FoldingRange(start_line=a, end_line=z, kind=k)
        for (a, z), k in sorted(found.items(), key=lambda item: (item[0][0], -item[0][1]))
    ]
