"""textDocument/selectionRange (expand / shrink selection), as VS Code's
markdown service expands. Inside a line first, innermost out: a code span's
text, the code span; an autolink's URL, the autolink; bold and italic text, the
span with its marks; in a link's ``(destination "title")`` the angle-bracket
path's text and the ``<path>``, or the title, or the path alone, then all
between the parentheses and the parentheses with it; a link's text (inside its
brackets); an image; the link; on a ``[label]: destination`` line the label's
text or the destination. Then every block around it from the innermost out
(paragraph, list item, list, block quote, fence -- first the code inside it, when it
is two lines or more --, table -- inside a table first
the cell's content, the cell, the row and the body --, heading line, front
matter), then the sections: in the one holding the cursor, its text before its
first subsection (when it has one), its content (the lines under its heading)
and the section; then each parent section's content and the section; then the
whole document. Each range holds the one before it; equal ranges appear once.
No stop at the word: editors select words themselves (VS Code adds its own word
stop to every language's). Blocks come from markdown-it's tokens
(:mod:`mdseek.index.text.structure`).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types

from mdseek.index.links.autolinks import Autolink, find_autolinks
from mdseek.index.links.links import Link
from mdseek.index.links.sites import Site, link_sites
from mdseek.index.text.document import ParsedDocument, subtree_ends
from mdseek.index.text.structure import Span, nested_blocks

from .convert import Positions
from .worker import checkpoint

if TYPE_CHECKING:
    from .workspace import Workspace

Spot = tuple[int, int, int, int]  # line, col, end line, end col (engine coordinates)
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


def selection_for(
    ws: Workspace, uri: str, positions: Sequence[types.Position]
) -> list[types.SelectionRange]:
    """:func:`selection_ranges` at the client's positions in the document at ``uri``."""
    found = ws.doc_for_uri(uri)
    if found is None:
        return []
    path, doc = found
    lines = doc.lines()
    points = [ws.pos.from_client(lines, p) for p in positions]
    checkpoint()
    blocks = nested_blocks(doc)
    checkpoint()
    return selection_ranges(doc, blocks, ws.docs.links(path, doc), ws.pos, points)


def selection_ranges(
    doc: ParsedDocument,
    blocks: Sequence[Span],
    links: Sequence[Link],
    pos: Positions,
    points: Sequence[tuple[int, int]],
) -> list[types.SelectionRange]:
    """One chain per ``(line, col)`` point (engine coordinates)."""
    lines = doc.lines()
    rows = [lines[line] for line, _ in points if line < len(lines)]
    sites = link_sites(doc, links) if any("](" in r or "]:" in r for r in rows) else []
    autos = find_autolinks(doc, links) if any("<" in r for r in rows) else []
    return [
        _chain(doc, lines, blocks, links, pos, line, col, (sites, autos)) for line, col in points
    ]


