"""Where the cursor is in a link being typed: after ``](path#``,
``](<path with spaces#``, ``[[note#`` or a reference definition's ``#``, what
anchor completion completes (:func:`anchor_context`), and a stand-in link to
resolve the file typed (:func:`anchor_link`). Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from .links import Link

_MD_ANCHOR = re.compile(r"\]\(\s*<?([^()\s#<>]*)#([^()\s#<>]*)$")
_MD_ANCHOR_ANGLE = re.compile(r"\]\(\s*<([^<>\n#]*)#([^<>#\n]*)$")  # [t](<a b.md#...
_DEF_ANCHOR = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?([^\s#<>]*)#(\S*)$")
_DEF_ANCHOR_ANGLE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<([^<>\n#]*)#([^<>#\n]*)$")
_WIKI_ANCHOR = re.compile(r"\[\[([^\[\]|#]*)#([^\[\]|#]*)$")


@dataclass(frozen=True)
class AnchorContext:
    kind: str  # "markdown" or "wiki"
    path: str  # the (still encoded, for markdown) path typed before '#', "" = this document
    prefix: str  # what is typed after '#'
    start: int  # column where the typed prefix starts (the replace range)


def anchor_context(line_text: str, col: int) -> AnchorContext | None:
    """If the cursor (code-point column) sits right after ``](path#…``,
    ``](<path with spaces#…`` or ``[[note#…``, what is being completed."""
    before = line_text[:col]
    for kind, rx in (
        ("wiki", _WIKI_ANCHOR),
        ("markdown", _MD_ANCHOR),
        ("markdown", _MD_ANCHOR_ANGLE),
        ("markdown", _DEF_ANCHOR),
        ("markdown", _DEF_ANCHOR_ANGLE),
    ):
        m = rx.search(before)
        if m:
            return AnchorContext(kind, m.group(1), m.group(2), m.start(2))
    return None


def anchor_link(kind: str, path: str) -> Link:
    """A stand-in link to ``path`` (as typed) for resolving a completion's file."""
    p = path if kind == "wiki" else unquote(path)
    return Link(kind, path, p, None, "", 0, 0, 0, 0)


def in_image(before: str) -> bool:
    """Whether the destination being typed (``before``: the line up to it) is an
    image's: the ``[`` that opens the text before its last ``](`` follows a ``!``."""
    close = before.rfind("](")
    opened = before.rfind("[", 0, close) if close >= 0 else -1
    return opened > 0 and before[opened - 1] == "!"
