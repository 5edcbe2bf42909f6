"""Moving around the workspace: outline (documentSymbol), go to definition,
references, hover, and anchor completion after ``#`` in a link.

The ``*_sync`` functions parse files and run in a worker thread
(:func:`.worker.off_loop`); :func:`hover` also asks the engine for related
sections (on the folder's reader thread).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from mdseek.index.api import SearchResult
from mdseek.index.links.context import anchor_context, anchor_link, in_image
from mdseek.index.links.links import Link, Target, find_heading, link_at, resolve
from mdseek.index.links.obsidian import block_ids, is_block_ref
from mdseek.index.links.sites import definition_of, link_sites
from mdseek.index.text.aliases import NO_ALIASES
from mdseek.index.text.document import Heading, ParsedDocument

from . import features as F
from .convert import start_range
from .roots import Root
from .worker import checkpoint, off_loop
from .workspace import Workspace

_DEF_LINE = re.compile(r" {0,3}\[(?:\\.|[^\]\\])+\]:")  # [label]: ... (may be a definition)


def outline(ws: Workspace, uri: str) -> list[types.DocumentSymbol]:
    if not ws.settings.document_symbols:
        return []  # the client has its own outline (VS Code's built-in markdown)
    found = ws.doc_for_uri(uri)
    checkpoint()
    return F.document_symbols(found[1], ws.pos) if found else []


def definition_sync(
    ws: Workspace, uri: str, position: types.Position
) -> types.Location | list[types.Location] | None:
    """Where the link under the cursor leads; for an alias several notes claim,
    each of them (the editor lets the user choose: never a silent pick); for a
    reference-style link that leads nowhere mdseek can open (a URL, a missing
    file), its definition line."""
    cur = ws.cursor(uri, position)
    if cur is None:
        return None
    link = link_at(ws.written_links(cur.path, cur.doc), cur.line, cur.col)
    label = None  # the cursor on a definition's label: as on its destination
    rows = cur.doc.lines()
    if link is None and cur.line < len(rows) and _DEF_LINE.match(rows[cur.line]):
        links = ws.docs.links(cur.path, cur.doc)
        label = next(
            (
                s
                for s in link_sites(cur.doc, links)
                if s.kind == "definition" and s.line == cur.line
            ),
            None,
        )
        link = label.link if label else None
    if link is None:
        return None
    root = ws.root_for(cur.path)
    if root is not None and link.kind == "wiki":
        claims = ws.resolve_link(root, cur.path, link).ambiguous
        if claims:
            return [
                types.Location(uri=ws.uri_for(root.path / f), range=start_range()) for f in claims
            ]
    found = ws.link_target(root, cur.path, link)
    if found is None:  # [t][ref] to a URL or a missing file: its [ref]: line, as both peers
        site = label or definition_of(cur.doc, link, ws.docs.links(cur.path, cur.doc))
        if site is None:
            return None
        rng = ws.pos.range(cur.doc.lines(), site.line, 0, site.line, 0)
        return types.Location(uri=uri, range=rng)
    tpath, tdoc, h = found
    rng = F.heading_range(ws.pos, tdoc.lines(), h) if h else start_range()
    if h is None and link.anchor and is_block_ref(link.anchor):  # [[note#^id]]: its line
        line = block_ids(tdoc).get(link.anchor[1:].lower())
        if line is not None:
            rng = ws.pos.range(tdoc.lines(), line, 0, line, 0)
    return types.Location(uri=ws.uri_for(tpath), range=rng)


def references_sync(
    ws: Workspace, uri: str, position: types.Position, include_decl: bool
) -> list[types.Location]:
    """Links anywhere in the folder to the heading under the cursor (or to the
    target of the link under the cursor); a document's title stands for the file.
    A file's references (from a link to it, or the path part of a link to one
    of its headings) include the links to its headings that name it by path,
    as VS Code's."""
    cur = ws.cursor(uri, position)
    if cur is None:
        return []
    path, doc = cur.path, cur.doc
    root = ws.root_for(path)
    if root is None:
        return []
    heading = ws.heading_at(doc, cur.line)
    target_path, target_doc = path, doc
    link = link_at(ws.written_links(path, doc), cur.line, cur.col) if heading is None else None
    if link is not None:  # references of what the link points to
        t = ws.resolve_link(root, path, link)
        found = ws.target_doc(root, path, t)
        if found is None:
            return []
        target_path, target_doc = found
        on_path = _on_path(doc, link, cur.line, cur.col)  # the file's, as rename's there
        heading = (
            find_heading(target_doc, t.anchor, t.by_text) if t.anchor and not on_path else None
        )
    elif heading is None:
        return []
    is_title = heading is None or (
        target_doc.headings and heading == target_doc.headings[0] and heading.level == 1
    )
    whole_file = link is not None and heading is None  # on a link to the file itself
    want_rel = root.rel(target_path)
    out: list[types.Location] = []
    if include_decl and heading is not None:
        out.append(
            types.Location(
                uri=ws.uri_for(target_path),
                range=F.heading_range(ws.pos, target_doc.lines(), heading),
            )
        )
    for loc, lk, t in links_into(ws, root, want_rel):
        if t.anchor and not (whole_file and lk.path):  # a file's: links to its headings too
            if heading is None or find_heading(target_doc, t.anchor, t.by_text) != heading:
                continue
        elif not is_title:
            continue
        out.append(loc)
    return out


