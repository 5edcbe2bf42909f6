"""Broken-link diagnostics of the open documents: a link to a file that does
not exist, or to a heading the target does not have.

Published per open document, debounced, off the event loop; refreshed when a
document opens or is saved and when a folder's index changes (a target may
have appeared or gone).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types

from mdseek.index.links import find_heading, find_links

from . import features as F
from .client import Tasks
from .roots import Root
from .workspace import Workspace

Publish = Callable[[types.PublishDiagnosticsParams], None]


def link_diagnostics(ws: Workspace, path: Path) -> list[types.Diagnostic] | None:
    """The broken links of one document (None: not in a workspace folder or unreadable)."""
    root = ws.root_for(path)
    if root is None:
        return None
    doc = ws.docs.parsed(path, root.rel(path), ws.root_paths)
    if doc is None:
        return None
    lines = doc.lines()
    out = []
    for link in find_links(doc):
        target = ws.resolve_link(root, path, link)
        if target.external or target.outside or target.path is None:
            continue
        if not target.exists:
            what = "note" if link.kind == "wiki" else "file"
            out.append(F.link_diagnostic(ws.pos, lines, link, f"No such {what}: {target.path}"))
            continue
        if target.anchor:
            tdoc = ws.docs.parsed(root.path / target.path, target.path, ws.root_paths)
            if tdoc is not None and find_heading(tdoc, target.anchor, target.by_text) is None:
                shown = target.anchor if target.by_text else "#" + target.anchor
                out.append(
                    F.link_diagnostic(ws.pos, lines, link, f"No heading {shown!r} in {target.path}")
                )
    return out


class Diagnostics:
    def __init__(self, ws: Workspace, publish: Publish, tasks: Tasks) -> None:
        self.ws = ws
        self._publish = publish
        self._tasks = tasks
        self._timers: dict[Path, asyncio.TimerHandle] = {}
        self._sent: dict[str, list[types.Diagnostic]] = {}  # uri -> last published

    def refresh(self, root: Root | None = None) -> None:
        """Recheck every open document (of ``root``, or of all folders)."""
        for path in self.ws.docs.open_paths():
            if root is None or root.contains(path):
                self.schedule(path)

    def schedule(self, path: Path, delay: float = 0.05) -> None:
        old = self._timers.pop(path, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self._timers[path] = loop.call_later(
            delay, lambda: self._tasks.spawn(self.publish(path))
        )

    async def publish(self, path: Path) -> None:
        self._timers.pop(path, None)
        uri = self.ws.docs.uri_of(path)
        if uri is None:
            return
        diags = await asyncio.to_thread(link_diagnostics, self.ws, path)
        if diags is None or self.ws.docs.uri_of(path) is None:
            return
        if self._sent.get(uri) == diags:
            return  # unchanged: no marker churn in the client (it re-asks for code actions)
        self._sent[uri] = diags
        self._publish(types.PublishDiagnosticsParams(uri=uri, diagnostics=diags))

    def forget(self, path: Path) -> None:
        """A document closed: publish afresh when it opens again."""
        uri = self.ws.docs.uri_of(path)
        if uri is not None:
            self._sent.pop(uri, None)
