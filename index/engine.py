"""The engine facade: one workspace root, one index file, one model.

``Engine`` ties parsing, chunking, the SQLite store, the embedder and the dense
matrix together. The command line and the language server call only this.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import retrieve
from .chunk import Chunk, Chunker
from .dense import DenseIndex
from .embed import Embedder, EmbedSettings
from .files import FileFilter, FoundFile, check_file, display_path, relpath, scan
from .lexical import LexicalIndex, Phrase
from .location import FILE_MODE, locate, prepare, prune_orphans_daily
from .model import (
    ModelTokenizer,
    ModelUnavailable,
    default_model_path,
    load_tokenizer,
    minus_prompt,
)
from .parse import ParsedDocument, parse_bytes
from .requests import filter_from_spec, filter_spec
from .rerank import Reranker
from .snippet import plain_text, snippet
from .store import SectionRow, Store
from .vectors_file import (
    ImportReport,
    VectorsFileError,
    export_vectors,
    import_vectors,
    read_vectors,
)

log = logging.getLogger(__name__)

EMBED_BATCH = 64
LOCK_POLL = 0.2  # seconds between checks for cancellation while waiting for the embed lock
PARSED_KEPT = 16  # parsed documents kept for incremental re-parsing on save
# Chunks from which a long-lived process ranks BM25 from memory. Below, FTS5
# is about as fast (1.2 ms both at 1k chunks; 11.3 vs 1.7 ms at 10k) and runs
# beside the query's embedding, while building the postings holds the GIL
# (0.2 s at 2k chunks) and slowed the first searches after a folder opened.
LEXICAL_IN_MEMORY_MIN = 5000

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class IndexReport:
    files: int = 0  # files in the workspace that are indexed
    indexed: int = 0  # files (re)chunked this run
    unchanged: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0  # chunks in the index after the run
    chunks_written: int = 0  # chunks (re)written this run
    embedded: int = 0  # texts embedded this run
    pending: int = 0  # chunks still without a vector
    seconds: float = 0.0
    embed_seconds: float = 0.0
    chunk_seconds: float = 0.0  # parsing and chunking
    write_seconds: float = 0.0  # SQLite writes of documents
    lexical_only_reason: str | None = None
    interrupted: bool = False  # embedding was cancelled; the rest is pending
    lock_wait_seconds: float = 0.0  # waited for another process embedding into this index
    vectors_taken: int = 0  # vectors taken from a team's vectors file (Engine.index(vectors=...))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SearchResult:
    path: str
    heading: str
    breadcrumb: str
    level: int
    slug: str
    start_line: int  # section span, 0-based, end exclusive
    end_line: int
    heading_line: int
    heading_end_line: int
    score: float
    lexical_rank: int | None
    dense_rank: int | None
    snippet: str
    explain: dict | None = None  # score parts, when asked (Engine.search(explain=True))

    def to_dict(self) -> dict:
        d = asdict(self)
        if d["explain"] is None:
            del d["explain"]
        return d

    def lines(self) -> tuple[int, int]:
        """(first, last) line of the section, 1-based and inclusive: what people,
        the CLI's JSON, MCP and ``mdseek/search`` show (the engine is 0-based, end exclusive)."""
        return self.start_line + 1, max(self.start_line + 1, self.end_line)

    def heading_lines(self) -> tuple[int, int]:
        """(first, last) line of the heading itself, 1-based and inclusive."""
        return self.heading_line + 1, max(self.heading_line + 1, self.heading_end_line)


@dataclass
class SearchResponse:
    results: list[SearchResult]
    mode: str  # "hybrid", "lexical" or "dense"
    note: str | None = None


MAX_QUERY_CHARS = 4096  # far beyond the model's window; every word of it is read (see retrieve)
_UNSEARCHABLE = re.compile("[\x00\ud800-\udfff]")


def clean_query(query: str | None) -> str:
    """Query text anything can search: lone surrogates (pasted text, a non-UTF-8
    argv) and NUL become spaces, so the rest of the query is still searched;
    capped at MAX_QUERY_CHARS."""
    return _UNSEARCHABLE.sub(" ", (query or "")[:MAX_QUERY_CHARS])