def links_into(
    ws: Workspace, root: Root, want_rel: str
) -> Iterator[tuple[types.Location, Link, Target]]:
    """Every link of the folder that reaches the file ``want_rel`` (the
    link's place, the link, where it leads), file by file."""
    files, aliases = root.markdown_files(), ws.aliases(root)
    for rel in files:
        checkpoint()  # a cancelled request stops here, not at the folder's last file
        p = root.path / rel
        d = ws.docs.parsed(p, rel, ws.root_paths)
        if d is None:
            continue
        lines = None
        for lk in ws.written_links(p, d, used_definitions=False):
            wiki = lk.kind == "wiki"
            t = resolve(
                lk, rel, root.exists, files if wiki else (), aliases if wiki else NO_ALIASES
            )
            if t.path != want_rel or not t.exists:
                continue
            lines = lines or d.lines()
            yield types.Location(uri=ws.uri_for(p), range=F.link_range(ws.pos, lines, lk)), lk, t


def heading_references(
    ws: Workspace, path: Path, doc: ParsedDocument
) -> dict[int, list[types.Location]]:
    """The references of each heading of ``doc`` (by its line), as
    :func:`references_sync` finds them on the heading, in one pass over the
    folder: the links to it, and to the title heading the links to the file."""
    root = ws.root_for(path)
    heads = doc.headings
    if root is None or not heads:
        return {}
    title = heads[0] if heads[0].level == 1 else None
    out: dict[int, list[types.Location]] = {}
    for loc, _, t in links_into(ws, root, root.rel(path)):
        h = find_heading(doc, t.anchor, t.by_text) if t.anchor else title
        if h is not None:
            out.setdefault(h.line, []).append(loc)
    return out


def _on_path(doc: ParsedDocument, link: Link, line: int, col: int) -> bool:
    """Whether the cursor is on the path a markdown link writes (``/doc.md`` of
    ``[t](/doc.md#abc)``), not on its text or fragment: there the link stands for
    its file (VS Code's references). A wiki link to a heading stands for the
    heading anywhere (marksman's ``[[doc#h]]``)."""
    if not link.path or link.kind == "wiki":
        return False
    for s in link_sites(doc):
        if s.line == line and s.col <= col <= s.end and s.link.path == link.path:
            return s.covers(line, col, s.parts()[0])
    return False


@dataclass
class HeadingHover:
    """A hover on a heading: what to ask the engine for related sections."""

    root: Root | None
    path: Path
    heading: Heading
    breadcrumb: str
    range: types.Range


def hover_sync(
    ws: Workspace, uri: str, position: types.Position
) -> types.Hover | HeadingHover | None:
    """A finished Hover for links; for a heading, what to ask the engine."""
    cur = ws.cursor(uri, position)
    if cur is None:
        return None
    path, doc = cur.path, cur.doc
    root = ws.root_for(path)
    link = link_at(ws.docs.links(path, doc), cur.line, cur.col)  # once per version
    if link is not None:
        found = ws.link_target(root, path, link)
        if found is None:
            return None
        tpath, tdoc, h = found
        rel = root.rel(tpath) if root else tpath.name
        hov = F.hover_section(tdoc, h, rel, ws.uri_for(tpath))
        hov.range = F.link_range(ws.pos, doc.lines(), link)
        return hov
    h = ws.heading_at(doc, cur.line)
    if h is None:
        return None
    sec = next((s for s in doc.sections if s.heading == h), None)
    crumb = sec.breadcrumb if sec else h.text
    rng = F.heading_range(ws.pos, doc.lines(), h)
    return HeadingHover(root, path, h, crumb, rng)


async def hover(ws: Workspace, uri: str, position: types.Position) -> types.Hover | None:
    """A link's target previewed; a heading's breadcrumb and related sections."""
    res = await off_loop(ws, hover_sync, ws, uri, position)
    if not isinstance(res, HeadingHover):
        return res
    root, path, h = res.root, res.path, res.heading
    related: list[tuple[SearchResult, str]] = []
    note = None
    limit = ws.settings.hover_related
    if root is not None and root.folder.is_open and limit > 0:
        unlinked = ws.settings.related_unlinked
        resp = await root.read(
            root.folder.related, root.rel(path), h.slug, h.line, limit, unlinked=unlinked
        )
        related = [(r, ws.uri_for(root.path / r.path)) for r in resp.results]
        note = resp.note
    return F.hover_heading(res.breadcrumb, related, note, res.range)


def anchor_completion_sync(
    ws: Workspace, uri: str, position: types.Position
) -> list[types.CompletionItem]:
    """Headings of the link's target file after ``#`` (slugs, or heading text in wiki links)."""
    cur = ws.cursor(uri, position)
    if cur is None:
        return []
    path, doc, line, col = cur.path, cur.doc, cur.line, cur.col
    if any(
        b.kind in ("fence", "code_block") and b.start_line <= line < b.end_line for b in doc.blocks
    ):
        return []
    lines = doc.lines()
    text = lines[line] if line < len(lines) else ""
    ctx = anchor_context(text, col)
    if ctx is None or (ctx.kind == "markdown" and in_image(text[: ctx.start])):
        return []  # an image's '#' names no heading
    root = ws.root_for(path)
    target = ws.resolve_link(root, path, anchor_link(ctx.kind, ctx.path))
    found = ws.target_doc(root, path, target) if ctx.path else (path, doc)
    if found is None:
        return []
    rng = ws.pos.range(lines, line, ctx.start, line, col)
    return F.anchor_items(found[1], ctx.kind, rng, ctx.prefix)
