"""Markdown as markdown-it-py reads and renders it, shared by every reader of
the engine: the parsers (one per process, safe across threads, warmed under a
lock), the visible text of inline tokens (a heading's, a snippet's, a link's),
and whether text shows anything once rendered.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # markdown-it loads on first parse: a search of an up-to-date index needs none
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


_PARSER_LOCK = threading.Lock()
# A link, a link reference definition and an autolink, with non-ASCII and
# escaped characters, and a table: what builds markdown-it's and mdurl's tables.
_WARM_UP = "[ref]: http://a.b/%C3%A4\n\n# T\n\n[l](http://x.y/ä b) <http://a.b/c> [r][ref] *e*\n\n| a |\n|---|\n| b |\n"


def shared_parser(make: Callable[[], MarkdownIt]) -> Callable[[], MarkdownIt]:
    """One parser per process, safe to use from several threads at once.

    markdown-it and mdurl build some tables on first use, and not thread-safely:
    mdurl publishes its percent-encoding table before filling it, so a second
    thread can read it half built (an IndexError in a search, seen in CI, or a
    wrongly encoded link without an error). The parser is handed out only after
    one parse of every construct that builds them, made under a lock."""

    @lru_cache(maxsize=1)
    def get() -> MarkdownIt:
        with _PARSER_LOCK:
            md = make()
            md.parse(_WARM_UP, {})
            md.parseInline(_WARM_UP, {})
            return md

    get.__doc__ = make.__doc__
    return get


def _block_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    md = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")
    md.disable("inline")
    return md


@shared_parser
def markdown_parser() -> MarkdownIt:
    """Block structure only: inline markup is parsed for headings alone
    (:func:`heading_text`), which keeps parsing linear and cheap on any input
    (inline link parsing of a run of brackets costs ~50 µs per character)."""
    return _block_parser()


@shared_parser
def _block_parser_no_tables() -> MarkdownIt:
    return _block_parser().disable("table")


MAX_TABLE_COLUMNS = 1_000  # a document with a wider table row reads its tables as paragraphs


def too_wide(text: str) -> bool:
    """Whether a line of ``text`` holds more than :data:`MAX_TABLE_COLUMNS` cells'
    pipes: markdown-it makes three tokens of each cell of a table, and a table of
    50,000 columns (4.2 MB) cost 38 s and 2 GB to parse and chunk. Such a
    document is parsed without tables (every parser of the engine agrees): its
    text is still read, as paragraphs."""
    if text.count("|") <= MAX_TABLE_COLUMNS:
        return False
    return any(line.count("|") > MAX_TABLE_COLUMNS for line in text.split("\n"))


def markdown_parser_for(text: str) -> MarkdownIt:
    """:func:`markdown_parser`, or one without tables for a text :func:`too_wide`."""
    return _block_parser_no_tables() if too_wide(text) else markdown_parser()


@shared_parser
def _inline_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


MAX_INLINE_HEADING = 2000  # characters; a longer heading is shown as written
# No character any CommonMark inline rule starts at (escapes, code, emphasis, links,
# images, autolinks, HTML, entities, line breaks): the text renders as itself.
_PLAIN = re.compile(r"[^\\`*_\[\]<>&!\n~]*")


def heading_text(content: str, env: dict) -> str:
    """The rendered text of a heading's inline content (what GitHub slugs;
    ``env`` holds the document's link reference definitions, so ``[x][ref]``
    reads as ``x``). Untrimmed, soft breaks as newlines: see :func:`inline_rendered_text`."""
    if len(content) > MAX_INLINE_HEADING or (
        _PLAIN.fullmatch(content) and content == content.strip()
    ):
        return content  # plain text reads as written: no inline parse
    tokens = _inline_parser().parseInline(content, env)
    return inline_rendered_text(tokens[0]) if tokens else content


_LINK_REF_DEF = re.compile(r" {0,3}\[(?:[^\]\\]|\\.)+\]:\s*\S.*")
_BARE_ANCHOR = re.compile(r"<a\s[^<>]*>\s*</a\s*>|<a\s[^<>]*/>", re.IGNORECASE)


def has_visible_text(text: str) -> bool:
    """Whether markdown shows anything once rendered: HTML comments, bare
    anchors (``<a id="x"></a>``), link reference definitions and an empty front
    matter show nothing. Linear in the text (no regex runs past a line)."""
    if "<!--" in text:  # comments removed with find(): an unclosed one hides the rest
        parts, i = [], 0
        while (j := text.find("<!--", i)) >= 0:
            parts.append(text[i:j])
            k = text.find("-->", j + 4)
            if k < 0:
                i = len(text)
                break
            i = k + 3
        parts.append(text[i:])
        text = "".join(parts)
    for line in text.splitlines():
        line = line.strip()
        if not line or line == "---" or _LINK_REF_DEF.fullmatch(line):
            continue
        if _BARE_ANCHOR.sub("", line).strip():
            return True
    return False


def inline_rendered_text(token: Token) -> str:
    """The text content of a rendered heading (what GitHub slugs): code spans
    keep their content, links their text, images their alt text, HTML tags are
    dropped, a soft line break is a newline; nothing is trimmed beyond what the
    parser trimmed (``# &#x20;a`` keeps its leading space)."""
    if not token.children:
        return token.content
    return visible_text(token.children, line_break="\n")


_SHOWN = frozenset({"text", "code_inline", "image"})  # their content (an image's: its alt text)
_BREAKS = frozenset({"softbreak", "hardbreak"})


def visible_text(children: Iterable[Token], line_break: str = " ") -> str:
    """What a reader sees of inline tokens (an inline token's children): text
    and code spans their content, images their alt text, a soft or hard line
    break ``line_break``; markup and HTML tags nothing."""
    return "".join(
        c.content if c.type in _SHOWN else line_break
        for c in children
        if c.type in _SHOWN or c.type in _BREAKS
    )
