"""textDocument/codeLens: "N references" above each heading, and with the
``relatedLens`` setting "N related, unlinked": of the ``hoverRelated`` sections
most related to the heading's section, those it neither links to nor is
linked from (the engine's :meth:`Folder.related` with ``unlinked``, among the
most related only), shown with the same command.

The setting ``codeLens`` chooses which headings get the "N references" lens:
``nonzero`` (the default, as marksman and the VS Code extension show them):
only those a link reaches, counted when the lenses are asked for, in one pass
over the folder's links (:func:`.navigation.heading_references`), each lens
sent with its command; ``all``: every heading, cheaply (no command), the count
coming in ``codeLens/resolve`` (:func:`resolve_lens`), which clients ask for
the lenses on screen only, from the references finder
(:func:`.navigation.references_sync`: links anywhere in the folder to that
heading; to a document's title heading, links to the file); ``off``: none.
The VS Code extension asks for ``all`` and filters by its own ``codeLens``
(so a change of it needs no restart).

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

from mdseek.index.api import Cancelled
from mdseek.index.api import settings as table
from mdseek.index.text.document import Heading

from . import features as F
from .navigation import heading_references, references_sync
from .worker import checkpoint
from .workspace import Workspace

SHOW_REFERENCES = "mdseek.showReferences"
RELATED = "related"  # the data's kind of an "N related, unlinked" lens


def heading_lenses(ws: Workspace, uri: str) -> list[types.CodeLens]:
    found = ws.doc_for_uri(uri)
    if found is None:
        return []
    path, doc = found
    lines = doc.lines()
    checkpoint()
    mode = ws.settings.code_lens

    def lens(h: Heading, **more: str) -> types.CodeLens:
        data = {"uri": uri, "line": h.line, **more}
        return types.CodeLens(range=F.heading_range(ws.pos, lines, h), data=data)

    out: list[types.CodeLens] = []
    if mode == "all":
        out = [lens(h) for h in doc.headings]
    elif mode == "nonzero":
        refs = heading_references(ws, path, doc)
        out = [
            _with_command(lens(h), uri, refs[h.line], False)
            for h in doc.headings
            if refs.get(h.line)
        ]
    if ws.settings.related_lens:
        out += [lens(h, kind=RELATED) for h in doc.headings]
    return out


def _related_unlinked(ws: Workspace, uri: str, line: int) -> list[types.Location]:
    """The most related sections the heading's section is not linked with."""
    found = ws.doc_for_uri(uri)
    if found is None:
        return []
    path, doc = found
    root = ws.root_for(path)
    h = next((x for x in doc.headings if x.line == line), None)
    if root is None or not root.folder.is_open or h is None:
        return []
    limit = ws.settings.hover_related or table.default("hoverRelated")
    try:
        resp = root.folder.read(
            root.folder.related, root.rel(path), h.slug, h.line, limit, unlinked=True, fill=False
        ).result()
    except Cancelled:  # the folder is closing
        return []
    return [
        types.Location(
            uri=ws.uri_for(root.path / r.path),
            range=types.Range(
                start=types.Position(line=r.heading_line, character=0),
                end=types.Position(line=r.heading_line, character=0),
            ),
        )
        for r in resp.results
    ]


def resolve_lens(ws: Workspace, lens: types.CodeLens) -> types.CodeLens:
    """The lens with its count and command (0 references when the heading is gone)."""
    data: Any = lens.data
    uri = data.get("uri") if isinstance(data, dict) else None
    line = data.get("line") if isinstance(data, dict) else None
    related = isinstance(data, dict) and data.get("kind") == RELATED
    refs: list[types.Location] = []
    if isinstance(uri, str) and isinstance(line, int) and line >= 0:
        if related:
            refs = _related_unlinked(ws, uri, line)
        else:
            refs = references_sync(ws, uri, types.Position(line=line, character=0), False)
    return _with_command(lens, uri, refs, related)


def _with_command(
    lens: types.CodeLens, uri: Any, refs: list[types.Location], related: bool
) -> types.CodeLens:
    """The lens with its title ("N references") and command."""
    n = len(refs)
    if related:
        title = f"{n} related, unlinked"
    else:
        title = "1 reference" if n == 1 else f"{n} references"
    lens.command = types.Command(
        title=title,
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
