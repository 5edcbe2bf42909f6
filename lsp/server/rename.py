"""Rename over the protocol: ``textDocument/prepareRename``,
``textDocument/rename`` (a heading, a front-matter alias, or the heading, file
or alias a link points to) and ``workspace/willRenameFiles`` (files and folders
moved in the editor).

Reads the folder's files as the editor sees them (open buffers, else disk) and
asks :mod:`mdseek.index.links.rename` and :mod:`mdseek.index.links.move` for the edits; :func:`workspace_edit` is the one
place an outcome becomes a ``WorkspaceEdit`` (``documentChanges`` with each
buffer's version, ``null`` for a file read from disk). A file that cannot be read
or decoded is left untouched and named in the log. Every file an edit or a file
operation names is resolved through its real path (symlinks followed) and must
lie inside a workspace folder (:func:`_confined`): a rename into ``out/`` where
``out`` links elsewhere is refused in one line.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from mdseek.index.links.edits import Edit, Outcome, RenameError, add_file_edits
from mdseek.index.links.links import Link
from mdseek.index.links.move import Move, move_files, new_file_path
from mdseek.index.links.rename import RenameTarget, rename_alias, rename_heading, rename_target
from mdseek.index.links.tags import Tag, find_tags, is_tag_name, renamed, tag_at, tags_on_line
from mdseek.index.text.document import ParsedDocument

from .convert import uri_to_path
from .roots import Root
from .worker import off_loop
from .workspace import Workspace

log = logging.getLogger("mdseek.lsp")
_ORIGIN = types.Position(line=0, character=0)

_MD = types.FileOperationPattern(
    glob="**/*.{md,markdown}",
    matches=types.FileOperationPatternKind.File,
    options=types.FileOperationPatternOptions(ignore_case=True),
)
_FOLDER = types.FileOperationPattern(glob="**/*", matches=types.FileOperationPatternKind.Folder)
FILE_OPERATIONS = types.FileOperationRegistrationOptions(
    filters=[
        types.FileOperationFilter(pattern=_MD, scheme="file"),
        types.FileOperationFilter(pattern=_FOLDER, scheme="file"),
    ]
)


def offer_file_operations(caps: types.ClientCapabilities) -> None:
    """Have pygls offer will/didRenameFiles to every client, not only to those that
    announce them: Neovim 0.11 announces none, yet its file-explorer plugins
    (oil.nvim, nvim-tree, snacks.rename) send willRenameFiles to a server that
    offers it."""
    if caps.workspace is None:
        caps.workspace = types.WorkspaceClientCapabilities()
    ops = caps.workspace.file_operations or types.FileOperationClientCapabilities()
    ops.will_rename = ops.did_rename = True
    caps.workspace.file_operations = ops


class _Corpus:
    """One folder's markdown files, each read once, remembering the version read."""

    def __init__(self, ws: Workspace, root: Root):
        self.ws, self.root = ws, root
        self.files = root.markdown_files()
        self.aliases = ws.aliases(root)
        self.read: dict[str, tuple[Path, int | None, ParsedDocument]] = {}

    def doc(self, rel: str) -> ParsedDocument | None:
        if rel in self.read:
            return self.read[rel][2]
        path = self.root.path / rel
        snap = self.ws.docs.snapshot(path, rel, self.ws.root_paths)
        if snap is None:
            log.warning("rename: %s left untouched: it cannot be read", path)
            return None
        self.read[rel] = (path, snap[0], snap[1])
        return snap[1]

    def text(self, rel: str) -> str | None:
        if rel in self.read:
            return self.read[rel][2].text
        lines = self.ws.docs.lines(self.root.path / rel, self.ws.root_paths)
        return "\n".join(lines) if lines is not None else None

    def links(self, rel: str, doc: ParsedDocument) -> list[Link]:
        return self.ws.docs.links(self.root.path / rel, doc)  # kept per version

    def exists(self, rel: str) -> bool:
        return self.root.exists(rel)


def _at(ws: Workspace, uri: str) -> tuple[_Corpus, str, ParsedDocument] | None:
    path = uri_to_path(uri)
    root = ws.root_for(path) if path is not None else None
    if path is None or root is None:
        return None
    corpus = _Corpus(ws, root)
    rel = root.rel(path)
    doc = corpus.doc(rel)
    return (corpus, rel, doc) if doc is not None else None


