"""Broken-link diagnostics for every indexed file, not only the open ones (a
link to a file that does not exist, or to a heading the target does not have),
duplicate headings, and the quick fixes: a broken anchor pointed at the nearest
existing heading, a missing note created (those in :mod:`.quick_fixes`).

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

from mdseek.index.links.links import (
    MARKDOWN_SUFFIXES,
    HeadingIndex,
    Link,
    Target,
    is_line_fragment,
)
from mdseek.index.links.obsidian import block_ids, find_attachment, is_attachment, is_block_ref
from mdseek.index.text.aliases import alias_sites
from mdseek.index.text.document import Heading
from mdseek.index.text.slug import github_slug

from . import features as F
from .client import Tasks
from .convert import uri_to_path
from .documents import LinkFacts
from .roots import Root
from .worker import off_loop
from .workspace import Workspace

Publish = Callable[[types.PublishDiagnosticsParams], None]

PUSH_INTERVAL = 2.0  # seconds between two workspace-wide pushes for one folder
LONG_POLL = 30.0  # seconds a workspace pull with nothing new waits for a change


def link_diagnostics(ws: Workspace, path: Path) -> list[types.Diagnostic] | None:
    """The broken links of one document (None: not in a workspace folder or unreadable)."""
    root = ws.root_for(path)
    if root is None:
        return None
    facts = ws.docs.link_facts(path, root.rel(path), ws.root_paths)
    if facts is None:
        return None
    lines: list[str] = []
    out = []
    heads: dict[str, HeadingIndex | None] = {}  # each target's headings, indexed once
    resolved: dict[tuple, Target] = {}  # links to one place resolve once (files are stat'ed)

    def report(link: Link, message: str, data: dict | None = None) -> None:
        if not lines:  # read only for a file with a broken link
            lines.extend(ws.docs.lines(path, ws.root_paths) or [])
        out.append(F.link_diagnostic(ws.pos, lines, link, message, data))

    for link in facts.links:
        if link.kind == "wiki" and link.path and is_attachment(link.path):  # ![[image.png]]
            if find_attachment(link.path, root.rel(path), root.exists, root.files_named) is None:
                report(link, f"No such file: {link.path}")
            continue
        key = (link.kind, link.href, link.path, link.anchor)
        target = resolved.get(key) or resolved.setdefault(key, ws.resolve_link(root, path, link))
        if target.ambiguous:
            notes = " and ".join(target.ambiguous)
            report(link, f"Ambiguous link: {link.path!r} is an alias of {notes}")
            continue
        if target.external or target.outside or target.path is None:
            continue
        if not target.exists:
            md = target.path.lower().endswith(MARKDOWN_SUFFIXES)
            data = {"kind": "missing", "target": target.path} if md else None
            what = "note" if link.kind == "wiki" else "file"
            report(link, f"No such {what}: {target.path}", data)
            continue
        if target.anchor and is_block_ref(target.anchor):  # [[note#^id]]
            tdoc = ws.docs.parsed(root.path / target.path, target.path, ws.root_paths)
            if tdoc is not None and target.anchor[1:].lower() not in block_ids(tdoc):
                report(link, f"No block {target.anchor!r} in {target.path}")
            continue
        if target.anchor:
            if target.path not in heads:  # each target read once (a Path and a stat a link)
                tf = ws.docs.link_facts(root.path / target.path, target.path, ws.root_paths)
                heads[target.path] = HeadingIndex(tf) if tf is not None else None
            index = heads[target.path]
            if (
                index is not None
                and index.find(target.anchor, target.by_text) is None
                and not (
                    link.kind == "markdown"
                    and (
                        is_line_fragment(target.anchor)
                        or target.anchor in facts_of(index).html_anchors
                    )
                )
            ):
                shown = target.anchor if target.by_text else "#" + target.anchor
                data = {
                    "kind": "anchor",
                    "target": target.path,
                    "anchor": target.anchor,
                    "byText": target.by_text,
                }
                report(link, f"No heading {shown!r} in {target.path}", data)
    dups = duplicate_headings(facts.headings) if warn_duplicates(ws, root) else []
    if dups and not lines:
        lines.extend(ws.docs.lines(path, ws.root_paths) or [])
    for h, first in dups:
        out.append(duplicate_diagnostic(ws, path, lines, h, first))
    out += alias_diagnostics(ws, root, path)
    return out


def facts_of(index: HeadingIndex) -> LinkFacts:
    assert isinstance(index.doc, LinkFacts)
    return index.doc


def alias_diagnostics(ws: Workspace, root: Root, path: Path) -> list[types.Diagnostic]:
    """A warning on each alias of the file's front matter that no link can reach
    by it: another note claims it too, or a file has that name (a file name wins)."""
    rel = root.rel(path)
    aliases = ws.aliases(root)
    if not aliases.of(rel):
        return []
    doc = ws.docs.parsed(path, rel, ws.root_paths)
    if doc is None:
        return []
    out = []
    for site in alias_sites(doc):
        others = [f for f in aliases.claims(site.name) if f != rel]
        shadow = aliases.shadowed(site.name)
        if shadow is not None and shadow != rel:
            why = f"[[{site.name}]] leads to {shadow} (a file name wins over an alias)"
        elif others:
            who = " and ".join(others) + (" declares" if len(others) == 1 else " declare")
            why = f"{who} it too, so [[{site.name}]] is ambiguous"
        else:
            continue
        rng = ws.pos.range(doc.lines(), site.line, site.start, site.line, site.end)
        out.append(
            types.Diagnostic(
                range=rng,
                message=f"Alias {site.name!r} leads nowhere: {why}",
                severity=types.DiagnosticSeverity.Warning,
                source="mdseek",
                code="alias-unreachable",
            )
        )
    return out


def warn_duplicates(ws: Workspace, root: Root) -> bool:
    """Duplicate-heading warnings are GitHub-anchor advice: off where links are
    wiki links (``duplicateHeadings`` "auto" in an Obsidian vault) or when set off."""
    choice = ws.settings.duplicate_headings
    return choice == "on" or (choice == "auto" and not root.links_by_wiki())


def duplicate_headings(headings: Iterable[Heading]) -> list[tuple[Heading, Heading]]:
    """Each heading whose text another heading above it already has (same
    GitHub anchor before numbering), with that first one: links by text go to
    the first, and ``#x`` only ever reaches the first (the others are ``#x-1``...)."""
    first: dict[str, Heading] = {}
    out = []
    for h in headings:
        key = github_slug(h.rendered or h.text)
        if key in first:
            out.append((h, first[key]))
        else:
            first[key] = h
    return out


def duplicate_diagnostic(
    ws: Workspace, path: Path, lines: list[str], h: Heading, first: Heading
) -> types.Diagnostic:
    rng = F.heading_range(ws.pos, lines, first)
    return types.Diagnostic(
        range=F.heading_range(ws.pos, lines, h),
        message=(
            f"Duplicate heading {h.text!r} (also on line {first.line + 1}): "
            f"links by its text reach the first; this one is #{h.slug}"
        ),
        severity=types.DiagnosticSeverity.Warning,
        source="mdseek",
        code="duplicate-heading",
        related_information=[
            types.DiagnosticRelatedInformation(
                location=types.Location(uri=ws.uri_for(path), range=rng),
                message="the first heading with this text",
            )
        ],
    )


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
