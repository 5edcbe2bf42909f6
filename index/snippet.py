"""Snippets for search results: the section's text as a reader sees it
(markdown syntax removed) cut to one line that starts at a sentence, or at
least a word, near the first query term."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from .parse import shared_parser

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_SENTENCE_END = re.compile(r"[.!?…:;](?:[\"'”’)\]]*)\s+(?=\S)")


@shared_parser
def _parser() -> MarkdownIt:
    """Blocks and inline markup (the indexing parser skips inline: snippets need
    it, and they are made from one section's text at a time)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def _inline_text(tok: Token) -> str:
    parts: list[str] = []
    for c in tok.children or []:
        if c.type in ("text", "code_inline"):
            parts.append(c.content)
        elif c.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif c.type == "image":
            parts.append(c.content)
    return "".join(parts)


@lru_cache(maxsize=512)  # sections that answer many queries are rendered once
def plain_text(markdown: str) -> str:
    """The visible text of a markdown fragment on one line: no heading marks,
    emphasis, link targets, HTML tags, table pipes or list bullets; code keeps
    its text. Headings are dropped (the result row shows the heading already)."""
    tokens = _parser().parse(markdown)
    out: list[str] = []
    in_heading = False
    for tok in tokens:
        if tok.type == "heading_open":
            in_heading = True
        elif tok.type == "heading_close":
            in_heading = False
        elif tok.type == "inline" and not in_heading:
            out.append(_inline_text(tok))
        elif tok.type in ("fence", "code_block"):
            out.append(tok.content)
    return " ".join(" ".join(out).split())


def snippet(text: str, terms: Iterable[str], width: int = 180) -> str:
    """A one-line excerpt of the markdown ``text`` around the first query term,
    starting at the beginning of its sentence when that fits, else at a word."""
    flat = plain_text(text)
    if len(flat) <= width:
        return flat
    low = flat.lower()
    pos = -1
    for t in terms:
        pos = low.find(t.lower())
        if pos >= 0:
            break
    start = 0
    if pos > width // 3:
        # the sentence holding the term, if the term then still fits
        starts = [0] + [m.end() for m in _SENTENCE_END.finditer(flat, 0, pos)]
        fitting = [s for s in starts if pos - s <= width * 2 // 3]
        if fitting:
            start = fitting[0]
        else:  # mid-sentence: a word boundary a little before the term
            start = flat.rfind(" ", 0, max(0, pos - width // 4)) + 1
    out = flat[start : start + width]
    if start + width < len(flat):
        cut = out.rfind(" ")
        out = (out[:cut] if cut > width // 2 else out).rstrip(" ,;:") + " …"
    return ("… " if start > 0 else "") + out