def _under_cursor(
    ws: Workspace, uri: str, position: types.Position
) -> tuple[_Corpus, ParsedDocument, Tag | None, RenameTarget | None] | None:
    """What a rename at ``position`` renames: a tag, else a heading or a link's target."""
    found = _at(ws, uri)
    if found is None:
        return None
    corpus, rel, doc = found
    line, col = ws.pos.from_client(doc.lines(), position)
    tag = tag_at(tags_on_line(doc, line), line, col)
    if tag is not None:
        return corpus, doc, tag, None
    return corpus, doc, None, rename_target(corpus, rel, doc, line, col)


def prepare_sync(
    ws: Workspace, uri: str, position: types.Position
) -> types.PrepareRenamePlaceholder | None:
    """The range and text a rename at ``position`` would change; None when the
    cursor is on neither a tag, a heading nor a link to something in the folder."""
    found = _under_cursor(ws, uri, position)
    if found is None:
        return None
    _, doc, tag, t = found
    if tag is not None:
        rng = ws.pos.range(doc.lines(), tag.line, tag.start, tag.line, tag.end)
        return types.PrepareRenamePlaceholder(range=rng, placeholder=tag.name)
    if t is None:
        return None
    rng = ws.pos.range(doc.lines(), *t.span)
    return types.PrepareRenamePlaceholder(range=rng, placeholder=t.placeholder)


def rename_sync(
    ws: Workspace, uri: str, position: types.Position, name: str, caps: Any
) -> types.WorkspaceEdit | None:
    found = _under_cursor(ws, uri, position)
    if found is None:
        return None
    corpus, _, tag, t = found
    if tag is not None:
        return workspace_edit(ws, corpus, _rename_tag(corpus, tag, name), caps)
    if t is None:
        return None
    if t.kind in ("heading", "alias"):
        tdoc = corpus.doc(t.path)
        if tdoc is None:
            raise RenameError(f"{t.path} cannot be read")
        if t.heading is not None:
            out = rename_heading(corpus, t.path, tdoc, t.heading, name)
        else:
            out = rename_alias(corpus, t.path, tdoc, t.placeholder, name)
        return workspace_edit(ws, corpus, out, caps)
    assert t.site is not None
    written = t.site.parts()[0][1]
    new = new_file_path(t.source, t.path, "<" if t.site.angle else written, t.site.kind, name)
    if new == t.path:
        raise RenameError(f"{t.path} already has that name")
    if corpus.exists(new) or (corpus.root.path / new).exists():
        raise RenameError(f"{new} already exists")
    out = move_files(corpus, [Move(t.path, new)])
    out.moves.append((t.path, new))
    return workspace_edit(ws, corpus, out, caps)


def _rename_tag(corpus: _Corpus, tag: Tag, name: str) -> Outcome:
    """Every use of the tag in the folder, in text and front matter, and of the
    tags nested under it, renamed (names compare without case)."""
    new = name.strip().removeprefix("#")
    if not is_tag_name(new):
        raise RenameError(
            f"#{new} cannot be a tag: use letters, digits, _, - and /, not only digits"
        )
    out = Outcome()
    for rel in corpus.files:
        text = corpus.text(rel)
        if text is None or tag.key not in text.lower():  # most files: not read further
            continue
        doc = corpus.doc(rel)
        if doc is None:
            continue
        edits = ((t, renamed(t.name, tag.key, new)) for t in find_tags(doc))
        add_file_edits(
            out,
            rel,
            doc,
            (Edit(t.line, t.start, t.line, t.end, n) for t, n in edits if n and n != t.name),
        )
    return out


def will_rename_sync(
    ws: Workspace, files: Sequence[types.FileRename], caps: Any
) -> types.WorkspaceEdit | None:
    """Edits for files and folders about to be moved (the editor moves them)."""
    per_root: dict[Path, tuple[Root, list[Move]]] = {}
    for f in files:
        old, new = uri_to_path(f.old_uri), uri_to_path(f.new_uri)
        root = ws.root_for(old) if old is not None else None
        if old is None or new is None or root is None:
            continue
        if not root.contains(new):
            log.warning(
                "moving %s out of its workspace folder: links to it are left as they are", old
            )
            continue
        move = Move(root.rel(old), root.rel(new), old.is_dir())
        per_root.setdefault(root.path, (root, []))[1].append(move)
    changes: list = []
    for root, moves in per_root.values():
        corpus = _Corpus(ws, root)
        edit = workspace_edit(ws, corpus, move_files(corpus, moves), caps)
        changes.append(edit)
    if not changes:
        return None
    if len(changes) == 1:
        return changes[0]
    merged = types.WorkspaceEdit(document_changes=[], changes={})
    for e in changes:
        merged.document_changes = [*(merged.document_changes or []), *(e.document_changes or [])]
        merged.changes = {**(merged.changes or {}), **(e.changes or {})}
    return merged


