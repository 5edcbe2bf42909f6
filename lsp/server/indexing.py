"""Keeping every folder's index in line with the files: opening and closing
folders, reconciling them (one at a time) with work-done progress, and file
events from the client (watchers, saves) scheduled as debounced reindexing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from mdseek.index.api import FolderState
from mdseek.index.links.links import MARKDOWN_SUFFIXES

from .client import Tasks, supports, tell
from .roots import Root
from .workspace import Workspace

log = logging.getLogger("mdseek.lsp")

WATCH_ID = "mdseek-watch-markdown"
MARKERS = (".git", ".obsidian", ".mdseek")  # a folder holding one is a workspace of its own
MAX_CLIMB = 3  # folders above the opened file's that a fallback root may reach


def _time_left(spent: float, done: int, todo: int) -> str:
    """The time left at the rate so far, as ", about N min left" ("" before 2 s or any text)."""
    if spent < 2 or done <= 0 or todo <= 0:
        return ""
    secs = spent / done * todo
    return f", about {secs / 60:.0f} min left" if secs >= 90 else f", about {secs:.0f} s left"


def _holds_markdown(folder: Path) -> bool:
    try:
        return any(p.suffix.lower() in MARKDOWN_SUFFIXES and p.is_file() for p in folder.iterdir())
    except OSError:
        return False


def fallback_root(path: Path) -> Path | None:
    """The folder to index for a file opened with no workspace folder: the
    file's folder, or the nearest ancestor (at most ``MAX_CLIMB`` up) that is a
    workspace (``.git``, ``.obsidian``, ``.mdseek``) or holds markdown files
    itself, through folders that hold some; never the home folder or ``/``."""
    never = {Path(os.path.expanduser("~")).resolve(), Path(path.anchor or "/")}
    folder = path.resolve().parent
    if folder in never:
        return None
    for _ in range(MAX_CLIMB):
        if any((folder / m).exists() for m in MARKERS):
            break
        up = folder.parent
        if up in never or up == folder or not _holds_markdown(up):
            break
        folder = up
    return folder


Report = Callable[[str, int, int], None]
Finish = Callable[[str], None]


class Indexing:
    def __init__(
        self,
        server: LanguageServer,
        ws: Workspace,
        tasks: Tasks,
        on_indexed: Callable[[Root], None],
    ) -> None:
        self.server = server
        self.ws = ws
        self.tasks = tasks
        self.on_indexed = on_indexed  # a folder's index changed (reconcile or a file update)
        self.folders: list[Path] = []  # the client's workspace folders (or fallback roots)
        self.fallback = False  # the client named no folder: opened files' folders are roots
        self._refused: set[Path] = set()  # folders never made roots (home, /), said once
        self.started = False  # initialized has started the roots; later ones start at once
        self._progress_n = 0
        self._lock: asyncio.Lock | None = None

    # -- folders ----------------------------------------------------------------

    def add_root(self, folder: Path, start: bool = True) -> Root | None:
        folder = folder.resolve()
        if not folder.is_dir() or any(r.path == folder for r in self.ws.roots):
            return None
        root = Root(folder, self.ws.settings, max(1, len(self.folders)), asyncio.get_event_loop())
        root.on_updated = lambda r, keys: self.on_indexed(r)
        root.set_first_files(
            lambda: [
                root.rel(p)
                for p in (q.resolve() for q in self.ws.docs.open_paths())
                if root.contains(p)
            ]
        )
        self.ws.roots.append(root)
        if start:
            self.tasks.spawn(self.start_root(root))
        return root

    async def start_root(self, root: Root) -> None:
        note = await root.open()
        if note:
            tell(self.server, note)
        if root.folder.is_open:
            await self.reconcile(root)
            if root.state == FolderState.LEXICAL_ONLY:
                tell(
                    self.server,
                    f"mdseek: semantic search is unavailable ({root.folder.message}); keyword search only",
                )

    def remove_root(self, folder: Path) -> None:
        folder = folder.resolve()
        for r in [r for r in self.ws.roots if r.path == folder]:
            self.ws.roots.remove(r)
            r.close()

    def folders_changed(self, added: list[Path], removed: list[Path]) -> None:
        for p in removed:
            self.folders = [x for x in self.folders if x != p]
            self.remove_root(p)
        for p in added:
            if p not in self.folders:
                self.folders.append(p)
                self.add_root(p)

    def file_opened(self, path: Path) -> None:
        """With no workspace folder from the client, the opened file's folder
        (see :func:`fallback_root`) becomes one, said in one message."""
        if not self.fallback or path.suffix.lower() not in MARKDOWN_SUFFIXES:
            return
        if self.ws.root_for(path.resolve()) is not None:
            return
        folder = fallback_root(path)
        if folder is None:
            if path.parent not in self._refused:
                self._refused.add(path.parent)
                tell(
                    self.server,
                    f"mdseek: no workspace folder is open and {path.parent} is not indexed "
                    "(never the home folder or /): open a folder to search its notes",
                )
            return
        self.folders.append(folder)
        if self.add_root(folder, start=self.started) is not None:
            tell(
                self.server,
                f"mdseek: no workspace folder is open; indexing {folder} (the folder of {path.name})",
                types.MessageType.Info,
            )

    async def rebuild_roots(self) -> None:
        """Close every folder's engine and open them again (index settings changed)."""
        old = self.ws.roots
        self.ws.roots = []
        for r in old:
            r.close()
        for f in self.folders:
            self.add_root(f)

    def close(self) -> list[str]:
        """Close every folder (their engines stop between batches); returns the
        names of those that were still indexing."""
        busy = [r.name for r in self.ws.roots if r.state == FolderState.INDEXING]
        for r in self.ws.roots:
            r.close()
        return busy

    # -- reconciling --------------------------------------------------------------

    async def reconcile(self, root: Root) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one at a time: one model load, fair on small machines
            if root.folder.closed:
                return
            progress, finish = await self.progress(f"mdseek: indexing {root.name}")
            rep = None
            try:
                rep = await root.reconcile(progress)
            finally:
                if rep is not None:
                    finish(f"ready: {rep.files} files, {rep.chunks} sections")
                else:
                    finish(root.folder.message or "stopped")
            self.on_indexed(root)

    async def reconcile_all(self) -> None:
        for r in list(self.ws.roots):
            if r.folder.is_open:
                await self.reconcile(r)

    async def progress(self, title: str) -> tuple[Report | None, Finish]:
        """Work-done progress (when the client supports it): a thread-safe report
        callback for the engine and a function that ends it."""
        if not supports(self.server, "window", "work_done_progress"):
            return None, lambda msg: None
        self._progress_n += 1
        token = f"mdseek-index-{os.getpid()}-{self._progress_n}"
        wdp = self.server.work_done_progress
        try:
            await wdp.create_async(token)
        except Exception as exc:
            log.info("window/workDoneProgress/create failed: %s", exc)
            return None, lambda msg: None
        wdp.begin(
            token,
            types.WorkDoneProgressBegin(
                title=title, message="looking for markdown files", percentage=0
            ),
        )
        loop = asyncio.get_running_loop()
        last = [0.0]
        embed_start: list[tuple[float, int]] = []  # (when, done) at the first embedding report

        def report(stage: str, done: int, total: int) -> None:  # called in the writer thread
            now = time.monotonic()
            if stage not in ("model", "wait", "parse", "embed"):
                return  # the CLI's finer counts (passages, tokens)
            if stage != "model" and done < total and now - last[0] < 0.1:
                return
            last[0] = now
            if stage == "model":
                msg, pct = "loading the embedding model", 30
            elif stage == "wait":
                msg, pct = "waiting for another mdseek process embedding this index", 30
            else:  # plain words (editors show them as they are: VS Code, Neovim)
                frac = done / total if total else 1.0
                msg = f"{done} of {total} files read"
                if stage == "embed":  # texts = chunks and passages: a share says it plainly
                    embed_start[:] = embed_start or [(now, done)]
                    msg = f"searchable by meaning: {int(frac * 100)}%" + _time_left(
                        now - embed_start[0][0], done - embed_start[0][1], total - done
                    )
                pct = int(frac * 30) if stage == "parse" else 30 + int(frac * 70)
            value = types.WorkDoneProgressReport(message=msg, percentage=pct)
            loop.call_soon_threadsafe(wdp.report, token, value)

        def finish(message: str) -> None:
            wdp.end(token, types.WorkDoneProgressEnd(message=message))

        return report, finish

    # -- file events ------------------------------------------------------------------

    async def register_watchers(self) -> None:
        if not supports(
            self.server, "workspace", "did_change_watched_files", "dynamic_registration"
        ):
            return
        try:
            opts = types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[
                    types.FileSystemWatcher(glob_pattern=f"**/*{s}") for s in MARKDOWN_SUFFIXES
                ]
            )
            await self.server.client_register_capability_async(
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

    def file_changed(self, path: Path) -> None:
        """A file or folder changed on disk: reindex it (debounced)."""
        root = self.ws.root_for(path)
        if root is None:
            return
        if path.suffix.lower() in MARKDOWN_SUFFIXES:
            root.schedule_file(path)
        else:  # a folder (git checkout, rm -r) or something else: reconcile it all
            root.schedule_reconcile()

    def file_saved(self, path: Path) -> None:
        root = self.ws.root_for(path)
        if root is not None:
            root.schedule_save(path)
