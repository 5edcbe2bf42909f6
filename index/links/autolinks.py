"""Autolinks: ``<https://example.com>`` (CommonMark's URI autolinks), found
where markdown-it would read them: in the text of paragraphs, headings, lists,
quotes and tables, never in code (fenced, indented, spans), HTML blocks,
inline HTML comments, front matter, a link's own span (``[t](<https://x>)`` is
a link's destination) or after a backslash (``\\<https://x>`` is text).

An autolink is a URL, never a section: :func:`.links.find_links` leaves them
out (so references, rename and the checks never see them); the document links
and highlights read them here. Positions are 0-based lines and code-point
columns of the URL inside the brackets. Pure: a parsed document in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..text.document import ParsedDocument
from .links import Link
from .tags import SKIPPED

# CommonMark's URI autolink: a scheme of 2-32 characters, ':', no space or <>
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\x00-\x20]*)>")
_MASK = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)|<!--.*?-->")  # code spans, comments


@dataclass(frozen=True)
class Autolink:
    url: str
    line: int
    start: int  # column of the URL's first character (after '<')
    end: int  # column just past it (the '>')


def find_autolinks(doc: ParsedDocument, links: Sequence[Link] = ()) -> list[Autolink]:
    """The document's autolinks in source order; ``links``: its links
    (:func:`.links.find_links`), whose spans hold none."""
    lines = doc.lines()
    out: list[Autolink] = []
    for b in doc.blocks:
        if b.kind in SKIPPED:
            continue
        for n in range(b.start_line, min(b.end_line, len(lines))):
            text = lines[n]
            if "<" not in text:
                continue
            masked = _MASK.sub(lambda m: " " * len(m.group(0)), text)
            for m in _AUTOLINK.finditer(masked):
                a, z = m.span()
                slashes = len(masked[:a]) - len(masked[:a].rstrip("\\"))
                if slashes % 2 or any(_inside(lk, n, a, z) for lk in links):
                    continue
                out.append(Autolink(m.group(1), n, a + 1, z - 1))
    return out


def _inside(lk: Link, line: int, a: int, z: int) -> bool:
    """Whether columns a..z of ``line`` overlap the link's span."""
    if line < lk.line or line > lk.end_line:
        return False
    start = lk.start if line == lk.line else 0
    end = lk.end if line == lk.end_line else 1 << 30
    return a < end and z > start
