"""Code actions **Extract section to a new note** (on a heading) and **Inline
note here** (on a link that names a note as a whole and stands alone), as
WorkspaceEdits the client applies: the new file created and filled, or the
inlined note deleted, with every link of the folder rewritten
(:mod:`mdseek.index.links.extract`; the edits become a WorkspaceEdit in
:func:`.rename.workspace_edit`, which confines every file to the workspace
folders and checks that the client can create and delete files).

Computed when the user asks for code actions (not for the automatic light
bulb: an extract reads the files that can link the section). An extract that
cannot be done (the target file exists, or lies outside the folders; the
editor cannot create files) is offered disabled, its reason in one line, to a
client that shows disabled actions, and left out otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsprotocol import types

from mdseek.index.links.edits import RenameError
from mdseek.index.links.extract import extract_section, inline_note, inline_target

from .rename import _at, workspace_edit
from .worker import off_loop
from .workspace import Workspace

EXTRACT = types.CodeActionKind.RefactorExtract
INLINE = types.CodeActionKind.RefactorInline
KINDS = (EXTRACT, INLINE)


def _wanted(kind: str, only: Sequence[str] | None) -> bool:
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def actions_sync(
    ws: Workspace, uri: str, position: types.Position, only: Sequence[str] | None, caps: Any
) -> list[types.CodeAction]:
    found = _at(ws, uri)
    if found is None:
        return []
    corpus, rel, doc = found
    line, col = ws.pos.from_client(doc.lines(), position)
    disabled_ok = bool(
        getattr(getattr(getattr(caps, "text_document", None), "code_action", None),
                "disabled_support", False)
    )  # fmt: skip
    out: list[types.CodeAction] = []
    h = next((x for x in doc.headings if x.line <= line < x.end_line), None)
    if h is not None and _wanted(EXTRACT, only):
        try:
            dst, outcome = extract_section(corpus, rel, doc, h, corpus.root.links_by_wiki())
            title = f"Extract section to {dst}"
            if (corpus.root.path / dst).exists():
                raise RenameError(f"{dst} already exists: mdseek does not overwrite it")
            out.append(
                types.CodeAction(
                    title=title, kind=EXTRACT, edit=workspace_edit(ws, corpus, outcome, caps)
                )
            )
        except RenameError as exc:
            if disabled_ok:
                out.append(
                    types.CodeAction(
                        title="Extract section to a new note",
                        kind=EXTRACT,
                        disabled=types.CodeActionDisabled(reason=str(exc)),
                    )
                )
    if _wanted(INLINE, only):
        it = inline_target(corpus, rel, doc, line, col)
        if it is not None:
            try:
                edit = workspace_edit(ws, corpus, inline_note(corpus, rel, doc, it), caps)
                out.append(types.CodeAction(title=f"Inline {it.note} here", kind=INLINE, edit=edit))
            except RenameError as exc:
                if disabled_ok:
                    out.append(
                        types.CodeAction(
                            title=f"Inline {it.note} here",
                            kind=INLINE,
                            disabled=types.CodeActionDisabled(reason=str(exc)),
                        )
                    )
    return out


async def code_actions(
    ws: Workspace, params: types.CodeActionParams, caps: Any
) -> list[types.CodeAction]:
    ctx = params.context
    if ctx.trigger_kind == types.CodeActionTriggerKind.Automatic:
        return []
    if not any(_wanted(k, ctx.only) for k in KINDS):
        return []
    uri, pos = params.text_document.uri, params.range.start
    return await off_loop(ws, actions_sync, ws, uri, pos, ctx.only, caps)