def _chain(
    doc: ParsedDocument,
    lines: list[str],
    blocks: Sequence[Span],
    links: Sequence[Link],
    pos: Positions,
    line: int,
    col: int,
    inline: tuple[Sequence[Site], Sequence[Autolink]] = ((), ()),
) -> types.SelectionRange:
    text = lines[line] if line < len(lines) else ""
    spots: list[Spot] = []  # inside the line, innermost first once sorted by size
    for m in _CODE_SPAN.finditer(text):
        if m.start() <= col <= m.end():
            n = len(m.group(1))
            if m.start() < col < m.end():  # its content, inside the backticks
                spots.append((line, m.start() + n, line, m.end() - n))
            spots.append((line, m.start(), line, m.end()))
    sites, autos = inline
    for a in autos:
        if a.line == line and a.start - 1 <= col <= a.end + 1:  # the URL, then <URL>
            spots += [(line, a.start, line, a.end), (line, a.start - 1, line, a.end + 1)]
    spots += _destination_stops(text, line, col, sites)
    spots += _emphasis_stops(text, line, col)
    for lk in links:
        if lk.contains(line, col):
            label = _label(text, lk) if lk.line == line else None
            if label is not None and label[1] <= col <= label[3]:
                spots.append(label)
            spots.append((lk.line, lk.start, lk.end_line, lk.end))
    spots.sort(key=lambda s: (s[2] - s[0], s[3] - s[1] if s[0] == s[2] else 0))
    around = [b for b in blocks if b.start_line <= line < b.end_line]
    for b in sorted(around, key=lambda b: -b.depth):
        if b.kind == "table":
            spots += _table_stops(lines, b, line, col)
        last = b.end_line - 1
        if b.kind == "fence" and b.start_line < line < last and last - b.start_line > 2:
            spots.append(_lines(lines, b.start_line + 1, last))  # the code, without its fences
        spots.append(_lines(lines, b.start_line, b.end_line))
    heads = doc.headings
    ends = subtree_ends(heads, doc.line_count)
    closest = True
    for i in range(bisect.bisect_right([h.line for h in heads], line) - 1, -1, -1):
        h, end = heads[i], ends[i]  # the section holding the line, then its parents
        if line >= end:
            continue
        if closest and i + 1 < len(heads) and line < heads[i + 1].line < end:
            top = h.line if line < h.end_line else h.end_line  # up to its first subsection
            spots.append(_lines(lines, top, heads[i + 1].line))
        closest = False
        if h.end_line < end:  # its content: the lines under its heading
            spots.append(_lines(lines, h.end_line, end))
        spots.append(_lines(lines, h.line, end))
    spots.append(_lines(lines, 0, max(doc.line_count, 1)))
    return _link_up(lines, pos, _nested(spots))


def _label(text: str, lk: Link) -> Spot | None:
    """The text inside a markdown link's or image's brackets (``[text](...)``,
    ``[text][ref]``), when they close on the link's first line."""
    if lk.kind != "markdown":
        return None
    at = lk.start + 1 if text.startswith("![", lk.start) else lk.start
    if not text.startswith("[", at):
        return None
    depth, i = 0, at
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        depth += (c == "[") - (c == "]")
        if depth == 0:
            return (lk.line, at + 1, lk.line, i)
        i += 1
    return None


# bold (** or __) and italic (* or _) spans on one line: no space inside either
# mark, no other mark beside it, _ never inside a word (snake_case is no emphasis)
_EMPHASIS = (
    re.compile(r"(?<!\*)\*\*(?=[^\s*])(.+?)(?<=[^\s*])\*\*(?!\*)"),
    re.compile(r"(?<![\w_])__(?=[^\s_])(.+?)(?<=[^\s_])__(?![\w_])"),
    re.compile(r"(?<!\*)\*(?=[^\s*])(.+?)(?<=[^\s*])(?<!\*)\*(?!\*)"),
    re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])(?<!_)_(?![\w_])"),
)


_WINDOW = 1000


def _emphasis_stops(text: str, line: int, col: int) -> list[Spot]:
    """Bold and italic spans around the cursor (outside code spans): the text
    inside the marks (unless the cursor is on a mark), then the span."""
    lo = max(0, col - _WINDOW)  # a span's marks within _WINDOW of the cursor (a
    text = text[lo : col + _WINDOW]  # 5 MB line of '*a ' costs no quadratic scan)
    if "*" not in text and "_" not in text:
        return []
    plain = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text)
    out: list[Spot] = []
    for rx in _EMPHASIS:
        for m in rx.finditer(plain):
            a, z, n = m.start() + lo, m.end() + lo, m.start(1) - m.start()
            if a <= col <= z:
                if a + n <= col <= z - n:
                    out.append((line, a + n, line, z - n))
                out.append((line, a, line, z))
    return out


_DEFINITION = re.compile(r"^ {0,3}\[((?:[^\[\]\\]|\\.)+)\]:")
_CLOSE = {'"': '"', "'": "'", "(": ")"}


