"""textDocument/foldingRange: sections, front matter, fences, lists and their
items, block quotes, tables, HTML blocks and comments, and ``<!-- #region -->``
markers.

A section folds from its heading to the line before the next heading of the
same or a higher level (so an H2 folds its H3s), leaving one blank line
before it when there are blank lines (a run of them folds to one, as VS
Code's); lists and other blocks the same. Blocks come
from markdown-it's tokens (:mod:`mdseek.index.text.structure`), so a ``#`` or a
``-`` inside a fence never starts a fold. Lines only (no columns), so the
position encoding does not matter.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types

from mdseek.index.text.document import ParsedDocument, subtree_ends
from mdseek.index.text.structure import nested_blocks

from .worker import checkpoint

if TYPE_CHECKING:
    from .workspace import Workspace

FOLDED_BLOCKS = ("bullet_list", "ordered_list", "list_item", "blockquote", "fence",
                 "code_block", "table")  # fmt: skip
_REGION = re.compile(r"^\s*<!--\s*#?(end)?region\b.*-->\s*$", re.IGNORECASE)


def folding_for(ws: Workspace, uri: str) -> list[types.FoldingRange]:
    """:func:`folding_ranges` of the document at ``uri`` (in a worker thread)."""
    found = ws.doc_for_uri(uri)
    checkpoint()
    return folding_ranges(found[1]) if found else []


def folding_ranges(doc: ParsedDocument) -> list[types.FoldingRange]:
    lines = doc.lines()
    found: dict[tuple[int, int], types.FoldingRangeKind | None] = {}

    def add(start: int, end: int, kind: types.FoldingRangeKind | None = None) -> None:
        """Lines ``start`` .. ``end`` (exclusive) but the last blank line of a
        run of them at the end: a folded section or list keeps one blank line
        before what follows (VS Code's folds; several collapse to one)."""
        stop = min(end, len(lines))
        last = stop - 1
        while last > start and not lines[last].strip():
            last -= 1
        last = max(last, stop - 2)
        if last > start:
            found.setdefault((start, last), kind)

    if doc.front_matter or doc.body_start_line > 0:
        add(0, doc.body_start_line)
    for h, nxt in zip(doc.headings, subtree_ends(doc.headings, doc.line_count), strict=True):
        add(h.line, nxt)
    regions: list[int] = []
    checkpoint()
    for b in nested_blocks(doc):
        if b.kind in FOLDED_BLOCKS:
            add(b.start_line, b.map_end)
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
