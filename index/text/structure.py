"""The nested block structure of a parsed document: every block at any depth
(lists and their items, block quotes, fences, tables, HTML blocks, paragraphs,
headings, front matter) with its line span, from markdown-it-py's block tokens.

:mod:`.parse` keeps only the top-level blocks (what sections and chunks need);
folding and selection ranges need the blocks inside lists and quotes too.
Pure: text in, spans out.
"""

from __future__ import annotations

from dataclasses import dataclass

from .document import ParsedDocument
from .markdown import markdown_parser_for

# Block token kinds (type without ``_open``) that are blocks a reader sees;
# the rows and cells of a table are not.
KINDS = frozenset(
    {
        "front_matter",
        "heading",
        "paragraph",
        "bullet_list",
        "ordered_list",
        "list_item",
        "blockquote",
        "fence",
        "code_block",
        "html_block",
        "table",
        "hr",
    }
)


@dataclass(frozen=True)
class Span:
    kind: str  # token type without _open: paragraph, list_item, fence, ...
    start_line: int
    end_line: int  # exclusive; trailing blank lines are not part of the block
    depth: int  # nesting depth (0 = top level)
    content: str = ""  # html_block only: its source (comments, region markers)
    map_end: int = 0  # markdown-it's end (exclusive): the blank lines after it included


def nested_blocks(doc: ParsedDocument) -> list[Span]:
    """Every block of ``doc`` in document order (a container before what it holds)."""
    lines = doc.lines()
    out: list[Span] = []
    depth = 0
    for tok in markdown_parser_for(doc.text).parse(doc.text, {}):
        if tok.nesting == -1:
            depth -= 1
            continue
        kind = tok.type[:-5] if tok.type.endswith("_open") else tok.type
        if tok.map is not None and kind in KINDS:
            start, end = tok.map
            while end - 1 > start and end - 1 < len(lines) and not lines[end - 1].strip():
                end -= 1
            content = tok.content if kind == "html_block" else ""
            out.append(Span(kind, start, end, depth, content, tok.map[1]))
        if tok.nesting == 1:
            depth += 1
    return out
