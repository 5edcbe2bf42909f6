"""Broken-link diagnostics for every indexed file, not only the open ones (a
link to a file that does not exist, or to a heading the target does not have),
duplicate headings, near-duplicate sections of open documents (hints, from
:mod:`.near_dups`), and the quick fixes: a broken anchor pointed at the nearest
existing heading, a missing note created (those in :mod:`.quick_fixes`).
What counts as a problem is decided in :mod:`mdseek.index.links.check` (as
data); here its problems become ``Diagnostic`` objects and are delivered.

Pulled where the client pulls, pushed elsewhere, never both for one file:

* open documents: a client that declares ``textDocument.diagnostic`` pulls
  them (``textDocument/diagnostic``); others get them pushed on open and save.
* every other indexed file: once the client has sent a ``workspace/diagnostic``
  request (VS Code does at start) it pulls them; each report carries a result id
  (a hash of its items) so unchanged files are answered "unchanged", and a pull
  that would change nothing waits (long poll, up to :data:`LONG_POLL` s) for an
  index update or an edit. Until then (Neovim, eglot, Helix never pull the
  workspace) they are pushed: after a folder's reconcile or file update every
  indexed file of it is checked and what changed is published, at most once
  every :data:`PUSH_INTERVAL` s per folder. Diagnostics pushed for a file are
  cleared when a document-pulling client opens it.

After an index update the server asks a client that supports it to re-pull
(``workspace/diagnostic/refresh``).

Checking runs off the event loop (``asyncio.to_thread``; a request's in
:func:`.worker.off_loop`, cancellable).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from lsprotocol import types

from mdseek.index.links.check import (
    FolderView,
    Problem,
    Span,
    TargetFacts,
    alias_problems,
    duplicate_problems,
    link_problems,
)
from mdseek.index.links.links import Link, Target
from mdseek.index.links.obsidian import block_ids, find_attachment
from mdseek.index.text.aliases import alias_sites
from mdseek.index.text.files import ignored_why

from . import near_dups
from .client import Tasks
from .convert import uri_to_path
from .roots import Root
from .worker import off_loop
from .workspace import Workspace

Publish = Callable[[types.PublishDiagnosticsParams], None]

PUSH_INTERVAL = 2.0  # seconds between two workspace-wide pushes for one folder
LONG_POLL = 30.0  # seconds a workspace pull with nothing new waits for a change


class _Folder(FolderView):
    """The folder as :func:`.check.link_problems` asks about it, for the file ``path``."""

    def __init__(self, ws: Workspace, root: Root, path: Path):
        self.ws, self.root, self.path = ws, root, path
        self.rel = root.rel(path)

    def resolve(self, link: Link) -> Target:
        return self.ws.resolve_link(self.root, self.path, link)

    def attachment(self, name: str) -> str | None:
        root = self.root
        return find_attachment(name, self.rel, root.exists, root.files_named)

    def facts(self, rel: str) -> TargetFacts | None:
        return self.ws.docs.link_facts(self.root.path / rel, rel, self.ws.root_paths)

    def block_ids(self, rel: str) -> Iterable[str] | None:
        doc = self.ws.docs.parsed(self.root.path / rel, rel, self.ws.root_paths)
        return block_ids(doc) if doc is not None else None

    def is_folder(self, rel: str) -> bool:
        return self.root.is_folder(rel)

    def ignored(self, rel: str) -> str | None:
        return ignored_why(self.root.path, rel, self.root.settings.file_filter())


def link_diagnostics(ws: Workspace, path: Path) -> list[types.Diagnostic] | None:
    """The problems of one document (None: not in a workspace folder or
    unreadable): what :mod:`mdseek.index.links.check` finds, as diagnostics."""
    root = ws.root_for(path)
    if root is None:
        return None
    rel = root.rel(path)
    facts = ws.docs.link_facts(path, rel, ws.root_paths)
    if facts is None:
        return None
    lines: list[str] = []

    def line_text(n: int) -> str:
        if not lines:  # read only for a file with a problem that needs it
            lines.extend(ws.docs.lines(path, ws.root_paths) or [])
        return lines[n] if n < len(lines) else ""

    problems = link_problems(facts.links, _Folder(ws, root, path))
    if warn_duplicates(ws, root):
        problems += duplicate_problems(rel, facts.headings, line_text)
    if ws.aliases(root).of(rel):
        doc = ws.docs.parsed(path, rel, ws.root_paths)
        if doc is not None:
            problems += alias_problems(rel, alias_sites(doc), ws.aliases(root))
    near = ws.docs.uri_of(path) is not None  # open documents only: on open and save
    if problems or near:
        line_text(0)
    out = [diagnostic(ws, root, lines, p) for p in problems]
    return out + near_dups.hints(ws, root, path, lines) if near else out


def diagnostic(ws: Workspace, root: Root, lines: list[str], p: Problem) -> types.Diagnostic:
    """A problem as the protocol shows it (every one a warning, from mdseek)."""
    return types.Diagnostic(
        range=_range(ws, lines, p.span),
        message=p.message,
        severity=types.DiagnosticSeverity.Warning,
        source="mdseek",
        code=p.kind,
        data=p.fix,
        related_information=[
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=ws.uri_for(root.path / r.path), range=_range(ws, lines, r.span)
                ),
                message=r.message,
            )
            for r in p.related
        ]
        or None,
    )


def _range(ws: Workspace, lines: list[str], span: Span) -> types.Range:
    return ws.pos.range(lines, span.line, span.start, span.end_line, span.end)


def warn_duplicates(ws: Workspace, root: Root) -> bool:
    """Duplicate-heading warnings are GitHub-anchor advice: off where links are
    wiki links (``duplicateHeadings`` "auto" in an Obsidian vault) or when set off."""
    choice = ws.settings.duplicate_headings
    return choice == "on" or (choice == "auto" and not root.links_by_wiki())


def result_id(diags: list[types.Diagnostic]) -> str:
    key = json.dumps(
        [
            (
                d.range.start.line,
                d.range.start.character,
                d.range.end.line,
                d.range.end.character,
                d.message,
            )
            for d in diags
        ]
    )
    return hashlib.sha1(key.encode()).hexdigest()[:16]


# -- delivery ------------------------------------------------------------------------


class Diagnostics:
    def __init__(self, ws: Workspace, publish: Publish, tasks: Tasks) -> None:
        self.ws = ws
        self._publish = publish
        self._tasks = tasks
        self.doc_pull = False  # the client pulls open documents (from its capabilities)
        self.ws_pull = False  # the client has pulled the workspace (it asked once)
        self.refresh_support = False  # the client accepts workspace/diagnostic/refresh
        self._answered = -1
        self.request_refresh: Callable[[], Any] | None = None
        self._timers: dict[Path, asyncio.TimerHandle] = {}
        self._root_timers: dict[Path, asyncio.TimerHandle] = {}
        self._root_last: dict[Path, float] = {}
        self._pushed: dict[str, str] = {}  # uri -> result id last published (push mode)
        self._generation = 0  # bumped on every index update and edit
        self._changed: asyncio.Event | None = None

    def configure(self, capabilities: types.ClientCapabilities | None) -> None:
        td = getattr(capabilities, "text_document", None)
        self.doc_pull = getattr(td, "diagnostic", None) is not None
        wsd = getattr(getattr(capabilities, "workspace", None), "diagnostics", None)
        self.refresh_support = bool(getattr(wsd, "refresh_support", False))

    def _bump(self) -> None:
        self._generation += 1
        if self._changed is not None:
            self._changed.set()

    # -- triggers -----------------------------------------------------------------

    def refresh(self, root: Root | None = None) -> None:
        """A folder's index changed: targets may have appeared or gone."""
        self._bump()
        if (
            (self.doc_pull or self.ws_pull)
            and self.refresh_support
            and self.request_refresh is not None
        ):
            self._tasks.spawn(self._ask_refresh())
        if not self.doc_pull:
            for path in self.ws.docs.open_paths():
                if root is None or root.contains(path):
                    self.schedule(path)
        if not self.ws_pull:
            for r in [root] if root is not None else list(self.ws.roots):
                self.schedule_root(r)

    async def _ask_refresh(self) -> None:
        try:
            assert self.request_refresh is not None
            await self.request_refresh()
        except Exception:  # a client may refuse; its next pull catches up
            pass

    def schedule(self, path: Path, delay: float = 0.05) -> None:
        """An open document changed (open, save): recheck it."""
        self._bump()
        if self.doc_pull:
            uri = self.ws.docs.uri_of(path)
            if uri is not None and uri in self._pushed:
                self._send(uri, [])  # pushed while closed: the client pulls it now
            return
        old = self._timers.pop(path, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[path] = loop.call_later(delay, lambda: self._tasks.spawn(self.publish(path)))

    def schedule_root(self, root: Root) -> None:
        """Check every indexed file of ``root`` soon (coalesced, rate-limited)."""
        if root.path in self._root_timers:
            return
        wait = max(0.2, PUSH_INTERVAL - (time.monotonic() - self._root_last.get(root.path, 0.0)))
        loop = asyncio.get_running_loop()
        self._root_timers[root.path] = loop.call_later(
            wait, lambda: self._tasks.spawn(self.publish_root(root))
        )

    # -- push ----------------------------------------------------------------------

    def _send(self, uri: str, diags: list[types.Diagnostic]) -> None:
        rid = result_id(diags)
        if self._pushed.get(uri) == rid:
            return
        if not diags and uri not in self._pushed:
            return  # never reported, nothing to clear
        self._pushed[uri] = rid
        self._publish(types.PublishDiagnosticsParams(uri=uri, diagnostics=diags))

    async def publish(self, path: Path) -> None:
        self._timers.pop(path, None)
        uri = self.ws.docs.uri_of(path)
        if uri is None:
            return
        diags = await asyncio.to_thread(link_diagnostics, self.ws, path)
        if diags is None or self.ws.docs.uri_of(path) is None:
            return
        # the first answer for an opened document is sent even when empty; after
        # that only changes (no marker churn: the client re-asks for code actions)
        self._pushed.setdefault(uri, "")
        self._send(uri, diags)

    def forget(self, path: Path) -> None:
        """A document closed: its diagnostics now follow the file on disk."""
        root = self.ws.root_for(path)
        if root is not None and not self.ws_pull:
            self.schedule_root(root)

    async def publish_root(self, root: Root) -> None:
        self._root_timers.pop(root.path, None)
        self._root_last[root.path] = time.monotonic()
        if root.folder.closed:
            return
        if self.ws_pull:
            return
        reports = await self._check_root(root, self.doc_pull)
        if reports is None:
            return
        seen = set()
        for uri, diags in reports:
            seen.add(uri)
            self._send(uri, diags)
        prefix = self.ws.uri_for(root.path).rstrip("/") + "/"
        for uri in [u for u in self._pushed if u.startswith(prefix) and u not in seen]:
            self._send(uri, [])  # the file is gone or no longer indexed

    async def _check_root(
        self, root: Root, skip_open: bool = False
    ) -> list[tuple[str, list[types.Diagnostic]]] | None:
        """Every indexed file's broken links (None: the folder closed meanwhile).
        One file at a time on the folder's reader: a search waits for one file's
        check at most instead of sharing the GIL with the whole pass (2k chunks:
        searches in the 2 s after a folder opened took up to 180-350 ms, against
        a median of 6)."""
        out = []
        try:
            rels = await root.read(root.markdown_files)
            skip = set(self.ws.docs.open_paths()) if skip_open else set()
            for rel in rels:
                path = root.path / rel
                if root.folder.closed:
                    return None
                if path in skip:
                    continue
                diags = await root.read(link_diagnostics, self.ws, path)
                if diags is not None:
                    out.append((self.ws.uri_for(path), diags))
        except RuntimeError:  # the folder closed (its reader shut down) meanwhile
            return None
        return out

    # -- pull ------------------------------------------------------------------------

    async def document_report(
        self, uri: str, previous: str | None
    ) -> types.RelatedFullDocumentDiagnosticReport | types.RelatedUnchangedDocumentDiagnosticReport:
        path = uri_to_path(uri)
        diags = (await off_loop(self.ws, link_diagnostics, self.ws, path) if path else None) or []
        rid = result_id(diags)
        if previous == rid:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=rid)
        return types.RelatedFullDocumentDiagnosticReport(items=diags, result_id=rid)

    async def workspace_report(self, previous: dict[str, str]) -> types.WorkspaceDiagnosticReport:
        if not self.ws_pull:
            self.ws_pull = True
            for uri in list(self._pushed):  # from now on the client pulls them
                self._send(uri, [])
        if self._changed is None:
            self._changed = asyncio.Event()
        if previous and self._generation == self._answered:
            # nothing changed since the last answer: wait for a change (long poll)
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), LONG_POLL)
            except TimeoutError:
                pass
        generation = self._generation
        reports: list[tuple[str, list[types.Diagnostic]]] = []
        for root in list(self.ws.roots):
            if not root.folder.closed:
                reports += await self._check_root(root) or []
        self._answered = generation
        items: list[types.WorkspaceDocumentDiagnosticReport] = []
        seen = set()
        for uri, diags in reports:
            seen.add(uri)
            rid = result_id(diags)
            if previous.get(uri) == rid:
                items.append(
                    types.WorkspaceUnchangedDocumentDiagnosticReport(
                        uri=uri, result_id=rid, version=None
                    )
                )
            else:
                items.append(
                    types.WorkspaceFullDocumentDiagnosticReport(
                        uri=uri, items=diags, result_id=rid, version=None
                    )
                )
        for uri in previous:
            if uri not in seen:  # gone: clear what the client shows
                items.append(
                    types.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=[], version=None)
                )
        return types.WorkspaceDiagnosticReport(items=items)
