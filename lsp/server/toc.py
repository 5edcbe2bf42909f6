"""The "table of contents" code action: a nested list of links to the
document's headings (GitHub's anchors, the index's slugs), inserted or updated
in place.

How an existing table is recognised, first match wins:

1. Between marker comments: ``<!-- toc -->`` and ``<!-- tocstop -->`` (the
   markdown-toc convention), ``<!-- TOC -->`` and ``<!-- /TOC -->``, or
   marksman's ``<!--toc:start-->`` and ``<!--toc:end-->``; case does not
   matter. The lines between them are replaced.
2. Otherwise a top-level list every line of which is an item holding one link
   to an anchor of this document (``- [Install](#install)``), as other tools
   and people write it without markers; the list is replaced.
3. Otherwise there is none: "Insert table of contents" puts one, between
   ``<!-- toc -->`` markers so the next update finds it, after the title
   heading (or at the top, after front matter).

The leading H1 that is the document's title is not listed; levels nest by
two spaces from the highest level present. "Update table of contents" is
offered only when the table differs from what it would be.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types

from mdseek.index.text.document import Heading, ParsedDocument

from .convert import Positions

if TYPE_CHECKING:
    from .workspace import Workspace

KIND = f"{types.CodeActionKind.Source.value}.toc"
START = "<!-- toc -->"
STOP = "<!-- tocstop -->"
_START = re.compile(r"^\s{0,3}<!--\s*toc(?::start)?\s*-->\s*$", re.IGNORECASE)
_STOP = re.compile(r"^\s{0,3}<!--\s*(?:tocstop|/toc|toc:end)\s*-->\s*$", re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[(?:[^\]\\]|\\.)*\]\(#[^)\s]*\)\s*$")


def listed(doc: ParsedDocument) -> list[Heading]:
    heads = doc.headings
    if heads and heads[0].level == 1 and heads[0].text == doc.title:
        return heads[1:]
    return list(heads)


def toc_lines(doc: ParsedDocument) -> list[str]:
    heads = listed(doc)
    if not heads:
        return []
    top = min(h.level for h in heads)
    return [
        f"{'  ' * (h.level - top)}- [{_escape(h.text)}](#{h.slug})"
        for h in heads
        if h.text  # an empty heading has nothing to show
    ]


def _escape(text: str) -> str:
    return re.sub(r"([\\\[\]])", r"\\\1", text)


def find_toc(doc: ParsedDocument) -> tuple[int, int] | None:
    """Lines ``[a, b)`` of an existing table of contents (its list, without markers)."""
    lines = doc.lines()
    start = None
    for n, text in enumerate(lines):
        if start is None and _START.match(text):
            start = n
        elif start is not None and _STOP.match(text):
            return start + 1, n
    for b in doc.blocks:
        if b.kind in ("bullet_list", "ordered_list"):
            body = [t for t in lines[b.start_line : b.end_line] if t.strip()]
            if body and all(_ITEM.match(t) for t in body):
                return b.start_line, b.end_line
    return None


def code_actions_for(ws: Workspace, uri: str) -> list[types.CodeAction]:
    """:func:`code_actions` of the document at ``uri`` (in a worker thread)."""
    found = ws.doc_for_uri(uri)
    return code_actions(found[1], uri, ws.pos) if found else []


def code_actions(doc: ParsedDocument, uri: str, pos: Positions) -> list[types.CodeAction]:
    new = toc_lines(doc)
    if len(new) < 2:
        return []
    lines = doc.lines()
    found = find_toc(doc)
    if found is not None:
        a, b = found
        while b > a and not lines[b - 1].strip():  # keep the blank line after a list
            b -= 1
        if lines[a:b] == new:
            return []
        if b > a:
            rng = pos.range(lines, a, 0, b - 1, len(lines[b - 1]))
            text = "\n".join(new)
        else:  # empty markers
            rng = pos.range(lines, a, 0, a, 0)
            text = "\n".join(new) + "\n"
        title = "Update table of contents"
    else:
        heads = doc.headings
        at = (
            heads[0].end_line
            if heads and heads[0].level == 1 and heads[0].text == doc.title
            else doc.body_start_line
        )
        block = "\n".join([START, *new, STOP])
        if at < len(lines) and (at < len(lines) - 1 or lines[at]):
            rng = pos.range(lines, at, 0, at, 0)
            after = "\n" if lines[at].strip() else ""  # a blank line before what follows
            text = f"\n{block}\n{after}" if at > 0 else f"{block}\n\n"
        else:  # the document ends here
            last = len(lines) - 1
            rng = pos.range(lines, last, len(lines[last]), last, len(lines[last]))
            text = f"\n\n{block}\n" if lines[last] else f"\n{block}\n"
        title = "Insert table of contents"
    edit = types.WorkspaceEdit(changes={uri: [types.TextEdit(range=rng, new_text=text)]})
    return [types.CodeAction(title=title, kind=KIND, edit=edit)]