class Engine:
    def __init__(
        self,
        root: str | Path,
        index_path: str | Path | None = None,
        model: str | None = None,
        file_filter: FileFilter | None = None,
        chunk_budget: int | None = None,
        chunk_floor: int | None = None,
        embed: EmbedSettings | None = None,
        check_index: bool = True,
    ):
        """``check_index``: SQLite's quick_check on open (see :class:`Store`; ~9 ms
        at 2k chunks, 0.5-1.7 s at 100k). A one-shot search skips it and says
        how to recover if it meets damage (:func:`store.is_damage`)."""
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"{self.root} is not a folder")
        self.location = locate(self.root, index_path)
        prepare(self.location)  # no symlinks; a private folder
        if self.location.kind == "cache":
            prune_orphans_daily()  # indexes of deleted folders, once a day, quietly
        self.index_path = self.location.path
        self.filter = file_filter or FileFilter()
        self.embedder = Embedder(model, settings=embed)
        self.reranker: Reranker | None = None  # an optional second stage (index/rerank.py)
        self._chunk_budget = chunk_budget
        self._chunk_floor = chunk_floor
        self._chunker: Chunker | None = None
        self.store = Store(self.index_path, recover=self.location.owned, check=check_index)
        # What the user should hear about opening the index (a file set aside, a migration).
        self.notices: list[str] = [n for n in (self.location.notice, self.store.notice) if n]
        self.cancelled = threading.Event()  # set by cancel(): embedding stops between batches
        self.dense = DenseIndex()
        self._dense_version: int | None = None  # data_version the matrix reflects
        self._write = threading.RLock()
        self._file_lock: Any = None  # see _embed_lock
        self._file_lock_guard = threading.Lock()
        self._failed: dict[
            str, tuple[int, int, int]
        ] = {}  # rel -> (size, mtime, ctime) that failed
        self._orphans: set[str] = set()  # text hashes of deleted chunks, swept later
        self._queue: list[str] | None = None  # pending text hashes for embed_next, longest first
        self._parsed: dict[str, ParsedDocument] = {}  # recently indexed documents, oldest first
        self._warned_lexical = False
        self.embed_batch = EMBED_BATCH  # chunks per embed call and per vector commit
        self.ranking = retrieve.DEFAULT  # fusion and document-context settings
        self.fts_weights = retrieve.FTS_WEIGHTS
        self.max_df = retrieve.MAX_DF  # lexical: words in more of the chunks are left out
        self.emphasise_question = True  # long queries: the question counts twice
        self._rows = 0
        self._count_version: int | None = None  # data_version the chunk count reflects
        # Long-lived processes (server, MCP) rank lexical candidates from memory:
        # FTS5's BM25, same scores, without scoring every matching row in SQLite.
        self.lexical_in_memory = False
        self.lexical_in_memory_min = LEXICAL_IN_MEMORY_MIN  # chunks; FTS5 below
        self.lexical = LexicalIndex()
        self._lexical_version: int | None = None  # data_version it reflects; None: not built
        self._lexical_lock = threading.Lock()
        self._lexical_thread: threading.Thread | None = None
        self._threads: ThreadPoolExecutor | None = (
            None  # a query's lexical side, beside its embedding
        )

    def stored_filter(self) -> FileFilter | None:
        """The filter the index was last built with (None: never said, or unreadable)."""
        raw = self.store.get_meta("file_filter")
        try:
            return filter_from_spec(json.loads(raw)) if raw else None
        except ValueError:
            return None

    def _pool(self) -> ThreadPoolExecutor:
        with self._lexical_lock:
            if self._threads is None:
                self._threads = ThreadPoolExecutor(2, thread_name_prefix="mdseek-query")
            return self._threads

    def cancel(self) -> None:
        """Stop embedding at the next batch boundary (for good: the engine is closing)."""
        self.cancelled.set()

    def close(self) -> None:
        self.cancel()
        if self._threads is not None:
            self._threads.shutdown(wait=True)
        self.store.close()

    # -- model-dependent parts ----------------------------------------------

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def tokenizer(self) -> ModelTokenizer:
        """The model's tokenizer; if the model cannot be loaded, the bundled
        default's (so chunking and lexical search still work), said once."""
        try:
            return minus_prompt(
                load_tokenizer(self.embedder.resolved), self.embedder.prompts.document
            )
        except ModelUnavailable as exc:
            if self.embedder.error is None:
                self.embedder._error = exc
                log.error(
                    "%s; chunking with the bundled default tokenizer, lexical search only", exc
                )
            return load_tokenizer(str(default_model_path()))

    @property
    def chunker(self) -> Chunker:
        if self._chunker is None:
            kw = {} if self._chunk_floor is None else {"floor": self._chunk_floor}
            self._chunker = Chunker(self.tokenizer, budget=self._chunk_budget, **kw)
        return self._chunker

    # -- indexing -------------------------------------------------------------

    def rel(self, path: str | Path) -> str:
        p = Path(path)
        if p.is_absolute():
            return relpath(self.root, p)
        return p.as_posix()

    def index(
        self,
        progress: Progress | None = None,
        embed: bool = True,
        vectors: str | Path | None = None,
    ) -> IndexReport:
        """Reconcile the index with the folder: new and changed files are chunked,
        deleted (and renamed-away) files swept, then missing vectors taken from
        the ``vectors`` file if given (:meth:`seed_vectors`), the rest embedded."""
        t0 = time.perf_counter()
        rep = IndexReport()
        with self._write:
            known = self.store.documents()
            found = list(scan(self.root, self.filter, rep.skipped))
            rep.files = len(found)
            seen = {f.rel for f in found}
            gone = [p for p in known if p not in seen]
            if gone:
                self._delete(gone)
                rep.removed = len(gone)
            for n, f in enumerate(found, 1):
                if self.cancelled.is_set():
                    rep.interrupted = True
                    break
                if progress:
                    progress("parse", n, len(found))
                self._index_found(f, known.get(f.rel), rep)
            self.store.set_meta("root", str(self.root))
            self.store.set_meta("file_filter", json.dumps(filter_spec(self.filter)))
            self._queue = None  # embed_next reads what is pending now
            self._lexical_current()  # patched, or (re)built in the background
            if vectors is not None:
                rep.vectors_taken = self.seed_vectors(vectors).taken
            if embed:
                self.embed_pending(progress, rep)
                # The sweep reads every vector row: only after a run that changed
                # something (a write, a removal, new vectors, another model's).
                changed = rep.removed or rep.chunks_written or rep.embedded or self._orphans
                if rep.lexical_only_reason is None and changed:
                    self.store.sweep_vectors(self.model_id)
                    self._orphans.clear()
            rep.pending = self.store.pending_count(self.model_id)
            rep.chunks = self.store.counts()["chunks"]
        rep.seconds = time.perf_counter() - t0
        return rep

    def _index_found(self, f: FoundFile, old, rep: IndexReport, data: bytes | None = None) -> bool:
        chunker = self.chunker
        if (
            data is None
            and old is not None
            and old.size == f.size
            and old.mtime_ns == f.mtime_ns
            and old.chunker == chunker.signature
        ):
            rep.unchanged += 1
            return False
        if data is None and self._failed.get(f.rel) == (f.size, f.mtime_ns, f.ctime_ns):
            rep.errors.append((f.rel, "unchanged since it failed (retried when it changes)"))
            return False
        try:
            if data is None:
                data = f.path.read_bytes()
            digest = hashlib.sha1(data).hexdigest()
            if old is not None and old.hash == digest and old.chunker == chunker.signature:
                self.store.touch_document(old.id, f.size, f.mtime_ns)
                rep.unchanged += 1
                return False
            t0 = time.perf_counter()
            parsed = parse_bytes(data, f.rel, previous=self._parsed.pop(f.rel, None))
            chunks = chunker.chunk(parsed)
            rep.chunk_seconds += time.perf_counter() - t0
        except Exception as exc:  # one bad file costs only itself
            self._file_failed(f, exc, rep)
            return False
        self._failed.pop(f.rel, None)
        self._parsed[f.rel] = parsed  # the next save of this file parses only around its edit
        while len(self._parsed) > PARSED_KEPT:
            self._parsed.pop(next(iter(self._parsed)))
        t0 = time.perf_counter()
        written = self._write_doc(parsed, chunks, f.size, f.mtime_ns, digest)
        rep.write_seconds += time.perf_counter() - t0
        rep.indexed += 1
        rep.chunks_written += written
        return True

    def _file_failed(self, f: FoundFile, exc: BaseException, rep: IndexReport) -> None:
        """One log line (path and reason; the traceback only at debug level); the
        file keeps its last indexed version and is retried when it changes."""
        reason = (
            f"cannot read: {exc.strerror or exc}"
            if isinstance(exc, OSError)
            else f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(
                ": "
            )
        )
        shown = display_path(f.rel)
        log.warning("skipping %s: %s", shown, reason)
        log.debug("skipping %s", shown, exc_info=exc)
        self._failed[f.rel] = (f.size, f.mtime_ns, f.ctime_ns)
        rep.errors.append((f.rel, reason))

    def _write_doc(
        self, parsed: ParsedDocument, chunks: list[Chunk], size: int, mtime_ns: int, digest: str
    ) -> int:
        """Write one document (its unchanged chunks keep their rows); returns the
        number of chunk rows inserted."""
        removed, new_ids = self.store.replace_document(
            parsed, chunks, size, mtime_ns, digest, self.chunker.signature
        )
        self._count_version = None
        self._forget(removed)
        if self._dense_version is not None and new_ids:
            ids, mat = self.store.chunk_vectors(self.model_id, new_ids)
            self.dense.add(ids, mat)
        return len(new_ids)

    def _forget(self, chunk_ids: list[int]) -> None:
        self._count_version = None
        if self._dense_version is not None:
            self.dense.remove(chunk_ids)

    def _delete(self, paths: list[str]) -> None:
        """Drop documents; their vectors stay until the next write or sweep (a
        renamed file's new name finds them), then go if no chunk uses them."""
        removed = self.store.delete_documents(paths)
        self._forget([i for i, _ in removed])
        self._orphans.update(h for _, h in removed)

    def index_file(self, path: str | Path, embed: bool = True) -> IndexReport:
        """Reindex one file (e.g. on save); a file that is gone or excluded is removed.
        Vectors no chunk uses any more are dropped (those of this file's old
        version at once, those of deleted files at the next write)."""
        t0 = time.perf_counter()
        rep = IndexReport()
        p = Path(path)
        if not p.is_absolute():
            p = self.root / p
        with self._write:
            orphans, self._orphans = self._orphans, set()
            rel = self.rel(p)
            old = self.store.document(rel)
            found = check_file(
                self.root, p, self.filter, lambda r, why: rep.skipped.append((r, why))
            )
            if found is None or not self.filter.wants(rel):
                if old is not None:
                    self._delete([rel])
                    rep.removed = 1
            else:
                rep.files = 1
                self._index_found(found, old, rep)
            self.store.drop_orphan_vectors(orphans)
            self._lexical_current()  # searchable by its words now, before embedding
            hashes = self.store.document_hashes(rel)
            cleared = embed and self._embed(None, rep, hashes)[1]
            rep.pending = 0 if cleared else len(self.store.pending_for(self.model_id, hashes))
        rep.seconds = time.perf_counter() - t0
        return rep

    def embed_pending(
        self,
        progress: Progress | None = None,
        rep: IndexReport | None = None,
        only: set[str] | None = None,
    ) -> int:
        """Embed every chunk that has no vector for the current model (given
        ``only``, the chunks of those text hashes: a saved file's, which is
        quicker to find than all pending chunks of a big index).

        One process embeds into an index at a time (a lock file beside it): a
        second one waits, then embeds only what is still missing, so chunks the
        first one embedded are reused, never embedded twice. :meth:`cancel`
        stops the run between batches (what is committed stays)."""
        return self._embed(progress, rep or IndexReport(), only)[0]

    def _embed(
        self, progress: Progress | None, rep: IndexReport, only: set[str] | None
    ) -> tuple[int, bool]:
        """(texts embedded, whether nothing was left pending)."""
        if self.cancelled.is_set():
            return 0, False
        pending = self._pending(only)
        if not pending:
            return 0, True
        try:
            self.embedder.load()
        except ModelUnavailable as exc:
            rep.lexical_only_reason = str(exc)
            return 0, False
        with self._embed_turn(progress, rep) as turn:
            if not turn:
                rep.interrupted = True
                return 0, False
            # Not kept waiting: nobody embedded meanwhile (a race costs one duplicate vector).
            done = self._embed_batches(
                progress, rep, only, None if rep.lock_wait_seconds else pending
            )
            return done, done == len(pending) and not rep.interrupted

    def seed_vectors(self, path: str | Path) -> ImportReport:
        """Take the vectors of a file made by ``export_vectors`` (see
        :mod:`vectors_file`) for the chunks still waiting for one: same model
        id, same dimension, finite, unit length; never any text. Raises
        VectorsFileError (one line) for a file that is not one."""
        data = read_vectors(Path(path))  # a file that is not one fails before the model loads
        dim = self.embedder.dim if self.embedder.available() else None
        if dim is None:
            raise VectorsFileError(
                f"cannot check the vectors' size without the model ({self.embedder.error})"
            )
        with self._write:
            rep = import_vectors(self.store, self.model_id, dim, data)
        self._queue = None
        if rep.model_in_file != self.model_id:
            log.warning(
                "%s holds vectors of %s, not %s: none taken", path, rep.model_in_file, self.model_id
            )
        elif rep.rejected:
            log.warning(
                "%s: %d vectors rejected (wrong size, not finite or not unit length)",
                path,
                rep.rejected,
            )
        return rep

    def export_vectors(self, path: str | Path) -> int:
        """Write the vectors the index uses (for ``seed_vectors`` elsewhere); returns how many."""
        return export_vectors(self.store, self.model_id, Path(path))

    def embed_next(
        self,
        limit: int,
        first: Iterable[str] = (),
        progress: Progress | None = None,
        rep: IndexReport | None = None,
    ) -> int:
        """Embed up to ``limit`` of the pending chunk texts and return how many
        are still pending: those of the files ``first`` (open in the editor)
        before the rest, the rest shortest first (a heading or a short section
        is searchable by meaning soonest, and similar lengths pad least).

        A long first index runs as a series of these calls, so that a save, a
        search or a folder change waits for one slice, not for the whole
        index. The order is read from the index once and kept until the next
        reconcile; each slice re-checks what is still missing, so vectors made
        meanwhile (a save, another process) are never made twice."""
        rep = rep or IndexReport()
        if self.cancelled.is_set():
            return self.store.pending_count(self.model_id)
        take: dict[str, None] = {}
        for rel in first:
            for h, _ in self.store.pending_for(self.model_id, self.store.document_hashes(rel)):
                if len(take) < limit:
                    take[h] = None
        if self._queue is None:
            pending = self.store.pending_chunks(self.model_id)
            counts = self.embedder.token_counts([t for _, t in pending])
            self._queue = [
                pending[i][0] for i in sorted(range(len(pending)), key=counts.__getitem__)
            ]
            self._queue.reverse()  # popped from the end: shortest first
        queue = self._queue
        while len(take) < limit and queue:
            want = [queue.pop() for _ in range(min(limit - len(take), len(queue)))]
            still = {h for h, _ in self.store.pending_for(self.model_id, want)}
            take.update((h, None) for h in want if h in still)
        if take:
            self._embed(progress, rep, set(take))
        if queue or rep.interrupted:
            return len(queue) + (len(take) if rep.interrupted else 0)
        self._queue = None  # the slices are done: count what a change made meanwhile
        return self.store.pending_count(self.model_id)

    def _pending(self, only: set[str] | None) -> list[tuple[str, str]]:
        if only is None:
            return self.store.pending_chunks(self.model_id)
        return self.store.pending_for(self.model_id, only)

    def _embed_batches(
        self, progress: Progress | None, rep: IndexReport, only: set[str] | None,
        pending: list[tuple[str, str]] | None = None,
    ) -> int:  # fmt: skip
        if pending is None:
            pending = self._pending(only)  # after a wait: what is left
        # Similar token counts in one batch pad less (the store returns hash order).
        counts = self.embedder.token_counts([t for _, t in pending])
        pending = [pending[i] for i in sorted(range(len(pending)), key=counts.__getitem__)]
        t0 = time.perf_counter()
        done = 0
        for i in range(0, len(pending), self.embed_batch):
            if self.cancelled.is_set():
                rep.interrupted = True
                log.info("embedding stopped with %d chunks left", len(pending) - done)
                break
            batch = pending[i : i + self.embed_batch]
            hashes = [h for h, _ in batch]
            vecs = self.embedder.encode([t for _, t in batch])
            with self._write:
                self.store.put_vectors(self.model_id, hashes, vecs)
                if self._dense_version is not None:
                    ids, mat = self.store.chunk_vectors_for_hashes(self.model_id, hashes)
                    self.dense.add(ids, mat)
            done += len(batch)
            if progress:
                progress("embed", done, len(pending))
        rep.embedded += done
        rep.embed_seconds += time.perf_counter() - t0
        return done

    @property
    def _embed_lock(self) -> Any:
        """One embedder per index across processes: a second one waits, then
        finds the vectors made (pending is re-read under the lock). Made on
        first use: a search that embeds nothing does not import filelock."""
        with self._file_lock_guard:
            if self._file_lock is None:
                from filelock import FileLock

                self._file_lock = FileLock(
                    str(self.index_path) + ".lock", mode=FILE_MODE, thread_local=False
                )
            return self._file_lock

    @contextmanager
    def _embed_turn(self, progress: Progress | None, rep: IndexReport) -> Iterator[bool]:
        """Hold the index's embed lock (waiting for another process if needed);
        yields False if cancelled while waiting."""
        from filelock import Timeout

        t0 = time.perf_counter()
        locked = waited = False
        try:
            while not self.cancelled.is_set():
                try:
                    self._embed_lock.acquire(timeout=LOCK_POLL if waited else 0)
                    locked = True
                    break
                except Timeout:
                    if not waited:
                        waited = True
                        log.info("another process is embedding into %s; waiting", self.index_path)
                        if progress:
                            progress("wait", 0, 1)
                    rep.lock_wait_seconds = time.perf_counter() - t0
                except OSError as exc:  # a file system without locks: embed anyway
                    log.warning(
                        "cannot lock %s (%s); embedding without it", self._embed_lock.lock_file, exc
                    )
                    break
            else:
                yield False
                return
            yield True
        finally:
            if locked:
                self._embed_lock.release()

    # -- dense matrix ---------------------------------------------------------

    def _sync_dense(self) -> None:
        """Load the matrix once; reload only when another process changed the file."""
        v = self.store.data_version()
        if self._dense_version == v:
            return
        with self._write:
            ids, mat = self.store.chunk_vectors(self.model_id)
            self.dense.reset(ids, mat)
            self._dense_version = v

    # -- search ---------------------------------------------------------------

    def build_lexical(self) -> float:
        """(Re)build the in-memory BM25 postings from the index (see
        :mod:`lexical`); returns the seconds it took. Writes made meanwhile by
        this process are applied at the next search; by another, start a rebuild."""
        t0 = time.perf_counter()
        version = self.store.data_version()
        self.store.take_fts_touched()  # what was written so far is in the snapshot
        fresh = LexicalIndex()
        fresh.reset(self.store.read_postings())
        with self._lexical_lock:
            self.lexical = fresh
            self._lexical_version = version
        log.debug(
            "lexical postings of %d chunks read in %.2fs", len(fresh), time.perf_counter() - t0
        )
        return time.perf_counter() - t0

    def _start_lexical_build(self) -> None:
        if self._lexical_thread is not None and self._lexical_thread.is_alive():
            return

        def build() -> None:
            try:
                self.build_lexical()
            except Exception as exc:  # FTS5 keeps answering; say why once
                log.warning("in-memory lexical ranking unavailable: %s", exc)
                self.lexical_in_memory = False

        self._lexical_thread = threading.Thread(target=build, name="mdseek-lexical", daemon=True)
        self._lexical_thread.start()

    def _lexical_current(self) -> bool:
        """Is the in-memory BM25 usable now? Applies this process's own writes;
        after a write by another process (or a batch too big to patch) it is
        rebuilt in the background, and FTS5 answers meanwhile."""
        if not self.lexical_in_memory:
            return False
        if self._chunk_count() < self.lexical_in_memory_min:
            self.store.take_fts_touched()  # FTS5 answers; nothing to patch later
            with self._lexical_lock:
                if self._lexical_version is not None:  # the folder shrank: free the postings
                    self.lexical, self._lexical_version = LexicalIndex(), None
            return False
        with self._lexical_lock:
            if self._lexical_version is None or self._lexical_version != self.store.data_version():
                self._lexical_version = None
                self._start_lexical_build()
                return False
            touched = self.store.take_fts_touched()
            if len(touched) > max(2000, len(self.lexical) // 5):
                self._lexical_version = None
                self._start_lexical_build()
                return False
            if touched:
                self.lexical.refresh(touched, self.store.row_postings(touched))
            return True

    def lexical_terms(
        self,
        query: str,
        prefix_last: bool = False,
        question: bool = True,
        word_terms: dict[str, list[str]] | None = None,
    ) -> retrieve.QueryTerms:
        """The words the lexical retriever searches for (see :func:`retrieve.analyse_query`):
        stop words out, words in more than half of the chunks out (they cannot
        change a BM25 order), everything else kept however long the query.
        ``word_terms`` (word -> its index terms): count chunks in memory."""
        words = retrieve.query_words(query)
        df: dict[str, int] | None = None
        rows = 0
        if len(words) > 1:
            if word_terms is not None:
                per = self.lexical.doc_freq({t for w in words for t in word_terms.get(w, [])})
                df = {w: min((per[t] for t in word_terms.get(w, [])), default=0) for w in words}
                rows = len(self.lexical)
            else:
                df = self.store.term_doc_freq(words)
                rows = self._chunk_count()
        return retrieve.analyse_query(
            query,
            prefix_last=prefix_last,
            doc_freq=df,
            rows=rows,
            max_df=self.max_df,
            question=question and self.emphasise_question,
        )

    def _lexical_hits(
        self, query: str, prefix_last: bool, question: bool
    ) -> tuple[retrieve.QueryTerms, list[tuple[int, float]]]:
        """The lexical retriever: terms, then the best chunks by BM25 (from memory
        when it is current and every word is one index term, else FTS5)."""
        k = self.ranking.candidates
        if self._lexical_current():
            words = retrieve.query_words(query)
            word_terms = dict(zip(words, self.store.word_terms(words), strict=True))
            terms = self.lexical_terms(query, prefix_last, question, word_terms)
            phrases = [word_terms[w] for w in terms.words + terms.emphasis]
            prefix = word_terms.get(terms.prefix, []) if terms.prefix else None
            if all(len(p) == 1 for p in phrases) and (prefix is None or len(prefix) == 1):
                match = [Phrase(p[0]) for p in phrases] + (
                    [Phrase(prefix[0], True)] if prefix else []
                )
                return terms, self.lexical.search(match, k, self.fts_weights)
        else:
            terms = self.lexical_terms(query, prefix_last, question)
        return terms, self.store.fts_search(terms.match(), k, self.fts_weights)

    def _prefetch(self) -> None:
        """What a search needs besides the model -- the snippet parser, the
        vector matrix -- read while the model loads. Never raises: whatever
        fails here fails again, and is reported, in the search."""
        try:
            plain_text("*warm* up")
            self._sync_dense()
        except Exception as exc:  # noqa: BLE001 - an optimisation only
            log.debug("prefetch skipped: %s", exc)

    def warm_up(self) -> None:
        """Pay a first search's one-time costs now (:meth:`_prefetch`, and the
        model's first run: ONNX Runtime allocates on it), so the first query a
        user makes is as fast as the next."""
        self._prefetch()
        try:
            if self.embedder.loaded and self.embedder.error is None:
                self.embedder.encode(["warm up the model"], _count=False)
        except Exception as exc:  # noqa: BLE001 - the search reports it
            log.debug("warm-up skipped: %s", exc)

    def query_vector(self, query: str) -> np.ndarray:
        """The query's unit vector; for a long query with a question
        (:func:`retrieve.question_of`), the mean of the whole text's and the
        question's vectors, so the context cannot drown what is asked."""
        qv = self.embedder.encode_query(query)
        q = retrieve.question_of(query) if self.emphasise_question else None
        if q:
            m = qv + self.embedder.encode_query(q)
            qv = (m / (np.linalg.norm(m) or 1.0)).astype(np.float32)
        return qv

    def _chunk_count(self) -> int:
        """Chunks in the index, recounted after a write (here or by another process)."""
        v = self.store.data_version()
        if self._count_version != v:
            self._rows = self.store.chunk_count()
            self._count_version = v
        return self._rows

    def candidates(
        self,
        query: str,
        mode: str,
        prefix_last: bool = False,
        query_vector: np.ndarray | None = None,
        question: bool = True,
        lexical: tuple[retrieve.QueryTerms, list[tuple[int, float]]] | None = None,
    ) -> tuple[
        dict[str, list[tuple[int, float]]], dict[str, dict[int, float]], retrieve.QueryTerms | None
    ]:
        """Each retriever's best chunks, (chunk id, score) best first, and the
        dense score of every lexical candidate (exact: one row each).
        ``lexical``: the lexical side's answer, when already computed."""
        lists: dict[str, list[tuple[int, float]]] = {}
        extra: dict[str, dict[int, float]] = {}
        terms = None
        k = self.ranking.candidates
        if mode in ("hybrid", "lexical"):
            terms, lists["lexical"] = lexical or self._lexical_hits(query, prefix_last, question)
        if mode in ("hybrid", "dense") and query_vector is not None:
            self._sync_dense()
            lists["dense"] = self.dense.search(query_vector, k)
            if "lexical" in lists:
                seen = {cid for cid, _ in lists["dense"]}
                ids = [cid for cid, _ in lists["lexical"] if cid not in seen]
                extra["dense"] = self.dense.scores(query_vector, ids)
        return lists, extra, terms

    def search(
        self,
        query: str,
        limit: int = 10,
        mode: str = "hybrid",
        prefix_last: bool = False,
        wait_for_model: bool = True,
        exclude_path: str | None = None,
        seed_vector: np.ndarray | None = None,
        explain: bool = False,
    ) -> SearchResponse:
        """Sections ranked for ``query``; ``explain`` adds each result's score parts."""
        query = clean_query(query)
        if seed_vector is None and not prefix_last and query.strip():
            weak = retrieve.unsearchable(query)
            if weak is not None:  # nothing to rank by: say so instead of confident scores
                return SearchResponse([], "lexical" if mode == "lexical" else mode, weak)
        note = None
        use_dense = mode in ("hybrid", "dense") and (query.strip() or seed_vector is not None)
        lexical: Future | None = None
        if use_dense and mode == "hybrid" and seed_vector is None:
            # The lexical side runs while the model loads (a cold start) and embeds the query.
            lexical = self._pool().submit(self._lexical_hits, query, prefix_last, True)
        if use_dense and not self.embedder.loaded:
            if wait_for_model and self.embedder.error is None:
                self._pool().submit(self._prefetch)
                self.embedder.available()
            if not self.embedder.loaded:
                use_dense = False
                err = self.embedder.error
                note = (
                    f"lexical results only: {err}"
                    if err
                    else "lexical results only: the embedding model is still loading"
                )
                if err and not self._warned_lexical:
                    log.warning("%s", note)
                    self._warned_lexical = True
        qv = None
        if use_dense:
            qv = seed_vector if seed_vector is not None else self.query_vector(query)
        lexical_mode = "hybrid" if mode == "hybrid" else mode
        if mode == "hybrid" and qv is None:
            lexical_mode = "lexical"
        # A section's own text (related sections) has no question to emphasise.
        lists, extra, terms = self.candidates(
            query, lexical_mode, prefix_last, qv, question=seed_vector is None,
            lexical=lexical.result() if lexical is not None else None,
        )  # fmt: skip
        all_ids = {cid for hits in lists.values() for cid, _ in hits} | {
            cid for e in extra.values() for cid in e
        }
        spans = self.store.chunk_spans(all_ids)
        chunk_info = {
            cid: (doc_id, first, last)
            for cid, (doc_id, path, first, last) in spans.items()
            if exclude_path is None or path != exclude_path
        }
        unscored = None
        if "dense" in lists and "lexical" in lists:  # chunks with no vector yet (a first index)
            have = {cid for cid, _ in lists["dense"]} | set(extra.get("dense", {}))
            unscored = {"dense": {cid for cid, _ in lists["lexical"] if cid not in have}}
        ranked = retrieve.rank_sections(
            lists, chunk_info, self.ranking, extra, terms.bm25_max if terms else None, unscored
        )
        if seed_vector is None and len(lists) == 2:
            # hybrid: what meaning alone found weakly is left out (lexical and dense
            # rankings, and related sections, are shown whole)
            floor = retrieve.floor_for(self.model_id, self.ranking)
            ranked, cut = retrieve.apply_floor(ranked, floor)
            if cut and len(ranked) < limit:
                why = retrieve.floor_note(len(ranked), cut, floor)
                note = f"{note}; {why}" if note else why
        reranked: dict[int, float] = {}
        if self.reranker is not None and seed_vector is None and query.strip() and ranked:
            ranked, reranked = self.reranker.reorder(query, ranked, self._passages)
        ranked = ranked[: max(0, limit)]
        sections = self.store.sections([f.key for f in ranked])
        texts = self.store.chunk_texts(f.best_chunk for f in ranked if f.best_chunk is not None)
        words = retrieve.query_terms(query)
        results = []
        for f in ranked:
            s = sections.get(f.key)
            if s is None:
                continue
            cid = f.best_chunk
            r = self._result(s, f, texts.get(cid, "") if cid is not None else "", words)
            if explain:
                r.explain = f.explain(self.ranking)
                if terms is not None:
                    r.explain["query_terms"] = terms.words + (
                        [terms.prefix + "*"] if terms.prefix else []
                    )
                    r.explain["dropped_terms"] = terms.dropped
                    if terms.emphasis:
                        r.explain["question_terms"] = terms.emphasis
                if reranked and self.reranker is not None:
                    r.explain["rerank"] = {
                        "score": None if id(f) not in reranked else round(reranked[id(f)], 6),
                        "ms": self.reranker.stats()["last_ms"],
                    }
            results.append(r)
        used = "hybrid" if len(lists) == 2 else ("dense" if "dense" in lists else "lexical")
        return SearchResponse(results, used, note)

    def _passages(self, ranked: Sequence[retrieve.Scored]) -> list[str]:
        """What a reranker reads of each section: breadcrumb, blank line, best chunk."""
        sections = self.store.sections([f.key for f in ranked])
        texts = self.store.chunk_texts(f.best_chunk for f in ranked if f.best_chunk is not None)
        out = []
        for f in ranked:
            s = sections.get(f.key)
            text = texts.get(f.best_chunk, "") if f.best_chunk is not None else ""
            out.append(f"{s.breadcrumb}\n\n{text}" if s is not None else text)
        return out

    @staticmethod
    def _result(s: SectionRow, f: retrieve.Scored, text: str, terms: list[str]) -> SearchResult:
        return SearchResult(
            path=s.path,
            heading=s.heading,
            breadcrumb=s.breadcrumb,
            level=s.level,
            slug=s.slug,
            start_line=s.start_line,
            end_line=s.end_line,
            heading_line=s.start_line,
            heading_end_line=s.heading_end_line,
            score=round(f.score, 6),
            lexical_rank=f.ranks.get("lexical"),
            dense_rank=f.ranks.get("dense"),
            # never empty: a section of only a heading (or a list of links) shows its heading
            snippet=snippet(text, terms) or s.heading or s.breadcrumb,
        )

    def related(self, path: str, ordinal: int, limit: int = 5) -> SearchResponse:
        """Sections elsewhere in the workspace about the same topic as one section:
        hybrid retrieval seeded with the section itself (its text as the lexical
        query, the mean of its chunk vectors as the dense query)."""
        rel = self.rel(path)
        chunks = [
            c
            for c in self.store.document_chunks(rel)
            if c.section_first <= ordinal <= c.section_last
        ]
        if not chunks:
            return SearchResponse([], "lexical", "section not indexed")
        text = " ".join(c.embedding_text for c in chunks)[:2000]
        seed = None
        if self.embedder.loaded:
            self._sync_dense()
            vecs = [v for v in (self.dense.vector(c.id) for c in chunks) if v is not None]
            if vecs:
                m = np.mean(vecs, axis=0)
                seed = (m / (np.linalg.norm(m) or 1.0)).astype(np.float32)
        mode = "hybrid" if seed is not None else "lexical"
        return self.search(
            text, limit=limit, mode=mode, wait_for_model=False, exclude_path=rel, seed_vector=seed
        )

    # -- reporting --------------------------------------------------------------

    def status(self) -> dict:
        counts = self.store.counts()
        err = self.embedder.error
        return {
            "root": str(self.root),
            "index_path": str(self.index_path),
            "index_location": self.location.kind,  # "cache", "workspace" or "explicit"
            "model": self.model_id,
            "model_loaded": self.embedder.loaded,
            "model_backend": self.embedder.backend,
            "model_backend_note": self.embedder.fallback_reason,
            "model_error": str(err) if err else None,
            "window": self.tokenizer.window,
            "pending_embeds": self.store.pending_count(self.model_id),
            "reranker": self.reranker.stats() if self.reranker is not None else None,
            **counts,
        }
