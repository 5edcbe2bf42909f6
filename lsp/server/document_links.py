"""textDocument/documentLink: every link of a document with its resolved target,
so a click (Ctrl+click in VS Code, ``gx``-style plugins elsewhere) opens it.

Inline ``[t](x.md#a)``, reference-style ``[t][ref]`` and wiki ``[[x#Heading]]``
links, and the destination of a reference definition ``[ref]: x.md#a``, resolve
the way go-to-definition does: to the file, at the heading's
line (``file:///x.md#L12``); an inline image's source is one too, and an
autolink ``<https://...>`` (its URL). A link to
another file of the folder that is not markdown (a picture, a PDF, a script)
opens that file: any file inside the folder its filter does not exclude, but
a hidden one (``.env``) or a key (:meth:`Workspace.linked_file`; a click opens
it in the editor, nothing of it is shown). Web links (http, https, mailto) keep their URL; an empty destination
``[t](<>)`` gets none; nothing else with a scheme is offered (no ``command:``
or ``file:`` link from a stranger's document). A file the folder excludes, or
one outside the folder (symlinks resolved), gets no target; nor do broken links
and links that leave the workspace (the diagnostics name them).
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from mdseek.index.links.autolinks import find_autolinks
from mdseek.index.links.links import MARKDOWN_SUFFIXES, Link
from mdseek.index.links.obsidian import find_attachment, is_attachment

from . import features as F
from .convert import uri_at_line
from .workspace import Workspace

WEB_SCHEMES = ("http:", "https:", "mailto:")


def document_links_sync(ws: Workspace, uri: str, tooltips: bool = True) -> list[types.DocumentLink]:
    """The document's links that have a target (tooltips only for clients that show them)."""
    found = ws.doc_for_uri(uri)
    if found is None:
        return []
    path, doc = found
    lines = doc.lines()
    out = []
    targets: dict[tuple, tuple[str, str] | None] = {}  # links to one place resolve once
    written = ws.written_links(path, doc)
    for lk in written:
        key = (lk.kind, lk.href, lk.path, lk.anchor)
        if key not in targets:
            targets[key] = _target(ws, path, lk)
        target = targets[key]
        if target is not None:
            out.append(
                types.DocumentLink(
                    range=F.link_range(ws.pos, lines, lk),
                    target=target[0],
                    tooltip=target[1] if tooltips else None,
                )
            )
    for a in find_autolinks(doc, ws.docs.links(path, doc)):
        if a.url.lower().startswith(WEB_SCHEMES):
            out.append(
                types.DocumentLink(
                    range=ws.pos.range(lines, a.line, a.start, a.line, a.end),
                    target=a.url,
                    tooltip=a.url if tooltips else None,
                )
            )
    return sorted(out, key=lambda d: (d.range.start.line, d.range.start.character))


def _target(ws: Workspace, path: Path, lk: Link) -> tuple[str, str] | None:
    """The URI a link opens and a tooltip naming it."""
    if lk.kind == "markdown" and not lk.href.strip():
        return None  # [t](<>): leads nowhere
    if lk.kind == "markdown" and lk.external:
        href = lk.href.strip()
        return (href, href) if href.lower().startswith(WEB_SCHEMES) else None
    root = ws.root_for(path)
    if root is not None and lk.kind == "wiki" and lk.path and is_attachment(lk.path):
        rel = find_attachment(lk.path, root.rel(path), root.exists, root.files_named)
        real = ws.linked_file(root, rel) if rel else None
        return (ws.uri_for(real), rel) if real and rel else None
    t = ws.resolve_link(root, path, lk)
    if t.path is None or not t.exists:
        return None
    if not t.path.lower().endswith(MARKDOWN_SUFFIXES):  # an image, a PDF: the file itself
        real = ws.linked_file(root, t.path) if root is not None else None
        return (ws.uri_for(real), t.path) if real else None
    hit = ws.link_target(root, path, lk)
    if hit is None:
        return None
    tpath, tdoc, h = hit
    rel = root.rel(tpath) if root else tpath.name
    if h is None:
        if t.anchor:  # a missing heading: the link is broken
            return None
        return ws.uri_for(tpath), f"{tdoc.title} ({rel})"
    return uri_at_line(ws.uri_for(tpath), h.line), f"{h.text} ({rel}:{h.line + 1})"
