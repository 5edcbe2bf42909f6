"""The mdseek language server (pygls 2, stdio): the handler table.

Each handler parses its params (lsprotocol types; :mod:`.params` for the custom
requests) and calls the module that owns the feature:

  :mod:`.navigation`   outline, definition, references, hover, anchor completion
  :mod:`.links`        linking by meaning: the code action, target completion
  :mod:`.search`       workspace/symbol, mdseek/search, mdseek/status
  :mod:`.rename`       rename a heading or file keeping links, file and folder moves
  :mod:`.diagnostics`  broken links of every indexed file (pulled or pushed)
  :mod:`.quick_fixes`  their fixes: the nearest heading, the missing note created
  :mod:`.near_dups`    near-duplicate hints' fixes: a link or an embed in a section's place
  :mod:`.link_defs`    remove an unused or duplicate [label]: definition
  :mod:`.indexing`     folders, reconciling with progress, file events
  :mod:`.folding`, :mod:`.document_links`, :mod:`.selection`  document structure
  :mod:`.lenses`       "N references" above headings
  :mod:`.tags`         #tags: completion, references, workspace symbols ("#name")
  :mod:`.toc`          the table of contents code action

They share a :class:`.workspace.Workspace` (folders, buffers, position
encoding, settings). Nothing here blocks the event loop: engine work runs in
each folder's worker threads; work that grows with a document in a worker
thread, cancellable (:func:`.worker.off_loop`).
Logging goes to stderr (stdout is the protocol).

Custom requests (the VS Code client depends on these shapes):
  mdseek/search  {query, limit?, explain?} -> {mode, note?, results: [{uri, path,
                 heading, heading_text, breadcrumb, level, range, start_line, end_line,
                 score, snippet, lexical_rank, dense_rank, explain?}]}  (explain: the score parts)
  mdseek/status  {} -> {state, files, chunks, window_fit, model, pending_embeds,
                 message?, embedded_total, updates_pending, updates_done,
                 cancelled, roots}
  mdseek/reindex {} -> {files, chunks}
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from mdseek import __version__

from . import (
    document_links,
    extract,
    folding,
    highlight,
    lenses,
    link_defs,
    links,
    navigation,
    near_dups,
    quick_fixes,
    rename,
    search,
    selection,
    tags,
    toc,
)
from .client import Tasks, supports, tell
from .config import SECTION, Settings, parse_settings, settings_message
from .convert import Positions, uri_to_path
from .diagnostics import Diagnostics
from .indexing import Indexing
from .params import InvalidParams, SearchParams, structure
from .transport import MdseekProtocol, serve_stdio
from .worker import off_loop
from .workspace import Workspace

log = logging.getLogger("mdseek.lsp")

SEARCH = "mdseek/search"
STATUS = "mdseek/status"
REINDEX = "mdseek/reindex"


class MdseekServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("mdseek", __version__, protocol_cls=MdseekProtocol)
        self.ws = Workspace()
        self.tasks = Tasks()
        self.diagnostics = Diagnostics(self.ws, self.text_document_publish_diagnostics, self.tasks)
        self.indexing = Indexing(self, self.ws, self.tasks, on_indexed=self.diagnostics.refresh)
        self.init_options: Any = None
        self.started = time.monotonic()

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:
        """Serve on stdio with :mod:`.transport`'s read loop (resynchronises after
        a framing error, answers invalid params)."""
        serve_stdio(self, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)

    @property
    def shutdown_received(self) -> bool:
        return bool(getattr(self.protocol, "_shutdown", False))

    # -- settings -------------------------------------------------------------

    async def pull_configuration(self) -> Any:
        if not supports(self, "workspace", "configuration"):
            return None
        try:
            res = await self.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            )
        except Exception as exc:  # a client may refuse; settings then come from elsewhere
            log.info("workspace/configuration failed: %s", exc)
            return None
        return res[0] if res else None

    def apply_settings(self, *sources: Any) -> Settings:
        settings, problems = parse_settings(self.init_options, *sources)
        if problems:
            tell(self, settings_message(problems))
        return settings


def _custom(params: Any, cls: type) -> Any:
    try:
        return structure(params, cls)
    except InvalidParams as exc:
        raise JsonRpcInvalidParams(str(exc)) from exc


Handler = Callable[..., Any]
_HANDLERS: list[tuple[str, Any, Handler]] = []


def handler(method: str, options: Any = None) -> Callable[[Handler], Handler]:
    """Register the decorated function for ``method`` (with ``options``) on every
    server :func:`build_server` makes."""

    def register(fn: Handler) -> Handler:
        _HANDLERS.append((method, options, fn))
        return fn

    return register


def about_document(
    method: str, answer: Callable[..., Any], at_cursor: bool = False, options: Any = None
) -> None:
    """Register for ``method`` the handler that is ``answer(ws, uri)`` off the
    event loop (``at_cursor``: ``answer(ws, uri, position)``): a request that
    one function of the document answers whole (see the table below)."""

    async def respond(ls: MdseekServer, params: Any) -> Any:
        where = (params.position,) if at_cursor else ()
        return await off_loop(ls.ws, answer, ls.ws, params.text_document.uri, *where)

    respond.__name__ = respond.__qualname__ = f"answer_{method.replace('/', '_')}"
    handler(method, options)(respond)


def build_server() -> MdseekServer:
    ls = MdseekServer()
    for method, options, fn in _HANDLERS:
        ls.feature(method, options)(fn)
    return ls


# -- requests one function of the document answers ------------------------------------

about_document(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, navigation.outline)
about_document(types.TEXT_DOCUMENT_DEFINITION, navigation.definition_sync, at_cursor=True)
about_document(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT, highlight.highlights_sync, at_cursor=True)
about_document(types.TEXT_DOCUMENT_FOLDING_RANGE, folding.folding_for)
about_document(
    types.TEXT_DOCUMENT_CODE_LENS,
    lenses.heading_lenses,
    options=types.CodeLensOptions(resolve_provider=True),
)


# -- lifecycle ------------------------------------------------------------------


@handler(types.INITIALIZE)
def initialize(ls: MdseekServer, params: types.InitializeParams) -> None:
    ls.init_options = params.initialization_options
    rename.offer_file_operations(params.capabilities)
    ls.ws.pos = Positions(ls.workspace.position_encoding)
    folders = [uri_to_path(f.uri) for f in (params.workspace_folders or [])]
    if not folders and (params.root_uri or params.root_path):
        folders = [
            uri_to_path(params.root_uri) if params.root_uri else Path(params.root_path or "")
        ]
    ls.indexing.folders = [f for f in folders if f is not None]
    ls.indexing.fallback = not ls.indexing.folders  # opened files' folders become roots
    ls.ws.settings, _ = parse_settings(ls.init_options)
    ls.diagnostics.configure(params.capabilities)
    ls.diagnostics.request_refresh = lambda: ls.workspace_diagnostic_refresh_async(None)
    for f in ls.indexing.folders:  # state "starting" until initialized has the final settings
        ls.indexing.add_root(f, start=False)


@handler(types.INITIALIZED)
async def initialized(ls: MdseekServer, params: types.InitializedParams) -> None:
    ls.ws.settings = ls.apply_settings(await ls.pull_configuration())
    await ls.indexing.register_watchers()
    for r in ls.ws.roots:
        r.settings = ls.ws.settings
        ls.tasks.spawn(ls.indexing.start_root(r))
    ls.indexing.started = True


@handler(types.SHUTDOWN)
def shutdown(ls: MdseekServer, params: None) -> None:
    ls.indexing.close()


@handler(types.EXIT)
def exit_(ls: MdseekServer, params: None) -> None:
    _exit_now(ls, 0 if ls.shutdown_received else 1)


# -- documents ------------------------------------------------------------------


@handler(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MdseekServer, params: types.DidOpenTextDocumentParams) -> None:
    td = params.text_document
    path = uri_to_path(td.uri)
    if path is not None:
        ls.ws.docs.set_buffer(path, td.uri, td.version, td.text)
        ls.indexing.file_opened(path)
        ls.diagnostics.schedule(path, 0)


@handler(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: MdseekServer, params: types.DidChangeTextDocumentParams) -> None:
    td = params.text_document
    path = uri_to_path(td.uri)
    if path is not None:
        text = ls.workspace.get_text_document(td.uri).source
        ls.ws.docs.set_buffer(path, td.uri, td.version, text)


@handler(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MdseekServer, params: types.DidCloseTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    if path is not None:
        ls.diagnostics.forget(path)
        ls.ws.docs.close(path)


@handler(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
def did_save(ls: MdseekServer, params: types.DidSaveTextDocumentParams) -> None:
    path = uri_to_path(params.text_document.uri)
    if path is not None:
        ls.indexing.file_saved(path)
        ls.diagnostics.schedule(path)


@handler(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched(ls: MdseekServer, params: types.DidChangeWatchedFilesParams) -> None:
    for ch in params.changes:
        path = uri_to_path(ch.uri)
        if path is not None:
            ls.indexing.file_changed(path)


@handler(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def did_change_folders(
    ls: MdseekServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    def paths(folders: Sequence[types.WorkspaceFolder]) -> list[Path]:
        return [p for p in (uri_to_path(f.uri) for f in folders) if p is not None]

    ls.indexing.folders_changed(paths(params.event.added), paths(params.event.removed))


@handler(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(
    ls: MdseekServer, params: types.DidChangeConfigurationParams
) -> None:
    pulled = await ls.pull_configuration()
    new = ls.apply_settings(pulled if pulled is not None else params.settings)
    old = ls.ws.settings
    ls.ws.settings = new
    if new.engine_key() != old.engine_key():
        log.info("index settings changed: reopening the index")
        await ls.indexing.rebuild_roots()
    else:
        for r in ls.ws.roots:
            r.settings = new


# -- features -------------------------------------------------------------------


@handler(types.WORKSPACE_SYMBOL)
async def workspace_symbol(
    ls: MdseekServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation]:
    # "#name" alone: the tag's uses; "#runbook restart the db": a filtered search
    if params.query.startswith("#") and not search.filtered_words(params.query)[1].strip():
        return await off_loop(ls.ws, tags.workspace_symbols_sync, ls.ws, params.query)
    return await search.workspace_symbols(ls.ws, params.query)


@handler(types.TEXT_DOCUMENT_REFERENCES)
async def references(ls: MdseekServer, params: types.ReferenceParams) -> list[types.Location]:
    uri, pos = params.text_document.uri, params.position
    tagged = await off_loop(ls.ws, tags.references_sync, ls.ws, uri, pos)
    if tagged is not None:
        return tagged
    return await off_loop(
        ls.ws,
        navigation.references_sync,
        ls.ws,
        params.text_document.uri,
        params.position,
        params.context.include_declaration,
    )


@handler(
    types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["#", "(", "["])
)
async def completion(ls: MdseekServer, params: types.CompletionParams) -> types.CompletionList:
    uri, pos = params.text_document.uri, params.position
    items = await off_loop(ls.ws, navigation.anchor_completion_sync, ls.ws, uri, pos)
    if not items:
        tagged = await off_loop(ls.ws, tags.completion_sync, ls.ws, uri, pos)
        if tagged is not None:
            return types.CompletionList(is_incomplete=False, items=tagged)
    if not items:
        targets = await links.target_completion(ls.ws, uri, pos)
        if targets is not None:
            return targets
    return types.CompletionList(is_incomplete=False, items=items)


@handler(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: MdseekServer, params: types.HoverParams) -> types.Hover | None:
    return await navigation.hover(ls.ws, params.text_document.uri, params.position)


@handler(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(
        identifier="mdseek", inter_file_dependencies=True, workspace_diagnostics=True
    ),
)
async def document_diagnostic(ls: MdseekServer, params: types.DocumentDiagnosticParams) -> Any:
    return await ls.diagnostics.document_report(params.text_document.uri, params.previous_result_id)


@handler(types.WORKSPACE_DIAGNOSTIC)
async def workspace_diagnostic(ls: MdseekServer, params: types.WorkspaceDiagnosticParams) -> Any:
    previous = {p.uri: p.value for p in params.previous_result_ids or []}
    return await ls.diagnostics.workspace_report(previous)


@handler(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, links.KIND, toc.KIND, *extract.KINDS]
    ),
)
async def code_action(ls: MdseekServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Quick fixes (broken anchors, missing notes, near-duplicates), links by meaning, the
    table of contents, extract a section and inline a note."""
    uri, only, diags = params.text_document.uri, params.context.only, params.context.diagnostics
    fixes: list[types.CodeAction] = []
    if _wanted(types.CodeActionKind.QuickFix, only):
        fixes = await off_loop(ls.ws, quick_fixes.anchor_fixes, ls.ws, uri, diags)
        fixes += await off_loop(ls.ws, near_dups.fixes, ls.ws, uri, diags)
        fixes += await off_loop(ls.ws, link_defs.definition_fixes, ls.ws, uri, params.range)
        if supports_create(ls):
            fixes += await off_loop(ls.ws, quick_fixes.create_file_fixes, ls.ws, uri, diags)
    wanted = _wanted(toc.KIND, only)
    contents = await off_loop(ls.ws, toc.code_actions_for, ls.ws, uri) if wanted else []
    moved = await extract.code_actions(ls.ws, params, ls.client_capabilities)
    return fixes + await links.code_actions(ls.ws, params) + contents + moved


# -- structure: folding, document links, selection ranges ----------------------------


@handler(types.TEXT_DOCUMENT_DOCUMENT_LINK)
async def document_link(
    ls: MdseekServer, params: types.DocumentLinkParams
) -> list[types.DocumentLink]:
    tips = supports(ls, "text_document", "document_link", "tooltip_support")
    return await off_loop(
        ls.ws, document_links.document_links_sync, ls.ws, params.text_document.uri, tips
    )


@handler(types.TEXT_DOCUMENT_SELECTION_RANGE)
async def selection_range(
    ls: MdseekServer, params: types.SelectionRangeParams
) -> list[types.SelectionRange]:
    uri, positions = params.text_document.uri, params.positions
    return await off_loop(ls.ws, selection.selection_for, ls.ws, uri, positions)


@handler(types.CODE_LENS_RESOLVE)
async def code_lens_resolve(ls: MdseekServer, params: types.CodeLens) -> types.CodeLens:
    return await off_loop(ls.ws, lenses.resolve_lens, ls.ws, params)


@handler(types.TEXT_DOCUMENT_PREPARE_RENAME)
async def prepare_rename(ls: MdseekServer, params: types.PrepareRenameParams) -> Any:
    return await rename.prepare(ls.ws, params)


@handler(types.TEXT_DOCUMENT_RENAME)
async def rename_(ls: MdseekServer, params: types.RenameParams) -> Any:
    return await rename.rename(ls.ws, params, ls.client_capabilities)


@handler(types.WORKSPACE_WILL_RENAME_FILES, rename.FILE_OPERATIONS)
async def will_rename_files(ls: MdseekServer, params: types.RenameFilesParams) -> Any:
    return await rename.will_rename(ls.ws, params, ls.client_capabilities)


@handler(types.WORKSPACE_DID_RENAME_FILES, rename.FILE_OPERATIONS)
def did_rename_files(ls: MdseekServer, params: types.RenameFilesParams) -> None:
    for f in params.files:
        for p in (uri_to_path(f.old_uri), uri_to_path(f.new_uri)):
            if p is not None:
                ls.indexing.file_changed(p)


# -- custom requests ----------------------------------------------------------------


@handler(SEARCH)
async def mdseek_search(ls: MdseekServer, params: Any) -> dict:
    return await search.search_request(ls.ws, _custom(params, SearchParams))


@handler(STATUS)
async def mdseek_status(ls: MdseekServer, params: Any) -> dict:
    return await search.status(ls.ws)


@handler(REINDEX)
async def mdseek_reindex(ls: MdseekServer, params: Any) -> dict:
    await ls.indexing.reconcile_all()
    st = await search.status(ls.ws)
    return {"files": st["files"], "chunks": st["chunks"]}


def _wanted(kind: str, only: Sequence[str] | None) -> bool:
    """Whether a code action of ``kind`` answers a request limited to ``only``."""
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def supports_create(ls: MdseekServer) -> bool:
    """The client applies ``documentChanges`` with file creation."""
    edit = getattr(getattr(ls.client_capabilities, "workspace", None), "workspace_edit", None)
    ops = getattr(edit, "resource_operations", None) or []
    return bool(getattr(edit, "document_changes", False)) and (
        types.ResourceOperationKind.Create in ops
    )


def _quiet_pygls() -> None:
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(
            level=logging.WARNING, format="mdseek: %(levelname)s: %(message)s", stream=sys.stderr
        )
    if not log.isEnabledFor(logging.DEBUG):
        # pygls logs every message it sends at INFO; keep stderr readable.
        for name in ("pygls", "pygls.protocol", "pygls.server", "pygls.feature_manager"):
            logging.getLogger(name).setLevel(logging.WARNING)


def _exit_now(ls: MdseekServer, code: int) -> None:
    """End the process now, whatever it is doing: engines stop between batches,
    and work in flight cannot corrupt the index (every write is one SQLite
    transaction; the rest is redone on the next start). At most one line on stderr."""
    interrupted = ls.indexing.close()
    if interrupted:
        log.warning(
            "exiting while indexing %s; the rest is indexed on the next start",
            ", ".join(interrupted),
        )
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def run() -> int:
    """Serve LSP over stdin/stdout until the client says exit (or goes away)."""
    _quiet_pygls()
    ls = build_server()
    try:
        ls.start_io()
    finally:  # stdin closed (the client went away) or the loop stopped
        _exit_now(ls, 0 if ls.shutdown_received else 1)
    return 0