def _destination_stops(text: str, line: int, col: int, sites: Sequence[Site]) -> list[Spot]:
    """Inside a link's or image's ``(destination "title")``: the angle-bracket
    path's content and the path with its brackets, or the title, or the path
    alone (when a title follows), then all between the parentheses, then the
    parentheses with it, then the image (an image inside a link); on a
    ``[label]: destination`` line: the label's text or the destination."""
    out: list[Spot] = []
    for s in sites:
        if s.line != line:
            continue
        if s.kind == "definition":
            m = _DEFINITION.match(text)
            if m and m.start(1) <= col <= m.end(1):
                out.append((line, m.start(1), line, m.end(1)))
            elif s.col <= col <= s.end:
                out.append((line, s.col, line, s.end))
            continue
        if s.kind not in ("inline", "image"):
            continue
        open_ = text.rfind("(", 0, s.col)
        at = len(text) - len(text[s.end :].lstrip())  # the title or ')'
        title = None
        if at < len(text) and text[at] in _CLOSE:
            close_title = text.find(_CLOSE[text[at]], at + 1)
            if close_title > 0:
                title = (at, close_title + 1)
                at = len(text) - len(text[title[1] :].lstrip())
        if open_ < 0 or at >= len(text) or text[at] != ")" or not open_ < col <= at:
            continue
        if s.angle and s.col < col < s.end:
            out += [(line, s.col + 1, line, s.end - 1), (line, s.col, line, s.end)]
        elif title and title[0] <= col <= title[1]:
            out.append((line, title[0], line, title[1]))
        elif title and s.col <= col <= s.end:
            out.append((line, s.col, line, s.end))
        out += [(line, open_ + 1, line, at), (line, open_, line, at + 1)]
        if s.kind == "image":
            start = _image_start(text, open_)
            if start is not None:
                out.append((line, start, line, at + 1))
    return out


def _image_start(text: str, open_: int) -> int | None:
    """Where the image whose ``(`` is at ``open_`` starts (its ``!``)."""
    if open_ == 0 or text[open_ - 1] != "]":
        return None
    depth = 0
    for i in range(open_ - 1, -1, -1):
        if i > 0 and text[i - 1] == "\\":
            continue
        depth += (text[i] == "]") - (text[i] == "[")
        if depth == 0:
            return i - 1 if i > 0 and text[i - 1] == "!" else None
    return None


_PIPE = re.compile(r"(?<!\\)\|")  # a cell border: a pipe not escaped


def _table_stops(lines: list[str], table: Span, line: int, col: int) -> list[Spot]:
    """Inside a table: the cell's content (between its pipes), the cell (its
    pipes included), the row, and for a body row the body (every row under the
    delimiter row)."""
    text = lines[line] if line < len(lines) else ""
    body = text.strip()
    if not body:
        return []
    first = len(text) - len(text.lstrip())
    last = first + len(body)
    out: list[Spot] = []
    if line != table.start_line + 1:  # not the delimiter row: a cell
        pipes = [m.start() for m in _PIPE.finditer(text, first, last)]
        bounds = ([] if pipes[:1] == [first] else [first - 1]) + pipes
        if not pipes or pipes[-1] != last - 1:
            bounds.append(last)
        for a, b in itertools.pairwise(bounds):
            if a < col <= b or (a == col == first):
                out.append((line, a + 1, line, b))  # the content
                out.append((line, max(a, first), line, min(b + 1, last)))  # with its pipes
                break
    out.append((line, first, line, last))
    if line > table.start_line + 1:  # from the first body row's first character
        top = table.start_line + 2
        _, _, end, end_col = _lines(lines, top, table.end_line)
        out.append((top, len(lines[top]) - len(lines[top].lstrip()), end, end_col))
    return out


def _lines(lines: list[str], start: int, end: int) -> Spot:
    last = max(start, min(end, len(lines)) - 1)
    while last > start and not lines[last].strip():
        last -= 1
    return (start, 0, last, len(lines[last]) if last < len(lines) else 0)


def _nested(spots: list[Spot]) -> list[Spot]:
    """Each spot holding the one kept before it (and not equal to it)."""
    out: list[Spot] = []
    for s in spots:
        if not out:
            out.append(s)
            continue
        p = out[-1]
        if s != p and (s[0], s[1]) <= (p[0], p[1]) and (s[2], s[3]) >= (p[2], p[3]):
            out.append(s)
    return out


def _link_up(lines: list[str], pos: Positions, spots: list[Spot]) -> types.SelectionRange:
    parent: types.SelectionRange | None = None
    for s in reversed(spots):
        parent = types.SelectionRange(range=pos.range(lines, *s), parent=parent)
    assert parent is not None
    return parent
