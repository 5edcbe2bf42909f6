"""Reconciling the index with the folder (``engine.reconciler``): new and
changed files parsed, chunked and written (a saved file re-parsed only around
its edit), deleted ones swept, a file that fails skipped until it changes;
then the vectors made (:mod:`embed_queue`). Chunks written or dropped reach
the dense matrix and the lexical side at once."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

from ..links.tags import find_tags
from ..search.filters import props_of
from ..store.store import Store
from ..store.vectors_file import ImportReport, VectorsRead
from ..text.chunk import Chunk
from ..text.document import ParsedDocument
from ..text.encoding import NotText
from ..text.files import (
    FileFilter,
    FoundFile,
    check_file,
    display_path,
    filter_spec,
    read_found,
    relpath,
    scan,
)
from ..text.parse import parse_bytes
from .dense_side import DenseSide
from .embed_queue import EmbedQueue
from .lexical_side import LexicalSide
from .model_choice import PRECISION_KEY, ModelChoice
from .precision_move import PrecisionMove
from .report import IndexReport, Progress

log = logging.getLogger(__name__)

PARSED_KEPT = 16  # parsed documents kept for incremental re-parsing on save
NOT_TEXT_KEY = "not_text"  # meta row: {rel path: why} of the files skipped as not text
IGNORED_KEY = "ignored"  # meta row: {"files": n, "by": {ignore file: n}} of the last scan


class Reconciler:
    """Keeping an :class:`engine.Engine`'s index in line with its folder (see the module)."""

    def __init__(
        self,
        root: Path,
        file_filter: FileFilter,
        store: Store,
        models: ModelChoice,
        parts: tuple[EmbedQueue, PrecisionMove, DenseSide, LexicalSide],
        vectors_file: tuple[
            Callable[[str | Path], VectorsRead], Callable[[VectorsRead], ImportReport]
        ],
        cancelled: threading.Event,
        write_lock: threading.RLock,
    ):
        """``parts``: the queue that embeds what was written, the move whose
        target the sweep keeps, the dense and lexical sides that learn of
        chunks written or dropped; ``vectors_file``: a team's vectors file
        read and checked (:meth:`Engine.read_vectors_file`), then taken
        (:meth:`Engine.seed_vectors`)."""
        self._root = root
        self._filter = file_filter
        self._store = store
        self._models = models
        self._queue, self._move, self._dense, self._lexical = parts
        self._read_vectors, self._seed_vectors = vectors_file
        self._cancelled = cancelled
        self._write = write_lock
        self._failed: dict[
            str, tuple[int, int, int]
        ] = {}  # rel -> (size, mtime, ctime) that failed
        self._orphans: set[str] = set()  # text hashes of deleted chunks, swept later
        self._parsed: dict[str, ParsedDocument] = {}  # recently indexed documents, oldest first
        self._not_text: dict[str, str] | None = None  # rel -> why (the meta row, read once)

    def index(
        self,
        progress: Progress | None = None,
        embed: bool = True,
        vectors: str | Path | None = None,
    ) -> IndexReport:
        """Reconcile the index with the folder: new and changed files are chunked,
        deleted (and renamed-away) files swept, then missing vectors taken from
        the ``vectors`` file if given (:meth:`Engine.seed_vectors`; read and
        checked first, so a refused file writes nothing), the rest embedded."""
        t0 = time.perf_counter()
        rep = IndexReport()
        with self._write:
            # Refused before anything is written: a refused file leaves no trace.
            team = self._read_vectors(vectors) if vectors is not None else None
            reading = self.start_reading(rep)
            self.read_next(reading, None, rep, progress)
            self.finish_reading(rep)
            if team is not None:
                seeded = self._seed_vectors(team)
                rep.vectors_taken = seeded.taken
                rep.precision_from_vectors = seeded.precision_followed
            if embed:
                self._queue.embed_pending(progress, rep)
                # The sweep reads every vector row: only after a run that changed
                # something (a write, a removal, new vectors, another model's).
                changed = rep.removed or rep.chunks_written or rep.embedded or self._orphans
                if rep.lexical_only_reason is None and changed:
                    self._store.vectors.sweep_vectors(
                        self._models.model_id, self._move.kept_models()
                    )
                    self._orphans.clear()
            rep.pending = self._store.vectors.pending_count(self._models.model_id)
            rep.chunks = self._store.counts()["chunks"]
        rep.seconds = time.perf_counter() - t0
        return rep

    # The reading pass in slices: a long first index runs start_reading, then
    # read_next until nothing remains (each call its own job on the folder's
    # writer, so a save waits for one slice, not for every file), then
    # finish_reading; index() runs the three at once.

    def start_reading(self, rep: IndexReport, first: Iterable[str] = ()) -> deque[FoundFile]:
        """Find the folder's files and drop the documents whose files are gone;
        returns the files to read, those in ``first`` (open in an editor) first."""
        with self._write:
            known = self._store.documents.all()
            found = list(scan(self._root, self._filter, rep.skipped, rep.ignored))
            rep.files = len(found)
            self._note_ignored(rep.ignored)
            seen = {f.rel for f in found}
            gone = [p for p in known if p not in seen]
            self._note_not_text({p: None for p in self._skipped_not_text() if p not in seen})
            if gone:
                self._delete(gone)
                rep.removed = len(gone)
            opened = set(first)
            found.sort(key=lambda f: f.rel not in opened)  # stable: scan order otherwise
            return deque(found)

    def read_next(
        self,
        reading: deque[FoundFile],
        limit: int | None,
        rep: IndexReport,
        progress: Progress | None = None,
    ) -> int:
        """Read, chunk and write up to ``limit`` (None: all) of ``reading``'s
        files; returns how many are left (0 once cancelled). Each file is
        compared with what the index holds now, so one a save indexed
        meanwhile is not written twice."""
        with self._write:
            done = rep.indexed + rep.unchanged + len(rep.errors)
            total = done + len(reading)
            n = 0
            while reading and (limit is None or n < limit):
                if self._cancelled.is_set():
                    rep.interrupted = True
                    return 0
                f = reading.popleft()
                n += 1
                if progress:
                    progress("parse", total - len(reading), total)
                self._index_found(f, self._store.documents.get(f.rel), rep)
            if reading:
                self._lexical.current()  # searchable by keywords slice by slice
            return len(reading)

    def finish_reading(self, rep: IndexReport) -> None:
        """After the last slice: the folder's settings recorded, the embedding
        order re-read, the keyword side brought up to date."""
        with self._write:
            self._store.set_meta("root", str(self._root))
            self._store.set_meta("file_filter", json.dumps(filter_spec(self._filter)))
            if self._models.precision_asked:
                self._store.set_meta(PRECISION_KEY, self._models.precision_asked)
            self._queue.forget_order()  # embed_next reads what is pending now
            self._lexical.current()  # patched, or (re)built in the background

    def _index_found(self, f: FoundFile, old, rep: IndexReport, data: bytes | None = None) -> bool:
        chunker = self._models.chunker
        if (
            data is None
            and old is not None
            and old.size == f.size
            and old.mtime_ns == f.mtime_ns
            and old.chunker == chunker.signature
            and old.props_known
        ):
            rep.unchanged += 1
            return False
        if data is None and self._failed.get(f.rel) == (f.size, f.mtime_ns, f.ctime_ns):
            rep.errors.append((f.rel, "unchanged since it failed (retried when it changes)"))
            return False
        try:
            if data is None:
                data = read_found(f, self._filter.max_file_size)
            digest = hashlib.sha1(data).hexdigest()
            if (
                old is not None
                and old.hash == digest
                and old.chunker == chunker.signature
                and old.props_known
            ):
                self._store.documents.touch(old.id, f.size, f.mtime_ns)
                rep.unchanged += 1
                return False
            t0 = time.perf_counter()
            parsed = parse_bytes(data, f.rel, previous=self._parsed.pop(f.rel, None))
            chunks = chunker.chunk(parsed)
            rep.chunk_seconds += time.perf_counter() - t0
        except NotText as exc:  # skipped with its reason, listed by status
            self._not_a_text(f.rel, str(exc), old is not None, rep)
            return False
        except Exception as exc:  # one bad file costs only itself
            self._file_failed(f, exc, rep)
            return False
        self._failed.pop(f.rel, None)
        if f.rel in self._skipped_not_text():
            self._note_not_text({f.rel: None})
        self._parsed[f.rel] = parsed  # the next save of this file parses only around its edit
        while len(self._parsed) > PARSED_KEPT:
            self._parsed.pop(next(iter(self._parsed)))
        t0 = time.perf_counter()
        written = self._write_doc(parsed, chunks, f.size, f.mtime_ns, digest)
        rep.write_seconds += time.perf_counter() - t0
        rep.indexed += 1
        rep.chunks_written += written
        return True

    def _note_ignored(self, ignored: list[tuple[str, str]]) -> None:
        by: dict[str, int] = {}
        for _, why in ignored:
            where = why.removeprefix("ignored by ")
            by[where] = by.get(where, 0) + 1
        row = json.dumps({"files": len(ignored), "by": by}, sort_keys=True)
        if self._store.get_meta(IGNORED_KEY) != row:
            self._store.set_meta(IGNORED_KEY, row)

    def ignored(self) -> dict:
        """What the last scan's ignore files left out: ``{"files": n, "by":
        {ignore file: n}}`` (files the globs want; an ignored folder's counted)."""
        try:
            got = json.loads(self._store.get_meta(IGNORED_KEY) or "{}")
        except ValueError:
            got = {}
        if not isinstance(got, dict):
            got = {}
        return {"files": int(got.get("files", 0)), "by": dict(got.get("by") or {})}

    def not_text(self) -> dict[str, str]:
        """The files skipped as not text (rel path -> why), as the index records
        them (read now: another process may have indexed since)."""
        try:
            got = json.loads(self._store.get_meta(NOT_TEXT_KEY) or "{}")
        except ValueError:
            got = {}
        return {str(k): str(v) for k, v in got.items()} if isinstance(got, dict) else {}

    def _skipped_not_text(self) -> dict[str, str]:
        if self._not_text is None:
            self._not_text = self.not_text()
        return self._not_text

    def _note_not_text(self, changes: dict[str, str | None]) -> None:
        """Record files skipped as not text (a reason) or no longer (None)."""
        skipped = self._skipped_not_text()
        before = dict(skipped)
        for rel, why in changes.items():
            if why is None:
                skipped.pop(rel, None)
            else:
                skipped[rel] = why
        if skipped != before:
            self._store.set_meta(NOT_TEXT_KEY, json.dumps(skipped, sort_keys=True))

    def _not_a_text(self, rel: str, why: str, indexed: bool, rep: IndexReport) -> None:
        """A file that is not text: skipped, one log line; its old version (if
        the index held one) dropped, so no junk stays searchable."""
        log.warning("skipping %s: %s", display_path(rel), why)
        rep.skipped.append((rel, why))
        rep.files = max(0, rep.files - 1)  # found, but not a file the index holds
        if indexed:
            self._delete([rel])
            rep.removed += 1
        self._note_not_text({rel: why})

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
        props = props_of(parsed.front_matter, [t.key for t in find_tags(parsed)])
        removed, new_ids = self._store.documents.replace(
            parsed, chunks, size, mtime_ns, digest, self._models.chunker.signature, props
        )
        self._lexical.forget_count()
        self._forget(removed)
        if new_ids:
            self._dense.add(new_ids)
        return len(new_ids)

    def _forget(self, chunk_ids: list[int]) -> None:
        self._lexical.forget_count()
        self._dense.remove(chunk_ids)

    def _delete(self, paths: list[str]) -> None:
        """Drop documents; their vectors stay until the next write or sweep (a
        renamed file's new name finds them), then go if no chunk uses them."""
        removed = self._store.documents.delete(paths)
        self._forget([i for i, _ in removed if i])
        self._orphans.update(h for _, h in removed)

    def index_file(
        self, path: str | Path, embed: bool = True, passages: bool = True
    ) -> IndexReport:
        """Reindex one file (e.g. on save); a file that is gone or excluded is removed.
        Vectors no chunk uses any more are dropped (those of this file's old
        version at once, those of deleted files at the next write). ``passages``
        False: only the chunks' texts are embedded now (searchable by meaning at
        once), the passages' stay pending (``rep.pending``) for a background pass."""
        t0 = time.perf_counter()
        rep = IndexReport()
        p = Path(path)
        if not p.is_absolute():
            p = self._root / p
        with self._write:
            orphans, self._orphans = self._orphans, set()
            rel = relpath(self._root, p)
            old = self._store.documents.get(rel)
            found = check_file(
                self._root, p, self._filter, lambda r, why: rep.skipped.append((r, why))
            )
            if found is None:
                self._note_not_text({rel: None})
                if old is not None:
                    self._delete([rel])
                    rep.removed = 1
            else:
                rep.files = 1
                self._index_found(found, old, rep)
            self._store.vectors.drop_unused(orphans)
            self._lexical.current()  # searchable by its words now, before embedding
            hashes = self._store.chunks.document_hashes(rel, passages=passages)
            cleared = embed and self._queue.embed(None, rep, hashes)[1]
            if not passages:
                hashes = self._store.chunks.document_hashes(rel)
                cleared = False
            rep.pending = (
                0
                if cleared
                else len(self._store.vectors.pending_for(self._models.model_id, hashes))
            )
        rep.seconds = time.perf_counter() - t0
        return rep
