"""textDocument/documentHighlight: the places of a document that name what the
cursor names (a link's other uses, its target heading), from
:mod:`mdseek.index.links.highlight`."""

from __future__ import annotations

from lsprotocol import types

from mdseek.index.links.autolinks import find_autolinks
from mdseek.index.links.highlight import highlights

from .workspace import Workspace


def highlights_sync(
    ws: Workspace, uri: str, position: types.Position
) -> list[types.DocumentHighlight]:
    cur = ws.cursor(uri, position)
    if cur is None:
        return []
    root = ws.root_for(cur.path)
    rel = root.rel(cur.path) if root is not None else cur.path.name
    links = ws.docs.links(cur.path, cur.doc)
    found = highlights(
        cur.doc,
        rel,
        cur.line,
        cur.col,
        lambda link: ws.resolve_link(root, cur.path, link),
        links,
        find_autolinks(cur.doc, links),
    )
    lines = cur.doc.lines()
    return [
        types.DocumentHighlight(
            range=ws.pos.range(lines, s.line, s.start, s.end_line, s.end),
            kind=types.DocumentHighlightKind.Text,
        )
        for s in found
    ]
