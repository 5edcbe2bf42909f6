"""A parsed markdown document and its parts: headings, top-level blocks,
sections, and the :class:`ParsedDocument` that holds them with its text (line
<-> offset, and where a front-matter key's value is written). No parsing here:
:mod:`.parse` builds them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Heading:
    level: int  # 1-6
    text: str  # plain text (inline markup removed), as shown in outlines
    slug: str  # GitHub-compatible anchor, unique in the document
    line: int  # first line of the heading (0-based)
    end_line: int  # exclusive: ATX = line + 1, setext = line + 2 (text + underline)
    # the rendered text GitHub slugs (untrimmed, soft breaks as newlines)
    rendered: str = field(default="", compare=False, repr=False)


def subtree_ends(headings: Sequence[Heading], line_count: int) -> list[int]:
    """Where each heading's subtree ends (exclusive): the line of the next heading
    of the same or a higher level, else ``line_count``; never before the heading's
    own end. One pass with a stack (outline, folding and selection ranges all
    need it: a scan per heading was quadratic, 29 s at 100,000 headings)."""
    ends = [line_count] * len(headings)
    open_: list[int] = []  # indexes of headings whose subtree is still open
    for i, h in enumerate(headings):
        while open_ and headings[open_[-1]].level >= h.level:
            ends[open_.pop()] = h.line
        open_.append(i)
    return [max(e, h.end_line) for e, h in zip(ends, headings, strict=True)]


@dataclass(frozen=True)
class Block:
    """A top-level block (paragraph, list, fence, table, ...) or a list item."""

    kind: str  # token type without _open: paragraph, bullet_list, fence, heading, ...
    start_line: int
    end_line: int  # exclusive
    fence_markup: str = ""  # for fences: the opening marker, e.g. ``` or ~~~~
    fence_info: str = ""
    items: tuple[tuple[int, int], ...] = ()  # for lists: line span of each item


@dataclass(frozen=True)
class Section:
    """The span from a heading to the next heading of any level.

    Ordinal 0 is the preamble (text before the first heading) when the document
    has one; its ``heading`` is None.
    """

    ordinal: int
    heading: Heading | None
    path: tuple[str, ...]  # breadcrumb: (title, h2, h3 ...)
    start_line: int
    end_line: int  # exclusive

    @property
    def title(self) -> str:
        return self.heading.text if self.heading else self.path[0]

    @property
    def breadcrumb(self) -> str:
        return " > ".join(self.path)


@dataclass
class ParsedDocument:
    path: str
    text: str  # normalised text (\n line ends, no BOM)
    title: str
    headings: list[Heading]
    blocks: list[Block]
    sections: list[Section]
    body_start_line: int  # first line after front matter
    line_count: int
    front_matter: dict[str, object] = field(default_factory=dict)
    decode_errors: int = 0
    encoding: str = "utf-8"  # as read from bytes: "utf-8", "utf-16" or "cp1252"
    _line_starts: list[int] = field(default_factory=list, repr=False)
    _refs: dict = field(default_factory=dict, repr=False)  # link reference definitions

    def line_offset(self, line: int) -> int:
        """Character offset of the start of ``line`` (line_count → len(text))."""
        if line >= len(self._line_starts):
            return len(self.text)
        return self._line_starts[line]

    def offset_line(self, offset: int) -> int:
        """0-based line that holds character ``offset``."""
        return max(0, bisect.bisect_right(self._line_starts, offset) - 1)

    def lines(self) -> list[str]:
        return self.text.split("\n")

    def front_matter_value_lines(
        self, key: re.Pattern[str]
    ) -> Iterator[tuple[int, str, int, bool]]:
        """Where a front-matter key's value is written: ``key`` (a pattern
        whose group 2 is the text after the colon) on its own line, then the
        indented, list or blank lines under it; as (line, text, its column,
        whether it is the key's own line)."""
        lines = self.lines()
        inside = False
        for n in range(1, max(1, self.body_start_line - 1)):
            text = lines[n]
            m = key.match(text)
            if m:
                inside = True
                yield n, m.group(2), m.start(2), True
            elif inside and (text.startswith((" ", "\t", "-")) or not text.strip()):
                yield n, text, 0, False
            else:
                inside = False