def _confined(ws: Workspace, corpus: _Corpus, rel: str) -> Path:
    """The real path of the folder's ``rel`` (symlinks followed; it need not
    exist yet); RenameError unless it lies inside a workspace folder."""
    try:
        real = (corpus.root.path / rel).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise RenameError(f"{rel} cannot be resolved ({exc})") from None
    if ws.root_for(real) is None:
        raise RenameError(f"{rel} is outside the workspace folders (it resolves to {real})")
    return real


def workspace_edit(ws: Workspace, corpus: _Corpus, out: Outcome, caps: Any) -> types.WorkspaceEdit:
    """The one place an outcome becomes a WorkspaceEdit; every file it names
    is confined to the workspace folders first (:func:`_confined`)."""
    made = [rel for rel, _ in out.creates]
    for rel in [*out.edits, *(p for move in out.moves for p in move), *made, *out.deletes]:
        _confined(ws, corpus, rel)
    for rel, why in out.skipped:
        log.warning("rename: %s left untouched: %s", corpus.root.path / rel, why)
    edit_caps = getattr(getattr(caps, "workspace", None), "workspace_edit", None)
    versioned = bool(getattr(edit_caps, "document_changes", False))
    ops = getattr(edit_caps, "resource_operations", None) or []
    K = types.ResourceOperationKind
    for kind, wanted, verb in (
        (K.Rename, out.moves, "rename"),
        (K.Create, out.creates, "create"),
        (K.Delete, out.deletes, "delete"),
    ):
        if wanted and not (versioned and kind in ops):
            raise RenameError(
                f"this editor cannot {verb} files through an edit (no resource operations)"
            )
    doc_changes: list = []
    for rel, text in out.creates:  # made empty, then filled (CreateFile has no content)
        uri = ws.uri_for(corpus.root.path / rel)
        doc_changes.append(types.CreateFile(uri=uri))
        ident = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None)
        fill = types.TextEdit(range=types.Range(start=_ORIGIN, end=_ORIGIN), new_text=text)
        doc_changes.append(types.TextDocumentEdit(text_document=ident, edits=[fill]))
    changes: dict[str, list[types.TextEdit]] = {}
    for rel, edits in out.edits.items():
        path, version, doc = corpus.read[rel]
        lines = doc.lines()
        text_edits = [
            types.TextEdit(
                range=ws.pos.range(lines, e.line, e.col, e.end_line, e.end_col), new_text=e.text
            )
            for e in sorted(edits, key=lambda e: (e.line, e.col))
        ]
        uri = ws.uri_for(path)
        if versioned:
            ident = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            doc_changes.append(types.TextDocumentEdit(text_document=ident, edits=text_edits))
        else:
            changes[uri] = text_edits
    for old, new in out.moves:
        doc_changes.append(
            types.RenameFile(
                old_uri=ws.uri_for(corpus.root.path / old),
                new_uri=ws.uri_for(corpus.root.path / new),
            )
        )
    for rel in out.deletes:
        doc_changes.append(types.DeleteFile(uri=ws.uri_for(corpus.root.path / rel)))
    if versioned:
        return types.WorkspaceEdit(document_changes=doc_changes)
    return types.WorkspaceEdit(changes=changes)


# -- async entry points (the server's handlers call these) ------------------------


async def prepare(ws: Workspace, params: types.PrepareRenameParams) -> Any:
    return await off_loop(ws, prepare_sync, ws, params.text_document.uri, params.position)


async def rename(
    ws: Workspace, params: types.RenameParams, caps: Any
) -> types.WorkspaceEdit | None:
    try:
        uri, pos = params.text_document.uri, params.position
        return await off_loop(ws, rename_sync, ws, uri, pos, params.new_name, caps)
    except RenameError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc


async def will_rename(ws: Workspace, params: types.RenameFilesParams, caps: Any) -> Any:
    try:
        return await off_loop(ws, will_rename_sync, ws, params.files, caps)
    except RenameError as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc
