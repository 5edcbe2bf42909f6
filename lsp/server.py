"""The mdseek language server (pygls 2, stdio).

Each handler turns protocol types into a call on the engine (or on the pure
link functions) and the answer back into protocol types; conversions live in
:mod:`mdseek.lsp.convert`, shapes in :mod:`mdseek.lsp.features`, settings in
:mod:`mdseek.lsp.config`, one workspace folder's engine and threads in
:mod:`mdseek.lsp.roots`, buffers in :mod:`mdseek.lsp.documents`.

Nothing here blocks the event loop: engine work runs in each root's worker
threads, link resolution and parsing of other files in ``asyncio.to_thread``.
Logging goes to stderr (stdout is the protocol).

Custom requests (the VS Code client depends on these shapes):
  mdseek/search  {query, limit?, explain?} -> {mode, note?, results: [{uri, path,
                 heading, breadcrumb, range, start_line, end_line, score, snippet,
                 lexical_rank, dense_rank, explain?}]}  (explain: the score parts)
  mdseek/status  {} -> {state, files, chunks, coverage, model, pending_embeds,
                 message?, embedded_total, updates_pending, updates_done,
                 cancelled, roots}
  mdseek/reindex {} -> {files, chunks}
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from mdseek import __version__
from mdseek.index.engine import SearchResponse, SearchResult
from mdseek.index.links import (
    MARKDOWN_SUFFIXES,
    Link,
    Target,
    anchor_context,
    anchor_link,
    find_heading,
    find_links,
    link_at,
    resolve,
)
from mdseek.index.parse import Heading, ParsedDocument

from . import features as F
from .config import SECTION, Settings, parse_settings, settings_message
from .convert import Positions, path_to_uri, start_range, uri_to_path
from .documents import Documents
from .roots import Cancelled, CancelToken, Root

log = logging.getLogger("mdseek.lsp")

SEARCH = "mdseek/search"
STATUS = "mdseek/status"
REINDEX = "mdseek/reindex"
WATCH_ID = "mdseek-watch-markdown"
MAX_LIMIT = 200


def _param(params: Any, key: str, default: Any = None) -> Any:
    if params is None:
        return default
    if isinstance(params, dict):
        return params.get(key, default)
    return getattr(params, key, default)


class MdseekServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("mdseek", __version__)
        self.roots: list[Root] = []
        self.docs = Documents()
        self.pos = Positions()
        self.init_options: Any = None
        self.settings = Settings()
        self.cancelled = 0  # requests dropped because the client cancelled them
        self._folders: list[Path] = []
        self._progress_n = 0
        self._reconcile_lock: asyncio.Lock | None = None
        self._tasks: set[asyncio.Task] = set()
        self._diag_timers: dict[Path, asyncio.TimerHandle] = {}
        self.started = time.monotonic()

    # -- helpers ------------------------------------------------------------

    def spawn(self, coro) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(self._log_task_error)
        return task

    @staticmethod
    def _log_task_error(task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    def tell(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        """One message the user sees (window/showMessage) and that is logged."""
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def root_for(self, path: Path) -> Root | None:
        best = None
        for r in self.roots:
            if r.contains(path) and (best is None or len(str(r.path)) > len(str(best.path))):
                best = r
        return best

    @property
    def root_paths(self) -> list[Path]:
        return [r.path for r in self.roots]

    def doc_for_uri(self, uri: str) -> tuple[Path, ParsedDocument] | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        root = self.root_for(path)
        rel = root.rel(path) if root else path.name
        doc = self.docs.parsed(path, rel, self.root_paths)
        return (path, doc) if doc is not None else None

    def uri_for(self, path: Path) -> str:
        return self.docs.uri_of(path) or path_to_uri(path)

    def client_supports(self, *attrs: str) -> bool:
        obj: Any = self.client_capabilities
        for a in attrs:
            obj = getattr(obj, a, None)
            if obj is None:
                return False
        return bool(obj)

    # -- settings -------------------------------------------------------------

    async def pull_configuration(self) -> Any:
        if not self.client_supports("workspace", "configuration"):
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
            self.tell(settings_message(problems))
        return settings

    # -- roots ----------------------------------------------------------------

    def add_root(self, folder: Path, start: bool = True) -> Root | None:
        folder = folder.resolve()
        if not folder.is_dir() or any(r.path == folder for r in self.roots):
            return None
        root = Root(folder, self.settings, max(1, len(self._folders)), asyncio.get_event_loop())
        root.on_updated = self._root_updated
        self.roots.append(root)
        if start:
            self.spawn(self._start_root(root))
        return root

    async def _start_root(self, root: Root) -> None:
        note = await root.open()
        if note:
            self.tell(note)
        if root.engine is not None:
            await self.reconcile(root)
            if root.state == "lexical-only":
                self.tell(
                    f"mdseek: semantic search is unavailable ({root.message}); keyword search only",
                )

    def remove_root(self, folder: Path) -> None:
        folder = folder.resolve()
        for r in [r for r in self.roots if r.path == folder]:
            self.roots.remove(r)
            r.close()

    async def rebuild_roots(self) -> None:
        old = self.roots
        self.roots = []
        for r in old:
            r.close()
        for f in self._folders:
            self.add_root(f)

    async def reconcile(self, root: Root) -> None:
        if self._reconcile_lock is None:
            self._reconcile_lock = asyncio.Lock()
        async with self._reconcile_lock:  # one at a time: one model load, fair on small machines
            if root.closed:
                return
            progress, finish = await self.progress(f"mdseek: indexing {root.name}")
            rep = None
            try:
                rep = await root.reconcile(progress)
            finally:
                if rep is not None:
                    finish(
                        f"{rep.files} files, {rep.chunks} chunks ({rep.indexed} indexed, "
                        f"{rep.removed} removed, {rep.embedded} embedded)"
                    )
                else:
                    finish(root.message or "stopped")
            self.refresh_diagnostics(root)

    async def progress(self, title: str) -> tuple[Callable[[str, int, int], None] | None, Callable[[str], None]]:
        """Work-done progress (when the client supports it): a thread-safe report
        callback for the engine and a function that ends it."""
        if not self.client_supports("window", "work_done_progress"):
            return None, lambda msg: None
        self._progress_n += 1
        token = f"mdseek-index-{os.getpid()}-{self._progress_n}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception as exc:
            log.info("window/workDoneProgress/create failed: %s", exc)
            return None, lambda msg: None
        wdp = self.work_done_progress
        wdp.begin(token, types.WorkDoneProgressBegin(title=title, message="scanning files", percentage=0))
        loop = asyncio.get_running_loop()
        last = [0.0]
        labels = {"parse": "files parsed", "embed": "chunks embedded"}

        def report(stage: str, done: int, total: int) -> None:  # called in the writer thread
            now = time.monotonic()
            if stage != "model" and done < total and now - last[0] < 0.1:
                return
            last[0] = now
            if stage == "model":
                msg, pct = "loading the embedding model", 30
            else:
                msg = f"{done}/{total} {labels.get(stage, stage)}"
                frac = done / total if total else 1.0
                pct = int(frac * 30) if stage == "parse" else 30 + int(frac * 70)
            value = types.WorkDoneProgressReport(message=msg, percentage=pct)
            loop.call_soon_threadsafe(wdp.report, token, value)

        def finish(message: str) -> None:
            wdp.end(token, types.WorkDoneProgressEnd(message=message))

        return report, finish

    def _root_updated(self, root: Root, keys: list[str]) -> None:
        self.refresh_diagnostics(root)

    # -- file watching ----------------------------------------------------------

    async def register_watchers(self) -> None:
        if not self.client_supports("workspace", "did_change_watched_files", "dynamic_registration"):
            return
        try:
            opts = types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern=f"**/*{s}") for s in MARKDOWN_SUFFIXES]
            )
            await self.client_register_capability_async(
                types.RegistrationParams(
                    registrations=[
                        types.Registration(
                            id=WATCH_ID,
                            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                            register_options=opts,
                        )
                    ]
                )
            )
        except Exception as exc:  # the client may not answer or refuse: saves still work
            log.info("could not register file watchers: %s", exc)

    def file_changed(self, path: Path, deleted: bool = False) -> None:
        root = self.root_for(path)
        if root is None:
            return
        if path.suffix.lower() in MARKDOWN_SUFFIXES:
            root.schedule_file(path)
        else:  # a folder (git checkout, rm -r) or something else: reconcile it all
            root.schedule_reconcile()

    # -- diagnostics --------------------------------------------------------------

    def refresh_diagnostics(self, root: Root | None = None) -> None:
        for path in self.docs.open_paths():
            if root is None or root.contains(path):
                self.schedule_diagnostics(path)

    def schedule_diagnostics(self, path: Path, delay: float = 0.05) -> None:
        old = self._diag_timers.pop(path, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._diag_timers[path] = loop.call_later(
            delay, lambda: self.spawn(self.publish_diagnostics(path))
        )

    async def publish_diagnostics(self, path: Path) -> None:
        self._diag_timers.pop(path, None)
        uri = self.docs.uri_of(path)
        if uri is None:
            return
        diags = await asyncio.to_thread(self.link_diagnostics, path)
        if diags is None or self.docs.uri_of(path) is None:
            return
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diags))

    def link_diagnostics(self, path: Path) -> list[types.Diagnostic] | None:
        root = self.root_for(path)
        if root is None:
            return None
        doc = self.docs.parsed(path, root.rel(path), self.root_paths)
        if doc is None:
            return None
        lines = doc.lines()
        out = []
        for link in find_links(doc):
            target = self.resolve_link(root, path, link)
            if target.external or target.outside or target.path is None:
                continue
            if not target.exists:
                what = "note" if link.kind == "wiki" else "file"
                out.append(F.link_diagnostic(self.pos, lines, link, f"No such {what}: {target.path}"))
                continue
            if target.anchor:
                tdoc = self.docs.parsed(root.path / target.path, target.path, self.root_paths)
                if tdoc is not None and find_heading(tdoc, target.anchor, target.by_text) is None:
                    shown = target.anchor if target.by_text else "#" + target.anchor
                    out.append(
                        F.link_diagnostic(self.pos, lines, link, f"No heading {shown!r} in {target.path}")
                    )
        return out

    # -- links ------------------------------------------------------------------

    def resolve_link(self, root: Root | None, path: Path, link: Link) -> Target:
        if root is None:  # a loose file: only links inside itself
            if link.kind == "markdown" and link.external:
                return Target(None, None, False, False, external=True)
            if link.path:
                return Target(None, link.anchor, link.kind == "wiki", False, outside=True)
            return Target(path.name, link.anchor, link.kind == "wiki", True)
        files = root.markdown_files() if link.kind == "wiki" and link.path else ()
        return resolve(link, root.rel(path), root.exists, files)

    def target_doc(self, root: Root | None, path: Path, target: Target) -> tuple[Path, ParsedDocument] | None:
        if target.path is None or not target.exists:
            return None
        if root is None:
            doc = self.docs.parsed(path, path.name, [])
            return (path, doc) if doc else None
        tpath = (root.path / target.path).resolve()
        doc = self.docs.parsed(tpath, target.path, self.root_paths)  # never outside the roots
        return (tpath, doc) if doc else None

    def cursor(self, uri: str, position: types.Position) -> tuple[Path, ParsedDocument, int, int] | None:
        found = self.doc_for_uri(uri)
        if found is None:
            return None
        path, doc = found
        line, col = self.pos.from_client(doc.lines(), position)
        return path, doc, line, col

    @staticmethod
    def heading_at(doc: ParsedDocument, line: int) -> Heading | None:
        for h in doc.headings:
            if h.line <= line < h.end_line:
                return h
        return None

    # -- feature cores (run in a thread) ------------------------------------------

    def definition_sync(self, uri: str, position: types.Position) -> types.Location | None:
        cur = self.cursor(uri, position)
        if cur is None:
            return None
        path, doc, line, col = cur
        link = link_at(find_links(doc), line, col)
        if link is None:
            return None
        found = self.link_target(self.root_for(path), path, link)
        if found is None:
            return None
        tpath, tdoc, h = found
        rng = F.heading_range(self.pos, tdoc.lines(), h) if h else start_range()
        return types.Location(uri=self.uri_for(tpath), range=rng)

    def link_target(self, root: Root | None, path: Path, link: Link) -> tuple[Path, ParsedDocument, Heading | None] | None:
        """The file, parsed document and heading (if the link names one) a link points to."""
        target = self.resolve_link(root, path, link)
        found = self.target_doc(root, path, target)
        if found is None:
            return None
        tpath, tdoc = found
        h = find_heading(tdoc, target.anchor, target.by_text) if target.anchor else None
        return tpath, tdoc, h

    def hover_sync(self, uri: str, position: types.Position) -> types.Hover | tuple | None:
        """A finished Hover for links; for a heading, what to ask the engine."""
        cur = self.cursor(uri, position)
        if cur is None:
            return None
        path, doc, line, col = cur
        root = self.root_for(path)
        link = link_at(find_links(doc), line, col)
        if link is not None:
            found = self.link_target(root, path, link)
            if found is None:
                return None
            tpath, tdoc, h = found
            rel = root.rel(tpath) if root else tpath.name
            hov = F.hover_section(tdoc, h, rel, self.uri_for(tpath))
            hov.range = F.link_range(self.pos, doc.lines(), link)
            return hov
        h = self.heading_at(doc, line)
        if h is None:
            return None
        sec = next((s for s in doc.sections if s.heading == h), None)
        crumb = sec.breadcrumb if sec else h.text
        rng = F.heading_range(self.pos, doc.lines(), h)
        return ("heading", root, path, h, crumb, rng)

    def references_sync(self, uri: str, position: types.Position, include_decl: bool) -> list[types.Location]:
        cur = self.cursor(uri, position)
        if cur is None:
            return []
        path, doc, line, col = cur
        root = self.root_for(path)
        if root is None:
            return []
        heading = self.heading_at(doc, line)
        target_path, target_doc = path, doc
        link = link_at(find_links(doc), line, col) if heading is None else None
        if link is not None:  # references of what the link points to
            t = self.resolve_link(root, path, link)
            found = self.target_doc(root, path, t)
            if found is None:
                return []
            target_path, target_doc = found
            heading = find_heading(target_doc, t.anchor, t.by_text) if t.anchor else None
        elif heading is None:
            return []
        is_title = heading is None or (
            target_doc.headings and heading == target_doc.headings[0] and heading.level == 1
        )
        want_rel = root.rel(target_path)
        out: list[types.Location] = []
        if include_decl and heading is not None:
            out.append(types.Location(uri=self.uri_for(target_path), range=F.heading_range(self.pos, target_doc.lines(), heading)))
        for rel in root.markdown_files():
            p = root.path / rel
            d = self.docs.parsed(p, rel, self.root_paths)
            if d is None:
                continue
            lines = None
            for lk in find_links(d):
                t = resolve(lk, rel, root.exists, root.markdown_files() if lk.kind == "wiki" else ())
                if t.path != want_rel or not t.exists:
                    continue
                if t.anchor:
                    if heading is None or find_heading(target_doc, t.anchor, t.by_text) != heading:
                        continue
                elif not is_title:
                    continue
                lines = lines or d.lines()
                out.append(types.Location(uri=self.uri_for(p), range=F.link_range(self.pos, lines, lk)))
        return out

    def completion_sync(self, uri: str, position: types.Position) -> list[types.CompletionItem]:
        cur = self.cursor(uri, position)
        if cur is None:
            return []
        path, doc, line, col = cur
        if any(b.kind in ("fence", "code_block") and b.start_line <= line < b.end_line for b in doc.blocks):
            return []
        lines = doc.lines()
        ctx = anchor_context(lines[line] if line < len(lines) else "", col)
        if ctx is None:
            return []
        root = self.root_for(path)
        target = self.resolve_link(root, path, anchor_link(ctx.kind, ctx.path))
        found = self.target_doc(root, path, target) if ctx.path else (path, doc)
        if found is None:
            return []
        rng = self.pos.range(lines, line, ctx.start, line, col)
        return F.anchor_items(found[1], ctx.kind, rng, ctx.prefix)

    # -- search -------------------------------------------------------------------

    def _search_root(
        self, root: Root, query: str, limit: int, prefix_last: bool, token: CancelToken,
        explain: bool = False,
    ) -> tuple[SearchResponse, list[tuple[SearchResult, str, types.Range]]]:
        resp = root.search_sync(query, limit, prefix_last, token, explain=explain)
        rows = []
        for r in resp.results:
            p = root.path / r.path
            d = self.docs.parsed(p, r.path, self.root_paths)
            rows.append((r, self.uri_for(p), F.result_range(self.pos, d.lines() if d else None, r)))
        return resp, rows

    async def search(
        self, query: str, limit: int, prefix_last: bool, explain: bool = False
    ) -> tuple[str, str | None, list[tuple[SearchResult, str, types.Range]]]:
        roots = [r for r in self.roots if r.engine is not None]
        if not roots:
            note = "no workspace folder is open" if not self.roots else "the index is still opening"
            return "lexical", note, []
        token = CancelToken()
        try:
            answers = await asyncio.gather(
                *(r.read(self._search_root, r, query, limit, prefix_last, token, explain) for r in roots)
            )
        except (asyncio.CancelledError, Cancelled):
            token.cancelled = True
            self.cancelled += 1
            raise asyncio.CancelledError() from None
        rows = [row for _, rs in answers for row in rs]
        rows.sort(key=lambda t: -t[0].score)
        modes = {resp.mode for resp, _ in answers}
        mode = "hybrid" if modes == {"hybrid"} else "lexical"
        note = next((resp.note for resp, _ in answers if resp.note), None)
        return mode, note, rows[:limit]

    async def status(self) -> dict:
        roots = [r for r in self.roots]
        per = await asyncio.gather(*(r.read(r.status_sync) for r in roots)) if roots else []
        states = {r.state for r in roots}
        if states & {"starting", "indexing"}:
            state = "indexing"
        elif states & {"lexical-only", "error"}:
            state = "lexical-only"
        else:
            state = "ready"
        chunks = sum(s.get("chunks", 0) for s in per)
        cov = sum(s.get("coverage", 1.0) * s.get("chunks", 0) for s in per) / chunks if chunks else 1.0
        messages = [m for m in (r.message for r in roots) if m]
        if not roots:
            messages.append("no workspace folder is open")
        out: dict[str, Any] = {
            "state": state,
            "files": sum(s.get("files", 0) for s in per),
            "chunks": chunks,
            "coverage": round(cov, 6),
            "model": ", ".join(dict.fromkeys(str(s.get("model", "")) for s in per)) or (self.settings.model or ""),
            "pending_embeds": sum(s.get("pending_embeds", 0) for s in per),
            "embedded_total": sum(s.get("embedded_total", 0) for s in per),
            "updates_pending": sum(r.updates_pending for r in roots),
            "updates_done": sum(r.updates_done for r in roots),
            "cancelled": self.cancelled,
            "roots": [
                {"path": str(r.path), "uri": path_to_uri(r.path), "state": r.state, **{k: s.get(k) for k in ("files", "chunks", "model", "pending_embeds", "index_path")}}
                for r, s in zip(roots, per, strict=True)
            ],
        }
        if messages:
            out["message"] = "; ".join(messages)
        return out


def build_server() -> MdseekServer:
    ls = MdseekServer()

    # -- lifecycle ------------------------------------------------------------------

    @ls.feature(types.INITIALIZE)
    def initialize(ls: MdseekServer, params: types.InitializeParams) -> None:
        ls.init_options = params.initialization_options
        ls.pos = Positions(ls.workspace.position_encoding)
        folders = [uri_to_path(f.uri) for f in (params.workspace_folders or [])]
        if not folders and (params.root_uri or params.root_path):
            folders = [uri_to_path(params.root_uri) if params.root_uri else Path(params.root_path or "")]
        ls._folders = [f for f in folders if f is not None]
        ls.settings, _ = parse_settings(ls.init_options)
        for f in ls._folders:  # state "starting" until initialized has the final settings
            ls.add_root(f, start=False)

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: MdseekServer, params: types.InitializedParams) -> None:
        ls.settings = ls.apply_settings(await ls.pull_configuration())
        await ls.register_watchers()
        for r in ls.roots:
            r.settings = ls.settings
            ls.spawn(ls._start_root(r))

    @ls.feature(types.SHUTDOWN)
    def shutdown(ls: MdseekServer, params: None) -> None:
        for r in ls.roots:
            r.close()

    # -- documents ------------------------------------------------------------------

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MdseekServer, params: types.DidOpenTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is None:
            return
        td = params.text_document
        ls.docs.set_buffer(path, td.uri, td.version, td.text)
        ls.schedule_diagnostics(path, 0)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MdseekServer, params: types.DidChangeTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is None:
            return
        doc = ls.workspace.get_text_document(params.text_document.uri)
        ls.docs.set_buffer(path, params.text_document.uri, params.text_document.version, doc.source)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MdseekServer, params: types.DidCloseTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is not None:
            ls.docs.close(path)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(ls: MdseekServer, params: types.DidSaveTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is None:
            return
        root = ls.root_for(path)
        if root is not None:
            root.schedule_file(path)
        ls.schedule_diagnostics(path)

    @ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: MdseekServer, params: types.DidChangeWatchedFilesParams) -> None:
        for ch in params.changes:
            path = uri_to_path(ch.uri)
            if path is not None:
                ls.file_changed(path, deleted=ch.type == types.FileChangeType.Deleted)

    @ls.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(ls: MdseekServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        for f in params.event.removed:
            p = uri_to_path(f.uri)
            if p is not None:
                ls._folders = [x for x in ls._folders if x != p]
                ls.remove_root(p)
        for f in params.event.added:
            p = uri_to_path(f.uri)
            if p is not None and p not in ls._folders:
                ls._folders.append(p)
                ls.add_root(p)

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: MdseekServer, params: types.DidChangeConfigurationParams) -> None:
        pulled = await ls.pull_configuration()
        new = ls.apply_settings(pulled if pulled is not None else params.settings)
        old = ls.settings
        ls.settings = new
        if new.engine_key() != old.engine_key():
            log.info("index settings changed: reopening the index")
            await ls.rebuild_roots()
        else:
            for r in ls.roots:
                r.settings = new

    # -- features -------------------------------------------------------------------

    @ls.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: MdseekServer, params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
        query = params.query.strip()
        if not query:
            return []  # fast: clients ask with "" when the picker opens
        _, _, rows = await ls.search(params.query, ls.settings.search_limit, prefix_last=True)
        return [F.symbol_information(r, uri, rng) for r, uri, rng in rows]

    @ls.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: MdseekServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        found = ls.doc_for_uri(params.text_document.uri)
        return F.document_symbols(found[1], ls.pos) if found else []

    @ls.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: MdseekServer, params: types.DefinitionParams) -> types.Location | None:
        return await asyncio.to_thread(ls.definition_sync, params.text_document.uri, params.position)

    @ls.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: MdseekServer, params: types.ReferenceParams) -> list[types.Location]:
        return await asyncio.to_thread(
            ls.references_sync, params.text_document.uri, params.position, params.context.include_declaration
        )

    @ls.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["#"]))
    async def completion(ls: MdseekServer, params: types.CompletionParams) -> types.CompletionList:
        items = await asyncio.to_thread(ls.completion_sync, params.text_document.uri, params.position)
        return types.CompletionList(is_incomplete=False, items=items)

    @ls.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: MdseekServer, params: types.HoverParams) -> types.Hover | None:
        res = await asyncio.to_thread(ls.hover_sync, params.text_document.uri, params.position)
        if not isinstance(res, tuple):
            return res
        _, root, path, h, crumb, rng = res
        related: list[tuple[SearchResult, str]] = []
        note = None
        limit = ls.settings.hover_related
        if root is not None and root.engine is not None and limit > 0:
            resp = await root.read(root.related_sync, root.rel(path), h.slug, h.line, limit)
            related = [(r, ls.uri_for(root.path / r.path)) for r in resp.results]
            note = resp.note
        return F.hover_heading(crumb, related, note, rng)

    # -- custom requests ----------------------------------------------------------------

    @ls.feature(SEARCH)
    async def mdseek_search(ls: MdseekServer, params: Any) -> dict:
        query = str(_param(params, "query", "") or "")
        limit = _param(params, "limit", None)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            limit = ls.settings.search_limit
        limit = min(limit, MAX_LIMIT)
        if not query.strip():
            return {"mode": "lexical", "note": "empty query", "results": []}
        explain = _param(params, "explain", False) is True  # per result: the score parts
        mode, note, rows = await ls.search(query, limit, prefix_last=False, explain=explain)
        out: dict[str, Any] = {
            "mode": mode,
            "results": [F.search_result_json(r, uri, rng) for r, uri, rng in rows],
        }
        if note:
            out["note"] = note
        return out

    @ls.feature(STATUS)
    async def mdseek_status(ls: MdseekServer, params: Any) -> dict:
        return await ls.status()

    @ls.feature(REINDEX)
    async def mdseek_reindex(ls: MdseekServer, params: Any) -> dict:
        for r in list(ls.roots):
            if r.engine is not None:
                await ls.reconcile(r)
        st = await ls.status()
        return {"files": st["files"], "chunks": st["chunks"]}

    return ls


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


def run() -> int:
    """Serve LSP over stdin/stdout until the client says exit (or goes away)."""
    _quiet_pygls()
    ls = build_server()
    code = 0
    try:
        ls.start_io()
    finally:
        for r in ls.roots:
            r.close()
        logging.shutdown()
        sys.stderr.flush()
        # Engine work in flight cannot corrupt the index (every write is one SQLite
        # transaction), so do not wait for a long embedding run to finish.
        os._exit(code)
    return code
