"""Markdown parsing: bytes or text -> :class:`.document.ParsedDocument`. Decode,
normalise, one markdown-it-py walk for headings, blocks and front matter
(:mod:`.front_matter`), the document title, the sections; and, for a new
version of a parsed document, the parse of only the part around the edit.

Everything here works on markdown-it-py tokens (CommonMark + front matter), never
on regexes over lines, so a ``#`` inside fenced code, indented code or an HTML
block is never a heading.

Decisions (documented in the README):

* Only *top-level* headings start sections. A heading inside a block quote or a
  list item is part of the enclosing section's body (it is quoted or listed
  content, not document structure), and it gets no anchor of its own here.
* Lines are 0-based. Text is normalised to ``\\n`` line endings (CRLF and lone
  CR count as one line break each, as CommonMark says), and a leading BOM is
  dropped, so line numbers match what an editor shows.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if (
    TYPE_CHECKING
):  # markdown-it and yaml load on first parse: a search of an up-to-date index needs neither
    from markdown_it import MarkdownIt

from .document import Block, Heading, ParsedDocument, Section
from .encoding import decode_as
from .front_matter import front_matter_title, has_front_matter_title
from .markdown import heading_text, markdown_parser, markdown_parser_for, shared_parser, too_wide
from .slug import Slugger

log = logging.getLogger(__name__)


def normalise(text: str) -> str:
    if text.startswith("\ufeff"):
        text = text[1:]
    # markdown-it does the same (CRLF/CR -> LF, NUL -> U+FFFD); doing it first
    # keeps our offsets and its line maps in one coordinate system.
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


def title_from_path(path: str) -> str:
    """The file name without its suffix. A name that is not valid UTF-8 (surrogate
    escapes from ``os.fsdecode``) reads with U+FFFD for the bad bytes."""
    path = os.fsencode(path).decode("utf-8", "replace") if _has_surrogates(path) else path
    stem = PurePosixPath(path.replace("\\", "/")).stem
    return stem or path


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


@dataclass
class _Scan:
    """What one markdown-it pass over (part of) a document found."""

    heads: list[tuple[int, str, int, int]]  # (level, rendered text, line, end_line)
    blocks: list[Block]
    body_start: int = 0
    front: dict[str, object] = field(default_factory=dict)
    fm_title: str | None = None


def _scan(text: str, path: str, env: dict, md: MarkdownIt, line0: int = 0) -> _Scan:
    tokens = md.parse(text, env)
    out = _Scan([], [])
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "front_matter" and tok.map:
            out.body_start = tok.map[1] + line0
            out.front, out.fm_title = front_matter_title(tok.content, path)
            i += 1
            continue
        if tok.level != 0 or tok.map is None:
            i += 1
            continue
        kind = tok.type[:-5] if tok.type.endswith("_open") else tok.type
        start, end = tok.map[0] + line0, tok.map[1] + line0
        if tok.type == "heading_open":
            rendered = heading_text(tokens[i + 1].content, env)
            out.heads.append((int(tok.tag[1]), rendered, start, end))
            out.blocks.append(Block("heading", start, end))
        elif tok.type == "fence":
            out.blocks.append(
                Block("fence", start, end, fence_markup=tok.markup, fence_info=tok.info)
            )
        elif tok.type in ("bullet_list_open", "ordered_list_open"):
            items = []
            j = i + 1
            while j < len(tokens):
                t = tokens[j]
                if t.type == tok.type.replace("_open", "_close") and t.level == 0:
                    break
                if t.type == "list_item_open" and t.level == 1 and t.map:
                    items.append((t.map[0] + line0, t.map[1] + line0))
                j += 1
            out.blocks.append(Block(kind, start, end, items=tuple(items)))
        else:
            out.blocks.append(Block(kind, start, end))
        i += 1
    return out


MAX_HEADINGS = 10_000  # heading lines of one file; a file with more is not read
_ATX_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)", re.MULTILINE)


class TooManyHeadings(ValueError):
    """A file with more heading lines than :data:`MAX_HEADINGS`: markdown-it and
    every feature pay per heading (100,000 headings: 45 s for an outline, a
    5 MB file of them 914 MB to index), and no note has that many."""


def check_structure(text: str) -> None:
    """Raise :class:`TooManyHeadings` for a text with too many heading lines
    (counted in one regex pass, fences included: an upper bound)."""
    if text.count("#") <= MAX_HEADINGS:
        return
    n = sum(1 for _ in _ATX_LINE.finditer(text))
    if n > MAX_HEADINGS:
        raise TooManyHeadings(
            f"{n:,} heading lines, more than the {MAX_HEADINGS:,} mdseek reads in one file"
        )


def parse_text(text: str, path: str = "untitled.md", decode_errors: int = 0) -> ParsedDocument:
    """Raises :class:`TooManyHeadings` (a ValueError) past :data:`MAX_HEADINGS`."""
    text = normalise(text)
    check_structure(text)
    env: dict = {}
    scan = _scan(text, path, env, markdown_parser_for(text))
    return _assemble(text, path, scan, env.get("references", {}), decode_errors)


def _assemble(text: str, path: str, scan: _Scan, refs: dict, decode_errors: int) -> ParsedDocument:
    line_starts = [0]
    for m in re.finditer("\n", text):
        line_starts.append(m.end())
    # A trailing "\n" does not start a real line.
    if len(line_starts) > 1 and line_starts[-1] == len(text):
        line_starts.pop()
    line_count = len(line_starts) if text else 0
    slugger = Slugger()
    headings = [
        Heading(
            level=lv,
            text=r.replace("\n", " ").strip(),
            slug=slugger.slug(r),
            line=a,
            end_line=b,
            rendered=r,
        )
        for lv, r, a, b in scan.heads
    ]
    # Title: front matter `title:` > leading `#` heading > file name.
    leading_h1 = headings[0] if headings and headings[0].level == 1 else None
    if scan.fm_title:
        title = scan.fm_title
    elif leading_h1 is not None and leading_h1.text:
        title = leading_h1.text
    else:
        title = title_from_path(path)

    sections = _sections(headings, title, scan.body_start, line_count, text, line_starts)
    return ParsedDocument(
        path=path,
        text=text,
        title=title,
        headings=headings,
        blocks=scan.blocks,
        sections=sections,
        body_start_line=scan.body_start,
        line_count=line_count,
        front_matter=scan.front,
        decode_errors=decode_errors,
        _line_starts=line_starts,
        _refs=refs,
    )


@shared_parser
def _region_parser() -> MarkdownIt:
    """Blocks of a part of a document that starts after its front matter."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    md.disable("inline")
    return md


