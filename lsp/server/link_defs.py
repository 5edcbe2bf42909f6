"""Quick fixes on a reference definition (``[label]: destination``) under the
cursor: "Remove unused link definition" when no reference link of the document
uses its label, else "Remove duplicate link definition" when another line
defines the same label (CommonMark: the first one wins). Either removes the
definition's whole line(s). Labels compare as CommonMark matches them: case
folded, inner whitespace collapsed.
"""

from __future__ import annotations

import re

from lsprotocol import types

from mdseek.index.links.links import Link
from mdseek.index.links.sites import link_sites
from mdseek.index.text.document import ParsedDocument

from .convert import Positions
from .workspace import Workspace

_LABEL = re.compile(r"^ {0,3}\[((?:[^\[\]\\]|\\.)+)\]:")
_REF = re.compile(r"\[((?:[^\[\]\\]|\\.)*)\]$")  # the last [label] of a reference link


def _key(label: str) -> str:
    return " ".join(label.split()).casefold()


def _used(lines: list[str], link: Link) -> str | None:
    """The label a reference-style link uses: ``[t][label]``, else its text's
    (``[label][]``, ``[label]``)."""
    if link.line != link.end_line:
        source = "\n".join(lines[link.line : link.end_line + 1])[link.start :]
        source = source[: len(source) - (len(lines[link.end_line]) - link.end)]
    else:
        source = lines[link.line][link.start : link.end]
    m = _REF.search(source)
    if m and m.group(1) and m.start() > 0:
        return _key(m.group(1))
    inner = source[1:].split("]", 1)[0]
    return _key(inner)


def definition_fixes(ws: Workspace, uri: str, at: types.Range) -> list[types.CodeAction]:
    """The fix for the definition on the range's first line, if it is unused or a duplicate."""
    found = ws.doc_for_uri(uri)
    if found is None:
        return []
    path, doc = found
    return fixes(doc, ws.docs.links(path, doc), uri, ws.pos, at.start.line)


def fixes(
    doc: ParsedDocument, links: list[Link], uri: str, pos: Positions, line: int
) -> list[types.CodeAction]:
    lines = doc.lines()
    defs = {s.line: s for s in link_sites(doc, links) if s.kind == "definition"}
    labels: dict[int, str] = {}  # the label's line: its label
    dest: dict[int, int] = {}  # the label's line: the destination's (the same or the next)
    for n in defs:
        head = n if _LABEL.match(lines[n]) else n - 1
        m = _LABEL.match(lines[head]) if head >= 0 else None
        if m and not m.group(1).startswith("^"):
            labels[head], dest[head] = _key(m.group(1)), n
    start = line if line in labels else line - 1
    if start not in labels or line > dest[start]:
        return []
    key, end = labels[start], dest[start]
    used = {_used(lines, lk) for lk in links if lk.kind == "markdown" and lk.reference}
    if key not in used:
        title = "Remove unused link definition"
    elif sum(1 for k in labels.values() if k == key) > 1:
        title = "Remove duplicate link definition"
    else:
        return []
    if end + 1 < len(lines):
        rng = pos.range(lines, start, 0, end + 1, 0)
    elif start > 0:  # the last line: the line break before it goes
        rng = pos.range(lines, start - 1, len(lines[start - 1]), end, len(lines[end]))
    else:
        rng = pos.range(lines, start, 0, end, len(lines[end]))
    edit = types.WorkspaceEdit(changes={uri: [types.TextEdit(range=rng, new_text="")]})
    return [types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, edit=edit)]
