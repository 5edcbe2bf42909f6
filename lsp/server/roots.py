"""One workspace folder as the language server holds it: a
:class:`~mdseek.index.engine.folder.Folder` (its engine, threads, state, indexing and
answers) seen from the event loop, with the editor's settings, the debounced
reindexing of the files the client says changed, and the timings the status
shows. No protocol types here.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from mdseek.index.api import (
    Cancelled,
    CancelToken,
    EngineOptions,
    Folder,
    FolderState,
    IndexReport,
    Progress,
    Reranker,
)
from mdseek.index.links.obsidian import is_media
from mdseek.index.text.files import other_files, scan

from .config import Settings

__all__ = ["Cancelled", "CancelToken", "Root"]

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.2
WIKI_SAMPLE = 500  # files read to tell whether a folder links by wiki links
WIKI_TTL = 300.0  # seconds that answer is kept (reading 500 files after every save is not)
_WIKI = re.compile(r"\[\[[^\]\n]+\]\]")
_LOCAL_MD = re.compile(r"\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:|#)[^)\s]+")  # ](path...) to a file
SAVE_DELAY_SECONDS = 0.01


class Root:
    def __init__(
        self, path: Path, settings: Settings, n_roots: int, loop: asyncio.AbstractEventLoop
    ):
        self.folder = Folder(path)
        self.path = self.folder.path
        self.name = self.folder.name
        self.settings = settings
        self.n_roots = n_roots
        self.loop = loop
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._last_fire: dict[str, float] = {}  # key -> when its last update started
        self.updates_pending = 0  # file updates debounced or queued
        self.updates_done = 0
        self.last_update: dict | None = None  # timings of the last file update
        self._files: tuple[float, list[str]] | None = None
        self._others: tuple[float, dict[str, list[str]]] | None = None
        self._wiki: tuple[float, bool] | None = None
        self._files_lock = threading.Lock()
        self.on_updated: Callable[[Root, list[str]], None] | None = None
        self.folder.on_embedded = lambda: loop.call_soon_threadsafe(self._updated, ["*"])

    def __repr__(self) -> str:
        return f"Root({self.path}, {self.state})"

    # -- the folder, from the event loop ------------------------------------------

    @property
    def state(self) -> FolderState:
        return self.folder.state

    def set_first_files(self, files: Callable[[], list[str]]) -> None:
        """Workspace-relative paths whose vectors come first (the files open in the editor)."""
        self.folder.first_files = files

    async def read(self, fn: Callable, *args: Any, **kw: Any) -> Any:
        """``fn`` on the folder's reader thread."""
        return await asyncio.wrap_future(self.folder.read(fn, *args, **kw), loop=self.loop)

    def contains(self, path: Path) -> bool:
        try:
            path.relative_to(self.path)
            return True
        except ValueError:
            return False

    def rel(self, path: Path) -> str:
        return path.relative_to(self.path).as_posix()

    def options(self) -> EngineOptions:
        """The engine the settings ask for."""
        s = self.settings
        return EngineOptions(
            index_path=s.index_file_for(self.path, self.n_roots),
            model=s.model,
            file_filter=s.file_filter(),
            embed=s.embed_settings(),
            reranker=Reranker(s.rerank, s.rerank_top) if s.rerank else None,  # loads at a search
        )

    async def open(self) -> str | None:
        """Open the folder's engine (off the loop); a message for the user, if any."""
        notes = await asyncio.to_thread(self.folder.open, self.options())
        return "; ".join(f"mdseek: {n}" for n in notes) or None

    async def reconcile(self, progress: Progress | None = None) -> IndexReport | None:
        """See :meth:`Folder.reconcile` (off the loop)."""
        self._invalidate_files()
        return await asyncio.to_thread(self.folder.reconcile, progress)

    def close(self) -> None:
        for h in self._timers.values():
            h.cancel()
        self._timers.clear()
        self.folder.close()

    # -- file events, debounced -------------------------------------------------------

    def schedule_file(self, path: Path, delay: float = DEBOUNCE_SECONDS) -> None:
        """Reindex one file after ``delay`` of quiet (saves and file events coalesce)."""
        self._schedule(str(path), partial(self.folder.file_saved, path), delay)

    def schedule_save(self, path: Path) -> None:
        """A save is deliberate: a lone save is indexed at once (after a few ms,
        which the file watcher's echo of it joins); saves in a burst (auto-save,
        format-on-save, a script) coalesce after ``DEBOUNCE_SECONDS`` of quiet."""
        key = str(path)
        lone = (
            key not in self._timers
            and time.monotonic() - self._last_fire.get(key, -1e9) >= DEBOUNCE_SECONDS
        )
        self.schedule_file(path, SAVE_DELAY_SECONDS if lone else DEBOUNCE_SECONDS)

    def schedule_reconcile(self, delay: float = DEBOUNCE_SECONDS) -> None:
        """A folder event (a checkout, a sync): see :meth:`Folder.chunk_changes`."""
        self._schedule("*", self.folder.chunk_changes, delay)

    def _schedule(self, key: str, job: Callable[[], Any], delay: float) -> None:
        if self.folder.closed or not self.folder.is_open:
            return
        old = self._timers.pop(key, None)
        if old is not None:
            old.cancel()
        else:
            self.updates_pending += 1
        self._timers[key] = self.loop.call_later(delay, self._fire, key, job)

    def _fire(self, key: str, job: Callable[[], Any]) -> None:
        self._timers.pop(key, None)
        self._last_fire[key] = time.monotonic()
        if self.folder.closed:
            return
        t0 = time.perf_counter()
        try:
            fut = asyncio.wrap_future(self.folder.submit(job), loop=self.loop)
        except Cancelled:
            return
        fut.add_done_callback(partial(self._fired, key, t0))

    def _fired(self, key: str, t0: float, fut: asyncio.Future) -> None:
        self.updates_pending -= 1
        self.updates_done += 1
        self._invalidate_files()
        if fut.cancelled():
            return
        exc = fut.exception()
        if exc is not None:
            log.error("reindexing %s failed: %s", key, exc)
            return
        rep = fut.result()
        if key == "*":
            self.folder.embed_in_background()
        if isinstance(rep, IndexReport):
            ms = (time.perf_counter() - t0) * 1000
            self.last_update = {
                "ms": round(ms, 1),
                "chunk_ms": round(rep.chunk_seconds * 1000, 1),
                "write_ms": round(rep.write_seconds * 1000, 1),
                "embed_ms": round(rep.embed_seconds * 1000, 1),
                "non_embed_ms": round(ms - rep.embed_seconds * 1000, 1),
                "chunks_written": rep.chunks_written,
                "embedded": rep.embedded,
            }
            log.info(
                "reindexed %s in %.0f ms (%d chunks written, %d embedded)",
                key,
                ms,
                rep.chunks_written,
                rep.embedded,
            )
            if rep.lexical_only_reason:
                self.folder.settle(rep)
        self._updated([key])

    def _updated(self, keys: list[str]) -> None:
        if self.on_updated is not None and not self.folder.closed:
            self.on_updated(self, keys)

    # -- reading ------------------------------------------------------------------------

    # -- workspace files (for wiki links and link checks) ---------------------

    def _invalidate_files(self) -> None:
        with self._files_lock:
            self._files = None
            self._others = None

    def markdown_files(self) -> list[str]:
        """Workspace-relative paths of the folder's indexable files (cached until
        something changes)."""
        with self._files_lock:
            if self._files is not None and time.monotonic() - self._files[0] < 30:
                return self._files[1]
        flt = self.settings.file_filter()
        files = [f.rel for f in scan(self.path, flt)]
        with self._files_lock:
            self._files = (time.monotonic(), files)
        return files

    def links_by_wiki(self) -> bool:
        """Whether the folder is an Obsidian vault: ``.obsidian/`` is there, or
        its notes link mostly by wiki links (at least 10, and three times its
        markdown links to files; read from up to ``WIKI_SAMPLE`` files, the
        answer kept ``WIKI_TTL`` seconds)."""
        if (self.path / ".obsidian").is_dir():
            return True
        with self._files_lock:  # kept through edits: one note rarely tips a folder
            if self._wiki is not None and time.monotonic() - self._wiki[0] < WIKI_TTL:
                return self._wiki[1]
        n_wiki = n_md = 0
        for rel in self.markdown_files()[:WIKI_SAMPLE]:
            try:
                with open(self.path / rel, encoding="utf-8", errors="replace") as fh:
                    text = fh.read(200_000)
            except OSError:
                continue
            n_wiki += len(_WIKI.findall(text))
            n_md += len(_LOCAL_MD.findall(text))
        wiki = n_wiki >= 10 and n_wiki > 3 * n_md
        with self._files_lock:
            self._wiki = (time.monotonic(), wiki)
        return wiki

    def files_named(self, name: str) -> list[str]:
        """Workspace-relative paths of the folder's other files (images, PDFs)
        called ``name`` (lower case), for ``![[name.png]]`` (cached as
        :meth:`markdown_files` is)."""
        with self._files_lock:
            if self._others is not None and time.monotonic() - self._others[0] < 30:
                return self._others[1].get(name, [])
        by_name: dict[str, list[str]] = {}
        for rel in other_files(self.path, self.settings.file_filter()):
            by_name.setdefault(rel.rsplit("/", 1)[-1].lower(), []).append(rel)
        with self._files_lock:
            self._others = (time.monotonic(), by_name)
        return by_name.get(name, [])

    def media_files(self) -> list[str]:
        """The folder's pictures, PDFs, sounds and videos (its other files that a
        link may open), for completion after ``![i](`` (cached as :meth:`files_named`)."""
        self.files_named("")
        with self._files_lock:
            others = self._others[1] if self._others is not None else {}
        return sorted(rel for rels in others.values() for rel in rels if is_media(rel))

    def exists(self, rel: str) -> bool:
        p = self.path / rel
        try:
            return p.is_file() and p.resolve().is_relative_to(self.path)
        except OSError:
            return False

    def is_folder(self, rel: str) -> bool:
        """Whether ``rel`` is a folder inside this one (symlinks resolved)."""
        p = self.path / rel
        try:
            return p.is_dir() and p.resolve().is_relative_to(self.path)
        except OSError:
            return False