# A line that may define a link reference: ``[label]:``, or a label left open
# at the end of the line (labels may span lines). ``[NOTE]`` or ``[x](y)`` may not.
_MAYBE_REFDEF = re.compile(r" {0,3}\[(?:[^\]\\]|\\.)*(?:\]:|\\?$)")
REPARSE_STATS = {"partial": 0, "full": 0}  # how reparse went (for tests and benchmarks)


def reparse(old: ParsedDocument, text: str, decode_errors: int = 0) -> ParsedDocument:
    """``parse_text(text)`` for a new version of ``old``'s text (same path), parsing
    again only the lines between the top-level ATX headings around the edit.

    Falls back to a full parse whenever that could differ: an edit in the front
    matter, a line that may be a link reference definition in the re-parsed
    part (references change how every heading reads), or a re-parsed part that
    does not end cleanly before the next heading (an unclosed fence, an HTML
    block, a table or indented code running up to it)."""
    text = normalise(text)
    check_structure(text)
    path = old.path
    old_lines, new_lines = old.text.split("\n"), text.split("\n")
    n_old, n_new = len(old_lines), len(new_lines)
    p, lim = 0, min(n_old, n_new)
    while p < lim and old_lines[p] == new_lines[p]:
        p += 1
    sfx = 0
    while sfx < lim - p and old_lines[n_old - 1 - sfx] == new_lines[n_new - 1 - sfx]:
        sfx += 1
    if p == n_old == n_new or p < old.body_start_line or old.line_count == 0:
        return _full(text, path, decode_errors)
    atx = [h.line for h in old.headings if h.end_line == h.line + 1]
    a = max((ln for ln in atx if ln < p), default=old.body_start_line)
    b_old = min((ln for ln in atx if ln >= n_old - sfx), default=n_old)
    delta = n_new - n_old
    b_new = b_old + delta
    if any(_MAYBE_REFDEF.match(ln) for ln in old_lines[a:b_old]) or any(
        _MAYBE_REFDEF.match(ln) for ln in new_lines[a:b_new]
    ):
        return _full(text, path, decode_errors)
    region = "\n".join(new_lines[a:b_new]) + ("\n" if b_new < n_new else "")
    env: dict = {"references": dict(old._refs)} if old._refs else {}
    if too_wide(text):  # parsed without tables: the whole of it, as parse_text would
        return _full(text, path, decode_errors)
    md = markdown_parser() if a == 0 else _region_parser()
    scan = _scan(region, path, env, md, line0=a)
    if a == 0 and scan.body_start != old.body_start_line:
        return _full(text, path, decode_errors)
    if b_new < n_new and scan.blocks and scan.blocks[-1].end_line >= b_new:
        if not _ends_cleanly(scan.blocks[-1], new_lines):
            return _full(text, path, decode_errors)
    before = [(h.level, h.rendered, h.line, h.end_line) for h in old.headings if h.line < a]
    after = [
        (h.level, h.rendered, h.line + delta, h.end_line + delta)
        for h in old.headings
        if h.line >= b_old
    ]
    scan.heads = before + scan.heads + after
    scan.blocks = (
        [bl for bl in old.blocks if bl.end_line <= a]
        + scan.blocks
        + [_shift(bl, delta) for bl in old.blocks if bl.start_line >= b_old]
    )
    scan.body_start, scan.front = old.body_start_line, old.front_matter
    scan.fm_title = old.title if old.front_matter and has_front_matter_title(old) else None
    REPARSE_STATS["partial"] += 1
    return _assemble(text, path, scan, old._refs, decode_errors)


