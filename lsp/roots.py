"""One workspace folder: its Engine, the threads that run it, its state, and the
debounced reindexing of changed files. No protocol types here.

Threads: every Engine call runs off the event loop. Writes (reconcile, reindex
a file) go to one single-thread *writer* executor, so they are serialised and
the last write of a file always reads its final content; reads (search,
related, status) go to a single-thread *reader* executor, so a query never
waits behind a long reindex (the store and the dense matrix lock themselves).

State: ``starting`` → ``indexing`` (reconciling; search is lexical) → ``ready``
(hybrid) or ``lexical-only`` (the model cannot be loaded) or ``error``.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from mdseek.index import facade
from mdseek.index.engine import Engine, IndexReport, SearchResponse
from mdseek.index.files import scan
from mdseek.index.model import ModelUnavailable
from mdseek.index.rerank import Reranker
from mdseek.index.store import IndexFileError

from .config import Settings

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.2
EMBED_SLICE = 64  # chunks per writer job while a folder's vectors are made (one batch, 2-5 s)
SAVE_DELAY_SECONDS = 0.01
_MODEL_LOAD = threading.Lock()  # several folders share one model: load it once
Progress = Callable[[str, int, int], None]


class Cancelled(Exception):
    """The request this work was for has been cancelled or superseded."""


class CancelToken:
    def __init__(self) -> None:
        self.cancelled = False

    def check(self) -> None:
        if self.cancelled:
            raise Cancelled()


class Root:
    def __init__(
        self, path: Path, settings: Settings, n_roots: int, loop: asyncio.AbstractEventLoop
    ):
        self.path = path.resolve()
        self.name = self.path.name or str(self.path)
        self.settings = settings
        self.n_roots = n_roots
        self.loop = loop
        self.engine: Engine | None = None
        self.state = "starting"
        self.message: str | None = None
        self.writer = ThreadPoolExecutor(1, thread_name_prefix=f"mdseek-write-{self.name}")
        self.reader = ThreadPoolExecutor(1, thread_name_prefix=f"mdseek-read-{self.name}")
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._last_fire: dict[str, float] = {}  # key -> when its last update started
        self.updates_pending = 0  # file updates debounced or queued
        self.updates_done = 0
        self.last_report: IndexReport | None = None
        self.last_update: dict | None = None  # timings of the last file update
        self._files: tuple[float, list[str]] | None = None
        self._files_lock = threading.Lock()
        self.on_updated: Callable[[Root, list[str]], None] | None = None
        # Workspace-relative paths whose vectors come first (the files open in the editor).
        self.first_files: Callable[[], list[str]] = list
        self.chunked = False  # every file's chunks are in the index (keyword search is complete)
        self.pending = 0  # chunks without a vector, as of the last slice
        self._embedding = False  # a loop of embed slices is running
        self.closed = False

    def __repr__(self) -> str:
        return f"Root({self.path}, {self.state})"

    # -- executors ----------------------------------------------------------

    async def write(self, fn: Callable, *args: Any, **kw: Any) -> Any:
        """``fn`` on the writer thread; Cancelled once the folder is closing."""
        if self.closed:
            raise Cancelled()
        try:
            return await self.loop.run_in_executor(self.writer, partial(fn, *args, **kw))
        except RuntimeError:
            if self.closed:  # the executor shut down under us: the server is exiting
                raise Cancelled() from None
            raise

    async def read(self, fn: Callable, *args: Any, **kw: Any) -> Any:
        return await self.loop.run_in_executor(self.reader, partial(fn, *args, **kw))

    # -- lifecycle ------------------------------------------------------------

    def contains(self, path: Path) -> bool:
        try:
            path.relative_to(self.path)
            return True
        except ValueError:
            return False

    def rel(self, path: Path) -> str:
        return path.relative_to(self.path).as_posix()

    def _make_engine(self) -> tuple[Engine, str | None]:
        s = self.settings
        index_file = s.index_file_for(self.path, self.n_roots)
        eng = Engine(self.path, index_path=index_file, model=s.model, file_filter=s.file_filter(),
                     embed=s.embed_settings())  # fmt: skip
        note = None
        problem: Exception | None = None
        try:
            eng.chunker  # noqa: B018 - loads the model's tokenizer: proves the model exists
            problem = eng.embedder.error  # the engine fell back to the default tokenizer
        except ModelUnavailable as exc:
            problem = exc
        if problem is not None and s.model:
            eng.close()
            note = f"mdseek: model {s.model!r} cannot be used ({problem}); using the bundled default model"
            log.warning("%s", note)
            eng = Engine(self.path, index_path=index_file, model=None, file_filter=s.file_filter(),
                         embed=s.embed_settings())  # fmt: skip
            eng.chunker  # noqa: B018
        if s.rerank:
            eng.reranker = Reranker(s.rerank, s.rerank_top)  # loads on the first search
        threading.Thread(
            target=self._load_model, args=(eng,), name="mdseek-model-load", daemon=True
        ).start()
        notes = [f"mdseek: {n}" for n in eng.notices] + ([note] if note else [])
        return eng, "; ".join(notes) or None

    @staticmethod
    def _load_model(eng: Engine) -> bool:
        with _MODEL_LOAD:
            return eng.embedder.available()

    async def open(self) -> str | None:
        """Create the engine (off the loop); returns a message for the user, if any."""
        try:
            self.engine, note = await self.write(self._make_engine)
        except Cancelled:
            return None
        except (IndexFileError, OSError, sqlite3.Error, ModelUnavailable) as exc:
            self.state = "error"
            self.message = f"mdseek: cannot open the index of {self.path}: {exc}"
            log.error("%s", self.message)
            return self.message
        return note

    def close(self) -> None:
        self.closed = True
        for h in self._timers.values():
            h.cancel()
        self._timers.clear()
        eng = self.engine
        if eng is not None:
            eng.cancel()  # now, not after the writer's queue: a long embedding stops at its next batch

        def _close() -> None:
            if eng is not None:
                eng.close()

        try:
            self.writer.submit(_close)
        except RuntimeError:
            pass
        self.writer.shutdown(wait=False, cancel_futures=False)
        self.reader.shutdown(wait=False, cancel_futures=True)

    # -- indexing -------------------------------------------------------------

    def _reconcile_sync(self, progress: Progress | None) -> IndexReport:
        """Reconcile in one job (a folder event once the folder is open)."""
        eng = self.engine
        assert eng is not None
        rep = eng.index(progress=progress, embed=False)
        if eng.store.pending_count(eng.model_id):
            if progress and not eng.embedder.loaded:
                progress("model", 0, 1)
            eng.embed_pending(progress, rep)
        return self._finish_sync(rep)

    def _finish_sync(self, rep: IndexReport) -> IndexReport:
        eng = self.engine
        assert eng is not None
        if rep.lexical_only_reason is None and eng.embedder.loaded:
            eng.store.sweep_vectors(eng.model_id)
        rep.pending = self.pending = eng.store.pending_count(eng.model_id)
        rep.chunks = eng.store.counts()["chunks"]
        return rep

    async def _embed_all(self, progress: Progress | None, rep: IndexReport) -> None:
        """Make the missing vectors, a slice at a time (:meth:`Engine.embed_next`):
        the files open in the editor first, and a save or a search waits for
        one slice at most. Search is hybrid meanwhile over the vectors made so far."""
        self._embedding = True
        try:
            await self._embed_slices(progress, rep)
        finally:
            self._embedding = False

    async def _embed_slices(self, progress: Progress | None, rep: IndexReport) -> None:
        eng = self.engine
        assert eng is not None
        total = self.pending = await self.write(eng.store.pending_count, eng.model_id)
        if not total:
            return
        if not eng.embedder.loaded:
            if progress:
                progress("model", 0, 1)
            await asyncio.to_thread(self._load_model, eng)
        start = rep.embedded

        def overall(stage: str, done: int, n: int) -> None:  # the folder's, not the slice's
            if progress is None:
                return
            if stage == "embed":
                progress(stage, min(total, rep.embedded - start + done), total)
            else:
                progress(stage, done, n)

        stalled = 0
        while not self.closed:
            before = rep.embedded
            self.pending = await self.write(
                eng.embed_next, EMBED_SLICE, self.first_files(), overall, rep
            )
            if not self.pending or rep.lexical_only_reason or rep.interrupted:
                break
            stalled = stalled + 1 if rep.embedded == before else 0
            if stalled > 1:
                break

    async def reconcile(self, progress: Progress | None = None) -> IndexReport | None:
        """Bring the index in line with the folder (new, changed, deleted files;
        missing vectors). Lexical search answers over every file as soon as they
        are chunked; hybrid search over the vectors made so far after that."""
        if self.engine is None or self.closed:
            return None
        self.state = "indexing"
        self.message = None
        self.chunked = False
        self._invalidate_files()
        try:
            rep = await self.write(self.engine.index, progress, False)
            self.chunked = True
            await self._embed_all(progress, rep)
            rep = await self.write(self._finish_sync, rep)
            if not self.engine.embedder.loaded:  # vectors are ready; the model may not be yet
                if progress:
                    progress("model", 0, 1)
                await asyncio.to_thread(self._load_model, self.engine)
            await self.write(self.engine.warm_up)
            # A long-lived process ranks BM25 from memory (built in the background
            # at the next search; FTS5 answers until then). Not before: the build
            # would compete with opening the folder for the first hybrid answer.
            self.engine.lexical_in_memory = True
        except Cancelled:  # closing: the rest is done at the next start
            return None
        except Exception as exc:
            log.exception("indexing %s failed", self.path)
            self.state = "error"
            self.message = f"indexing failed: {exc}"
            return None
        self.last_report = rep
        self._settle(rep)
        return rep

    def _settle(self, rep: IndexReport | None = None) -> None:
        eng = self.engine
        if eng is None:
            return
        err = eng.embedder.error
        if err is not None or (rep is not None and rep.lexical_only_reason):
            self.state = "lexical-only"
            self.message = str(err or (rep.lexical_only_reason if rep else ""))
        elif self.state in ("indexing", "starting"):
            self.state = "ready"

    def schedule_file(self, path: Path, delay: float = DEBOUNCE_SECONDS) -> None:
        """Reindex one file after ``delay`` of quiet (saves and file events coalesce)."""
        self._schedule(str(path), partial(self.engine_call, "index_file", path), delay)

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
        self._schedule("*", self._reconcile_sync_quiet, delay)

    def _reconcile_sync_quiet(self) -> IndexReport:
        """A folder event (a checkout, a sync): every change chunked now, so
        keyword search sees it at once; the vectors follow in slices
        (:meth:`_embed_rest`), so a save never waits behind them."""
        eng = self.engine
        assert eng is not None
        return self._finish_sync(eng.index(embed=False))

    async def _embed_rest(self) -> None:
        """The vectors a folder event left pending, a slice at a time."""
        if self._embedding or self.closed or self.engine is None:
            return
        rep = IndexReport()
        try:
            await self._embed_all(None, rep)
            if not rep.embedded or self.closed:
                return
            await self.write(self._finish_sync, rep)
        except Cancelled:
            return
        if self.on_updated is not None:
            self.on_updated(self, ["*"])

    def engine_call(self, name: str, *args: Any) -> Any:
        if self.engine is None:
            return None
        return getattr(self.engine, name)(*args)

    def _schedule(self, key: str, job: Callable[[], Any], delay: float) -> None:
        if self.closed or self.engine is None:
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
        if self.closed:
            return
        t0 = time.perf_counter()
        fut = self.loop.run_in_executor(self.writer, job)
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
        if key == "*" and self.pending and not self._embedding:
            self.loop.create_task(self._embed_rest())
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
                self._settle(rep)
        if self.on_updated is not None:
            self.on_updated(self, [key])

    # -- reading --------------------------------------------------------------

    def search_sync(
        self,
        query: str,
        limit: int,
        prefix_last: bool,
        token: CancelToken | None = None,
        explain: bool = False,
        paths: tuple[str, ...] = (),
    ) -> SearchResponse:
        if token:
            token.check()
        eng = self.engine
        if eng is None:
            return SearchResponse([], "lexical", self.message or "the index is not open yet")
        # Once every file is chunked, hybrid over the vectors made so far (the
        # answer says it is partial: see completeness).
        partial = self.state == "indexing" and self.chunked and eng.embedder.loaded
        hybrid = self.state == "ready" or partial
        resp = facade.search(
            eng,
            query,
            limit=limit,
            mode="hybrid" if hybrid else "lexical",
            paths=paths,
            prefix_last=prefix_last,
            wait_for_model=False,
            explain=explain,
        )
        if resp.mode != "hybrid" and resp.note is None:
            if self.state == "lexical-only":
                resp.note = f"lexical results only: {self.message}"
            elif self.state in ("starting", "indexing"):
                resp.note = "lexical results only: indexing in progress (semantic results once the vectors are ready)"
            elif not query.strip():
                resp.note = None
        if token:
            token.check()
        return resp

    def completeness(self, mode: str) -> facade.Completeness:
        """Whether this folder's part of an answer is final (see facade.completeness)."""
        if self.engine is None:
            return facade.Completeness(False, "partial results: the index is still opening", 0)
        busy = self.state in ("starting", "indexing")
        reading = busy and not self.chunked
        # while indexing, what is missing are vectors (search is hybrid over those made so far)
        return facade.completeness(self.engine, "hybrid" if busy else mode, reading)

    def related_sync(self, rel: str, slug: str, start_line: int, limit: int) -> SearchResponse:
        if self.engine is None:
            return SearchResponse([], "lexical")
        return facade.related(self.engine, rel, slug, start_line, limit)

    def sections_like_sync(self, text: str, exclude_rel: str | None, limit: int) -> SearchResponse:
        if self.engine is None or not text.strip():
            return SearchResponse([], "lexical", self.message)
        return facade.sections_like(
            self.engine, text, limit, exclude_rel, dense=self.state == "ready"
        )

    def status_sync(self) -> dict:
        eng = self.engine
        if eng is None:
            return {
                "root": str(self.path),
                "state": self.state,
                "files": 0,
                "chunks": 0,
                "pending_embeds": 0,
                "window_fit": 1.0,
                "model": self.settings.model or "",
                "embedded_total": 0,
                "message": self.message,
            }
        st = facade.status(eng)
        st["state"] = self.state
        st["message"] = self.message
        st["embedded_total"] = eng.embedder.texts_embedded
        st["updates_pending"] = self.updates_pending
        st["updates_done"] = self.updates_done
        st["last_update"] = self.last_update
        return st

    # -- workspace files (for wiki links and link checks) ---------------------

    def _invalidate_files(self) -> None:
        with self._files_lock:
            self._files = None

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

    def exists(self, rel: str) -> bool:
        p = self.path / rel
        try:
            return p.is_file() and p.resolve().is_relative_to(self.path)
        except OSError:
            return False
