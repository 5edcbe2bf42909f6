"""Snippets for search results: the section's text as a reader sees it
(markdown syntax removed) cut to one line that starts at a sentence, or at
least a word, near the first query term."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from .markdown import shared_parser, visible_text

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_SENTENCE_END = re.compile(r"[.!?…:;](?:[\"'”’)\]]*)\s+(?=\S)")


@shared_parser
def _parser() -> MarkdownIt:
    """Blocks and inline markup (the indexing parser skips inline: snippets need
    it, and they are made from one section's text at a time)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


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
            out.append(visible_text(tok.children or []))
        elif tok.type in ("fence", "code_block"):
            out.append(tok.content)
    return " ".join(" ".join(out).split())


def _term_re(terms: Iterable[str]) -> re.Pattern[str] | None:
    """Query terms where a word starts (``rotat`` finds "rotating"), any case."""
    words = sorted({t.lower() for t in terms if t.strip()}, key=len, reverse=True)
    if not words:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, words)) + r")\w*", re.IGNORECASE)


def _best_sentence(flat: str, pattern: re.Pattern[str] | None) -> tuple[int, int]:
    """(start, position of its first term) of the sentence holding the most
    distinct query terms (the first such), or (0, -1) when none holds any."""
    if pattern is None:
        return 0, -1
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(flat)]
    ends = starts[1:] + [len(flat)]
    best = (0, 0, -1)  # (distinct terms, start, first term position)
    for a, b in zip(starts, ends, strict=True):
        found = [m for m in pattern.finditer(flat, a, b)]
        n = len({m.group(0).lower() for m in found})
        if n > best[0]:
            best = (n, a, found[0].start())
    return best[1], best[2]


def snippet(text: str, terms: Iterable[str], width: int = 180) -> str:
    """A one-line excerpt of the markdown ``text`` showing why it matched: the
    sentence with the most distinct query terms, starting at the beginning of
    that sentence when the terms then fit, else at a word before the first term."""
    flat = plain_text(text)
    if len(flat) <= width:
        return flat
    sentence, pos = _best_sentence(flat, _term_re(terms))
    start = 0
    if pos > width // 3:
        if pos - sentence <= width * 2 // 3:
            start = sentence
        else:  # mid-sentence: a word boundary a little before the term
            start = flat.rfind(" ", 0, max(0, pos - width // 4)) + 1
    out = flat[start : start + width]
    if start + width < len(flat):
        cut = out.rfind(" ")
        out = (out[:cut] if cut > width // 2 else out).rstrip(" ,;:") + " …"
    return ("… " if start > 0 else "") + out


def mark(text: str, terms: Iterable[str]) -> str:
    """``text`` with each query term (and the rest of its word) as ``**term**``."""
    pattern = _term_re(terms)
    if pattern is None:
        return text
    return pattern.sub(lambda m: f"**{m.group(0)}**", text)
