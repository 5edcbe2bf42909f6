"""One folder's life, for every front end: its Engine (opened by
:mod:`.opening`), the threads that keep its index in line with the files, its
state, its status and its answers (several folders as one: :mod:`.folders`).

The language server (``lsp/server/roots.py``), the MCP server (``lsp/mcp/server.py``)
and the command line (``lsp/cli/``) all hold a :class:`Folder`; they only
translate its answers into their protocol.

Threads: writes (reconcile, a changed file, a slice of vectors) go to one
single-thread *writer* executor, so they are serialised and the last write of
a file reads its final content; reads (search, related, status) go to a
single-thread *reader* executor, so a query never waits behind a long reindex
(the store and the dense matrix lock themselves). A folder's vectors are made
a slice at a time (:data:`EMBED_SLICE` chunks per writer job, the files open in
an editor first), so a save or a folder change waits for one slice at most; the
first reading pass is sliced too (:data:`READ_SLICE` files per job, the open
files first, and their vectors made between two slices once the model is in).

State: ``starting`` → ``indexing`` (reconciling; search is lexical until the
model is loaded, then hybrid over the vectors made so far, with a note while
files are still read) → ``ready`` (hybrid) or ``lexical-only`` (the model cannot be used), or
``error`` (the index cannot be opened, or indexing failed: what the index
holds is still searched by keywords).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from ..model.demand import DEMAND
from ..model.rerank import Reranker
from ..search.requests import Mode, SearchRequest
from ..store.adopt import flush_records
from ..text.document import ParsedDocument
from . import facade, linked, near, oneshot, slicing, where
from .cancel import Cancelled, CancelToken
from .engine import Engine, IndexReport, SearchResponse, SearchResult
from .near import NearDuplicate
from .opening import EngineOptions, OpenError, open_engine
from .slicing import Progress
from .stats import window_fraction
from .status import FolderState, Status

log = logging.getLogger(__name__)

EMBED_SLICE = 64  # chunks per writer job while a folder's vectors are made (one batch, 2-5 s)
READ_SLICE = 64  # files per writer job while a folder is first read (about 0.3 s idle)
FRESH_SECONDS = 1.0  # the longest a changed-files scan (:meth:`Folder.changed`) is skipped for
SCAN_SHARE = 20  # ... and otherwise: after 20 times the last scan's duration

# -- one folder --------------------------------------------------------------------------


class Folder:
    def __init__(self, path: Path, name: str | None = None):
        self.path = path.resolve()
        self.name = name or self.path.name or str(self.path)
        self.engine: Engine | None = None
        self.model_setting: str | None = None
        self.state: FolderState = FolderState.STARTING
        self.message: str | None = None
        self.chunked = False  # every file's chunks are in the index (keyword search is complete)
        self.pending = 0  # chunks without a vector, as of the last slice
        self.closed = False
        self.last_report: IndexReport | None = None
        self.writer = ThreadPoolExecutor(1, thread_name_prefix=f"mdseek-write-{self.name}")
        self.reader = ThreadPoolExecutor(1, thread_name_prefix=f"mdseek-read-{self.name}")
        # Workspace-relative paths whose vectors come first (the files open in an editor).
        self.first_files: Callable[[], list[str]] = list
        # Called (on a background thread) when vectors made in the background are in.
        self.on_embedded: Callable[[], None] | None = None
        self._embedding = False  # a loop of embed slices is running
        self._moving = False  # the precision move's loop is running
        self._embedding_lock = threading.Lock()
        self._checked = 0.0  # when changed() last scanned, and how long that took
        self._scan_seconds = 0.0
        self._fresh = threading.Lock()

    def __repr__(self) -> str:
        return f"Folder({self.path}, {self.state})"

    @property
    def is_open(self) -> bool:
        """Whether its index is open (not before :meth:`open`, nor when it cannot be)."""
        return self.engine is not None

    # -- the command line's one go (:mod:`.oneshot`) ---------------------------------

    @classmethod
    def open_now(cls, root: Path, options: EngineOptions) -> tuple[Folder, list[str]]:
        """A folder whose index is opened on this thread, and what the user should
        hear (OpenError in one line); then :meth:`index_now`, and the answers."""
        f = cls(root)
        f.engine, notes = open_engine(root, options)
        return f, notes

    def index_now(
        self,
        progress: Progress | None = None,
        vectors: str | Path | None = None,
        move: bool = False,
    ) -> IndexReport:
        """The whole folder indexed in one go on this thread (:func:`oneshot.index_now`),
        then the folder settled as after :meth:`reconcile`."""
        assert self.engine is not None
        rep = oneshot.index_now(self.engine, progress, vectors, move)
        self.chunked, self.last_report = True, rep
        self.settle(rep)
        return rep

    def preload_model(self) -> threading.Thread:  # join it before the process exits
        assert self.engine is not None
        return self.engine.models.embedder.preload()

    def use_reranker(self, reranker: Reranker | None) -> None:
        if self.engine is not None:
            self.engine.searcher.reranker = reranker

    @property
    def index_path(self) -> Path | None:
        return None if self.engine is None else self.engine.index_path

    @property
    def model_load_seconds(self) -> float | None:  # this process's, None before it loads
        return None if self.engine is None else self.engine.models.embedder.load_seconds

    def export_vectors(self, path: str | Path) -> int:
        """The index's vectors written to a team's vectors file; how many."""
        assert self.engine is not None
        return self.engine.export_vectors(path)

    def where_ranked(self, query: str, rel: str, line: int) -> dict | None:
        """Where the section of ``rel`` holding 1-based ``line`` ranked (:mod:`.where`);
        None when the index does not hold ``rel``."""
        eng = self.engine
        if eng is None or eng.store.documents.get(rel) is None:
            return None
        return where.where_ranked(eng, query, rel, line)

    # -- threads ------------------------------------------------------------------

    def submit(self, fn: Callable, *args: Any, **kw: Any) -> Future:
        """``fn`` on the writer thread, for a request (a save, a folder change:
        someone is at work, so bulk embedding makes room); Cancelled once the
        folder is closing."""
        if self.closed:
            raise Cancelled()
        DEMAND.touch()
        return self._submit(fn, *args, **kw)

    def _submit(self, fn: Callable, *args: Any, **kw: Any) -> Future:
        """``fn`` on the writer thread: work of the index's own making (reading,
        embedding, a precision move), which leaves bulk threads alone."""
        if self.closed:
            raise Cancelled()
        try:
            return self.writer.submit(partial(fn, *args, **kw))
        except RuntimeError:  # the executor shut down under us
            raise Cancelled() from None

    def read(self, fn: Callable, *args: Any, **kw: Any) -> Future:
        """``fn`` on the reader thread; Cancelled once the folder is closing."""
        try:
            return self.reader.submit(partial(fn, *args, **kw))
        except RuntimeError:  # the executor shut down under us
            raise Cancelled() from None

    def write(self, fn: Callable, *args: Any, **kw: Any) -> Any:
        """``fn`` on the writer thread for a request (:meth:`submit`), waited
        for (never call it from that thread)."""
        return self._waited(self.submit(fn, *args, **kw))

    def _own(self, fn: Callable, *args: Any, **kw: Any) -> Any:
        """``fn`` on the writer thread as the index's own work (:meth:`_submit`), waited for."""
        return self._waited(self._submit(fn, *args, **kw))

    def _waited(self, job: Future) -> Any:
        out = job.result()
        if self.closed:
            raise Cancelled()
        return out

    # -- life ----------------------------------------------------------------------

    def open(self, options: EngineOptions) -> list[str]:
        """Open the engine (blocking: call it off an event loop). Returns what
        the user should hear; an index that
        cannot be opened leaves the folder in ``error`` with the one-line message."""
        self.model_setting = options.model
        try:
            self.engine, notes = self._own(open_engine, self.path, options)
        except Cancelled:
            return []
        except OpenError as exc:
            self.state, self.message = FolderState.ERROR, str(exc)
            log.error("%s", self.message)
            return [self.message]
        return notes

    def close(self) -> None:
        self.closed = True
        eng = self.engine
        if eng is not None:
            eng.cancel()  # now, not after the writer's queue: a long embedding stops at its next batch
            try:
                self.writer.submit(eng.close)
            except RuntimeError:
                pass
        self.writer.shutdown(wait=False, cancel_futures=False)
        self.reader.shutdown(wait=False, cancel_futures=True)
        flush_records()  # the servers exit at once after this (os._exit): the vouch is current

    # -- indexing ----------------------------------------------------------------------

    def reconcile(self, progress: Progress | None = None) -> IndexReport | None:
        """Bring the index in line with the folder (blocking): every file chunked
        first (lexical search answers over all of them from then on), then the
        missing vectors a slice at a time (hybrid search over the vectors made
        so far). None if the folder closed or indexing failed (state ``error``)."""
        eng = self.engine
        if eng is None or self.closed:
            return None
        self.state, self.message, self.chunked = FolderState.INDEXING, None, False
        self._preload()
        try:
            rep = self._read_all(progress)
            self.chunked = True
            self._embed_all(progress, rep)
            # Vectors of other models are swept only once this one has proven to
            # load: a model that cannot be used leaves the index's vectors alone.
            self._ensure_model(progress)
            rep = self._own(self._finish, rep)
            self._own(eng.warm_up)
            # A long-lived process ranks BM25 from memory (built in the background
            # at the next search; FTS5 answers until then). Not before: the build
            # would compete with opening the folder for the first hybrid answer.
            eng.lexical_side.in_memory = True
        except Cancelled:  # closing: the rest is done at the next start
            return None
        except Exception as exc:  # keep serving what the index holds
            if self.closed:
                return None
            log.exception("indexing %s failed", self.path)
            self.state, self.message = FolderState.ERROR, f"indexing failed: {exc}"
            return None
        self.last_report = rep
        self.settle(rep)
        self.move_in_background()
        return rep

    def move_in_background(self) -> None:
        """An index holding vectors of the other precision: the new vectors
        made a slice at a time on a background thread (the writer runs each
        slice), search on the old ones until the switch (:mod:`precision_move`)."""
        eng = self.engine
        busy = self.closed or self.state != FolderState.READY
        if busy or eng is None or eng.models.mover is None:
            return
        self._start_once("_moving", self._move_rest, "move", "moving %s's vectors")

    def _move_rest(self) -> bool:
        """The move's slices until it is done or the folder closes (a failure:
        the next start resumes it). Whether it is done."""
        eng = self.engine
        assert eng is not None
        while not self.closed and self._own(eng.move_next, EMBED_SLICE):
            pass
        return eng.models.mover is None

    def _read_all(self, progress: Progress | None) -> IndexReport:
        """Every file read, chunked and written, :data:`READ_SLICE` files per job
        on the writer (the files open in an editor first): a save waits for one
        slice, and keyword search covers each slice as it lands."""
        assert self.engine is not None
        return slicing.read_all(
            self.engine, self._own, self.first_files(), READ_SLICE, self._embed_open, progress
        )

    def _embed_open(self, rep: IndexReport) -> None:
        """Between two reading slices: one slice of the open files' vectors,
        once the model (loading in the background) is ready -- they become
        searchable by meaning while the rest of the folder is still read."""
        eng = self.engine
        assert eng is not None
        if self.closed or not eng.models.embedder.loaded or eng.models.embedder.error is not None:
            return
        if opened := self.first_files():
            self._own(eng.embed_files, opened, EMBED_SLICE, rep)

    def _preload(self) -> None:
        slicing.preload(self.engine)

    def _ensure_model(self, progress: Progress | None) -> None:
        assert self.engine is not None
        slicing.ensure_model(self.engine, progress)

    def _finish(self, rep: IndexReport) -> IndexReport:
        """(Writer thread.) Sweep vectors no model of ours uses, count what is left."""
        eng = self.engine
        assert eng is not None
        if rep.lexical_only_reason is None and eng.models.embedder.loaded:
            eng.store.vectors.sweep_vectors(eng.models.model_id, eng.kept_models())
        rep.pending = self.pending = eng.store.vectors.pending_count(eng.models.model_id)
        rep.chunks = eng.store.counts()["chunks"]
        return rep

    def _embed_all(self, progress: Progress | None, rep: IndexReport) -> None:
        """Make the missing vectors, a slice at a time (:meth:`Engine.embed_next`): the
        files open in an editor first; a save or a search waits for one slice at most."""
        self._embedding = True
        try:
            self._embed_slices(progress, rep)
        finally:
            self._embedding = False

    def _embed_slices(self, progress: Progress | None, rep: IndexReport) -> None:
        eng = self.engine
        assert eng is not None
        total = self.pending = self._own(eng.store.vectors.pending_count, eng.models.model_id)
        if not total:
            return
        self._ensure_model(progress)
        if eng.models.embedder.error is not None:  # nothing can be embedded: keywords only
            rep.lexical_only_reason = str(eng.models.embedder.error)
            return
        overall = slicing.folder_progress(progress, total, rep)
        stalled = 0
        while not self.closed:
            before = rep.embedded
            self.pending = self._own(eng.embed_next, EMBED_SLICE, self.first_files(), overall, rep)
            if not self.pending or rep.lexical_only_reason or rep.interrupted:
                break
            stalled = stalled + 1 if rep.embedded == before else 0
            if stalled > 1:
                break

    def chunk_changes(self) -> IndexReport:
        """(Writer thread.) A folder changed (a checkout, a sync, an edit seen by
        a scan): every change chunked now, so keyword search sees it at once;
        the vectors follow in slices (:meth:`embed_in_background`)."""
        eng = self.engine
        assert eng is not None
        return self._finish(eng.index(embed=False))

    def file_saved(self, path: Path) -> IndexReport | None:
        """(Writer thread.) A file saved or changed, the save policy: its chunks
        indexed and their vectors made now (it is searchable by meaning at
        once), its passages' vectors a moment later in the background
        (:meth:`embed_in_background`). None while the index is not open."""
        eng = self.engine
        if eng is None:
            return None
        rep = eng.index_file(path, passages=False)
        if rep.pending:
            self.embed_in_background(rep.pending)
        return rep

    def embed_in_background(self, pending: int = 0) -> None:
        """The vectors that changes left pending (``pending``: that many more,
        a saved file's passages), a slice at a time on a background thread;
        :attr:`on_embedded` is called once they are in."""
        self.pending = max(self.pending, pending)
        if self.closed or self.engine is None or not self.pending:
            return
        self._start_once("_embedding", self._embed_rest, "embed", "embedding %s")

    def _start_once(self, running: str, work: Callable[[], bool], kind: str, doing: str) -> None:
        """``work`` on a daemon thread of its own, unless the one it sets
        ``running`` (the flag's name) for is still going (:meth:`_run`)."""
        with self._embedding_lock:
            if getattr(self, running):
                return
            setattr(self, running, True)
        threading.Thread(
            target=self._run,
            args=(running, work, doing),
            name=f"mdseek-{kind}-{self.name}",
            daemon=True,
        ).start()

    def _run(self, running: str, work: Callable[[], bool], doing: str) -> None:
        """(Its own thread.) ``work``, then the flag ``running`` cleared, and
        :attr:`on_embedded` called if ``work`` says there are new vectors to
        search on. A failure is logged (``doing``: what, ``%s`` the folder)
        unless the folder was closed; the next start tries again."""
        try:
            done = work()
        except Cancelled:
            return
        except Exception as exc:
            if not self.closed:
                log.error("%s failed: %s", doing % self.path, exc)
            return
        finally:
            setattr(self, running, False)
        if done and self.on_embedded is not None:
            self.on_embedded()

    def _embed_rest(self) -> bool:
        """The pending vectors, a slice at a time, then the folder's report
        (a failure: the next change tries again). Whether any were made."""
        rep = IndexReport()
        self._embed_slices(None, rep)
        if not rep.embedded or self.closed:
            return False
        self._own(self._finish, rep)
        return True

    def changed(self) -> bool:
        """For a front end no editor tells of changes (MCP): rechunk the files
        changed on disk now, their vectors in the background. One directory walk
        and a stat per file, skipped for a moment after the last one (20 times
        its duration, at most :data:`FRESH_SECONDS`) and while the first
        reconcile is still reading the folder. Whether anything changed."""
        if self.engine is None or self.closed or not self.chunked:
            return False
        with self._fresh:
            now = time.monotonic()
            if now - self._checked < min(FRESH_SECONDS, SCAN_SHARE * self._scan_seconds):
                return False
            changed = facade.stale(self.engine)
            self._checked = time.monotonic()
            self._scan_seconds = self._checked - now
            if not changed:
                return False
            try:
                self.write(self.chunk_changes)
            except Cancelled:
                return False
        self.embed_in_background()
        return True

    def settle(self, rep: IndexReport | None = None) -> None:
        """The state after indexing: ``lexical-only`` if the model cannot be used."""
        eng = self.engine
        if eng is None:
            return
        err = eng.models.embedder.error
        if err is not None or (rep is not None and rep.lexical_only_reason):
            self.state = FolderState.LEXICAL_ONLY
            self.message = str(err or (rep.lexical_only_reason if rep else ""))
        elif self.state.busy:
            self.state = FolderState.READY

    # -- reading ---------------------------------------------------------------------

    def search(self, request: SearchRequest, token: CancelToken | None = None) -> SearchResponse:
        """Search through :func:`facade.search`. While the folder is indexing,
        meaning (hybrid, dense) once the model is loaded, over the vectors made
        so far (the open files' first, while the rest is still read; a section
        with no vector yet is ranked by its keywords), keywords before, and the
        note says so; otherwise as asked (the engine says why if the model
        cannot be used)."""
        with DEMAND.request():  # bulk embedding drops to one thread meanwhile
            return self._search(request, token)

    def _search(self, request: SearchRequest, token: CancelToken | None) -> SearchResponse:
        if token:
            token.check()
        eng = self.engine
        if eng is None:
            return SearchResponse([], Mode.LEXICAL, self.message)  # completeness: it is opening
        wait = self.state.busy and not eng.models.embedder.loaded
        asked = dataclasses.replace(request, mode=Mode.LEXICAL) if wait else request
        resp = facade.search(eng, asked)
        if wait and request.mode != Mode.LEXICAL and resp.note is None:
            resp.note = "lexical results only: indexing in progress (semantic results once the vectors are ready)"
        if token:
            token.check()
        return resp

    def completeness(self, mode: Mode) -> facade.Completeness:
        """Whether this folder's part of an answer in ``mode`` (the mode asked
        for) is final: not while the folder is read, nor, for a ranking with
        meaning, while chunks wait for a vector (a lexical answer given while
        indexing becomes hybrid then)."""
        eng = self.engine
        if eng is None:
            if self.state == FolderState.ERROR:  # nothing will come: the message says why
                return facade.Completeness(True, None, 0)
            return facade.Completeness(False, "partial results: the index is still opening", 0)
        return facade.completeness(eng, mode, reading=self.state.busy and not self.chunked)

    def related(
        self,
        rel: str,
        slug: str | None,
        start_line: int,
        limit: int,
        unlinked: bool = False,
        fill: bool = True,
    ) -> SearchResponse:
        """Sections elsewhere about the same thing; ``unlinked``: less those the
        section already links to or is linked from (:func:`linked.related`)."""
        if self.engine is None:
            return SearchResponse([], Mode.LEXICAL, self.message)
        with DEMAND.request():
            return linked.related(self.engine, rel, slug, start_line, limit, unlinked, fill)

    def sections_like(
        self, text: str, exclude_rel: str | None, limit: int, unlinked_line: int | None = None
    ) -> SearchResponse:
        """Sections outside ``exclude_rel`` like a passage; ``unlinked_line``: less
        those the section of ``exclude_rel`` holding that line is linked with."""
        if self.engine is None or not text.strip():
            return SearchResponse([], Mode.LEXICAL, self.message)
        dense = self.state == FolderState.READY
        return linked.sections_like(
            self.engine, text, limit, exclude_rel, unlinked_line, dense=dense
        )

    def read_document(self, path: str) -> ParsedDocument:
        """A file of the folder as a client names it, parsed from disk
        (:func:`facade.read_document`: OutsideRoot, NotIndexed)."""
        if self.engine is None:
            raise facade.NotIndexed(f"{path}: the folder's index is not open ({self.message})")
        return facade.read_document(self.engine, path)

    def heading_as_written(self, result: SearchResult) -> str:
        """A result's heading as the file writes it (:func:`facade.heading_as_written`)."""
        eng = self.engine
        return result.heading if eng is None else facade.heading_as_written(eng, result)

    def near_duplicates(self, rel: str) -> list[NearDuplicate]:
        """The sections of ``rel`` that another section says again (:mod:`.near`)."""
        return [] if self.engine is None else near.near_duplicates(self.engine, rel)

    def status(self, own: bool = True) -> Status:
        """The index's status (:meth:`Engine.status`) with the folder's fields
        (``own`` False: the index's alone, as ``mdseek status`` prints it)."""
        eng = self.engine
        if eng is not None and not own:
            return eng.status()
        if eng is None:  # not open (yet, or it cannot be): nothing counted
            st = Status(root=str(self.path), index_path="", model=self.model_setting or "")
            fit, embedded = 1.0, 0
        else:
            st = eng.status()
            fit, embedded = window_fraction(eng), eng.models.embedder.texts_embedded
        return dataclasses.replace(
            st, window_fit=fit, embedded_total=embedded, state=self.state, message=self.message
        )
