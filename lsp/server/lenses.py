"""textDocument/codeLens: "N references" above each heading.

:func:`heading_lenses` is cheap (the document's headings, no command); the
count comes in ``codeLens/resolve`` (:func:`resolve_lens`), which clients ask
for the lenses on screen only, from the references finder
(:func:`.navigation.references_sync`: links anywhere in the folder to that
heading; to a document's title heading, links to the file).

The lens's command is ``mdseek.showReferences`` with the arguments
``[uri, position, locations]`` in LSP JSON -- the shape of VS Code's
``editor.action.showReferences``, which needs VS Code's own types, so the
command is run by the client: the VS Code extension registers it (converting
and calling ``editor.action.showReferences``), and the README gives Neovim's
three lines (``vim.lsp.commands``, the locations into the quickfix list). The
server does not advertise it for ``workspace/executeCommand``: it has no list
to show, and VS Code's language client would then claim the command name.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from . import features as F
from .navigation import references_sync
from .worker import checkpoint
from .workspace import Workspace

SHOW_REFERENCES = "mdseek.showReferences"


def heading_lenses(ws: Workspace, uri: str) -> list[types.CodeLens]:
    found = ws.doc_for_uri(uri)
    if found is None:
        return []
    doc = found[1]
    lines = doc.lines()
    checkpoint()
    return [
        types.CodeLens(range=F.heading_range(ws.pos, lines, h), data={"uri": uri, "line": h.line})
        for h in doc.headings
    ]


def resolve_lens(ws: Workspace, lens: types.CodeLens) -> types.CodeLens:
    """The lens with its count and command (0 references when the heading is gone)."""
    data: Any = lens.data
    uri = data.get("uri") if isinstance(data, dict) else None
    line = data.get("line") if isinstance(data, dict) else None
    refs: list[types.Location] = []
    if isinstance(uri, str) and isinstance(line, int) and line >= 0:
        refs = references_sync(ws, uri, types.Position(line=line, character=0), False)
    n = len(refs)
    lens.command = types.Command(
        title="1 reference" if n == 1 else f"{n} references",
        command=SHOW_REFERENCES if n else "",
        arguments=[
            uri,
            {"line": lens.range.start.line, "character": lens.range.start.character},
            [{"uri": r.uri, "range": F.range_json(r.range)} for r in refs],
        ]
        if n
        else None,
    )
    return lens