def _full(text: str, path: str, decode_errors: int) -> ParsedDocument:
    REPARSE_STATS["full"] += 1
    return parse_text(text, path, decode_errors)


def _ends_cleanly(block: Block, lines: list[str]) -> bool:
    """A block that runs up to the next heading ends there in a full parse too."""
    if block.kind == "fence":
        last = lines[block.end_line - 1].strip() if block.end_line - 1 > block.start_line else ""
        marker = block.fence_markup
        return bool(marker) and len(last) >= len(marker) and set(last) == {marker[0]}
    return block.kind not in ("html_block", "table", "code_block")


def _shift(b: Block, d: int) -> Block:
    if not d:
        return b
    return Block(
        b.kind,
        b.start_line + d,
        b.end_line + d,
        b.fence_markup,
        b.fence_info,
        tuple((x + d, y + d) for x, y in b.items),
    )


def _sections(
    headings: list[Heading],
    title: str,
    body_start: int,
    line_count: int,
    text: str,
    line_starts: list[int],
) -> list[Section]:
    sections: list[Section] = []
    first = headings[0].line if headings else line_count
    # Preamble: lines before the first heading, if any is non-blank.
    if first > body_start:
        a = line_starts[body_start] if body_start < len(line_starts) else len(text)
        b = line_starts[first] if first < len(line_starts) else len(text)
        if text[a:b].strip():
            sections.append(Section(0, None, (title,), body_start, first))
    stack: list[Heading] = []
    for idx, h in enumerate(headings):
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        names = [s.text for s in stack]
        # The leading H1 that *is* the title is not repeated in the breadcrumb.
        if names and stack[0] is headings[0] and names[0] == title:
            names = names[1:]
        end = headings[idx + 1].line if idx + 1 < len(headings) else line_count
        sections.append(Section(len(sections), h, (title, *names), h.line, end))
    if not sections and line_count > body_start:
        # Nothing but blank lines: still one (empty) section so the document exists.
        sections.append(Section(0, None, (title,), body_start, line_count))
    return sections


def parse_bytes(data: bytes, path: str, previous: ParsedDocument | None = None) -> ParsedDocument:
    """Decode and parse; given the ``previous`` version of the same file, only
    the part around the edit is parsed again (:func:`reparse`)."""
    text, errors, encoding = decode_as(data, path)
    if previous is not None and previous.path == path:
        doc = reparse(previous, text, decode_errors=errors)
    else:
        doc = parse_text(text, path, decode_errors=errors)
    doc.encoding = encoding  # a rename never edits a file it did not read as UTF-8
    return doc
