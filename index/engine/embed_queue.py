"""The texts that wait for a vector (``engine.queue``): embedded in batches
(similar lengths together), all at once or in slices (the open files' first,
then shortest first), one process at a time (:mod:`embed_lock`); or taken
from a team's vectors file, or from the vectors an adopted index brought.
The serving embedder's vectors join the dense matrix as they are made."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Generator, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import numpy as np

from ..model.embed import Embedder
from ..model.model import ModelUnavailable
from ..store.store import Store
from ..store.vectors_file import ImportReport, VectorsFileError, export_vectors, import_vectors
from .dense_side import DenseSide
from .embed_lock import EmbedLock
from .model_choice import ModelChoice
from .report import IndexReport, Progress

log = logging.getLogger(__name__)

EMBED_BATCH = 64


class EmbedQueue:
    """Making the vectors an :class:`engine.Engine`'s index lacks (see the module)."""

    def __init__(
        self,
        store: Store,
        models: ModelChoice,
        dense: DenseSide,
        index_path: Path,
        cancelled: threading.Event,
        write_lock: threading.RLock,
    ):
        """``store``: its vectors and its documents' text hashes; ``dense``:
        where new vectors of the serving model go; ``index_path``: beside it,
        the lock file of :mod:`embed_lock`; ``cancelled``: stop between
        batches; ``write_lock``: the engine's, held while vectors are written."""
        self._store = store
        self._vectors = store.vectors
        self._models = models
        self._dense = dense
        self._cancelled = cancelled
        self._write = write_lock
        self._embed_lock = EmbedLock(index_path)
        self._queue: list[str] | None = None  # pending text hashes for embed_next, longest first
        self.batch = EMBED_BATCH  # chunks per embed call and per vector commit
        self._untrusted = self._vectors.has_untrusted()  # an adopted index's vectors (adopt.py)

    def forget_order(self) -> None:
        """What is pending changed (a reconcile, another model): embed_next reads it again."""
        self._queue = None

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
        first one embedded are reused, never embedded twice. :meth:`Engine.cancel`
        stops the run between batches (what is committed stays)."""
        return self.embed(progress, rep or IndexReport(), only)[0]

    def embed(
        self,
        progress: Progress | None,
        rep: IndexReport,
        only: set[str] | None,
        emb: Embedder | None = None,
    ) -> tuple[int, bool]:
        """(texts embedded, whether nothing was left pending). ``emb``: the
        embedder whose vectors are made (the precision move's; default the
        serving one, whose vectors also join the dense matrix)."""
        serving = self._models.embedder
        emb = emb or serving
        if self._cancelled.is_set():
            return 0, False
        pending = self._pending(only, emb)
        if not pending:
            return 0, True
        try:
            emb.load()
        except ModelUnavailable as exc:
            rep.lexical_only_reason = str(exc)
            return 0, False
        if emb is serving and self._untrusted and self._take_untrusted(rep):
            pending = self._pending(only)
            if not pending:
                return 0, True

        def waited_for(seconds: float) -> None:
            rep.lock_wait_seconds = seconds

        with self._embed_lock.turn(self._cancelled, progress, waited_for) as turn:
            if not turn:
                rep.interrupted = True
                return 0, False
            # Not kept waiting: nobody embedded meanwhile (a race costs one duplicate vector).
            done = self._embed_batches(
                progress, rep, only, None if rep.lock_wait_seconds else pending, emb
            )
            return done, done == len(pending) and not rep.interrupted

    def take_vectors(self, path: str | Path, data: tuple) -> ImportReport:
        """A team's vectors file's vectors (read and checked by
        :meth:`Engine.seed_vectors`) for the serving model's pending texts."""
        emb = self._models.embedder
        dim = emb.dim if emb.available() else None
        if dim is None:
            raise VectorsFileError(
                f"cannot check the vectors' size without the model ({emb.error})"
            )
        with self._write:
            rep = import_vectors(self._vectors, emb.model_id, dim, data)
        self._queue = None
        if rep.model_in_file != emb.model_id:
            log.warning(
                "%s holds vectors of %s, not %s: none taken", path, rep.model_in_file, emb.model_id
            )
        elif rep.rejected:
            log.warning(
                "%s: %d vectors rejected (wrong size, not finite or not unit length)",
                path,
                rep.rejected,
            )
        return rep

    def _take_untrusted(self, rep: IndexReport) -> int:
        """The vectors an adopted index brought (:mod:`adopt`), for the texts
        read from the files that wait for one, checked as a team's vectors
        file's are; the rest of those texts' are dropped. Returns how many were taken."""
        emb = self._models.embedder
        dim = emb.dim
        with self._write:
            hashes, mat = self._vectors.untrusted_for_pending(emb.model_id, dim)
            got = import_vectors(self._vectors, emb.model_id, dim, (emb.model_id, hashes, mat))
            if got.taken:
                self._dense.add(hashes=hashes)
                self._queue = None
            self._untrusted = self._vectors.drop_untrusted_of_chunks()
        if got.rejected:
            log.info(
                "%d vectors of the adopted index refused (not finite or not unit length)",
                got.rejected,
            )
        rep.vectors_taken += got.taken
        return got.taken

    def export_vectors(self, path: str | Path) -> int:
        """Write the vectors the index uses (for ``seed_vectors`` elsewhere); returns how many."""
        return export_vectors(self._vectors, self._models.model_id, Path(path))

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
        emb = self._models.embedder
        if self._cancelled.is_set():
            return self._vectors.pending_count(emb.model_id)
        take = dict.fromkeys(list(self._pending_of(first))[:limit])
        if self._queue is None:
            texts = self._vectors.pending_texts(emb.model_id)
            counts = emb.token_counts([t for _, t, _ in texts])
            self._queue = [  # chunks before passages, each shortest first
                texts[i][0]
                for i in sorted(range(len(texts)), key=lambda i: (texts[i][2], counts[i]))
            ]
            self._queue.reverse()  # popped from the end: shortest first
        queue = self._queue
        while len(take) < limit and queue:
            want = [queue.pop() for _ in range(min(limit - len(take), len(queue)))]
            still = {h for h, _ in self._vectors.pending_for(emb.model_id, want)}
            take.update((h, None) for h in want if h in still)
        if take:
            self.embed(progress, rep, set(take))
        if queue or rep.interrupted:
            return len(queue) + (len(take) if rep.interrupted else 0)
        self._queue = None  # the slices are done: count what a change made meanwhile
        return self._vectors.pending_count(self._models.model_id)

    def embed_files(self, rels: Iterable[str], limit: int, rep: IndexReport | None = None) -> int:
        """Embed up to ``limit`` of the pending texts of the files ``rels`` (open
        in an editor) and return how many of theirs are still pending. Reads no
        queue of the whole folder: the reading pass runs it between its slices,
        so the open files are searchable by meaning before every file is read."""
        rep = rep or IndexReport()
        if self._cancelled.is_set():
            return 0
        pending = self._pending_of(rels)
        take = set(list(pending)[:limit])
        if take:
            self.embed(None, rep, take)
        return len(pending) - len(take) if not rep.interrupted else len(pending)

    def _pending_of(self, rels: Iterable[str]) -> dict[str, None]:
        """The pending texts of these files, in their order (a dict as an ordered set)."""
        out: dict[str, None] = {}
        model = self._models.model_id
        for rel in rels:
            for h, _ in self._vectors.pending_for(model, self._store.chunks.document_hashes(rel)):
                out[h] = None
        return out

    def _pending(
        self, only: set[str] | None, emb: Embedder | None = None
    ) -> list[tuple[str, str, int]]:
        """(text hash, text, kind: 0 chunk, 1 passage) of the texts waiting for
        a vector of ``emb`` (default the serving one)."""
        return self._vectors.pending_texts((emb or self._models.embedder).model_id, only)

    def _embed_batches(
        self, progress: Progress | None, rep: IndexReport, only: set[str] | None,
        pending: list[tuple[str, str, int]] | None = None, emb: Embedder | None = None,
    ) -> int:  # fmt: skip
        serving = self._models.embedder
        emb = emb or serving
        own = emb is serving  # its vectors join the dense matrix
        if pending is None:
            pending = self._pending(only, emb)  # after a wait: what is left
        # Similar token counts in one batch pad less; chunks (listed first by the
        # store) before passages, which only refine a chunk's score.
        counts = emb.token_counts([t for _, t, _ in pending])
        kinds = [k for _, _, k in pending]
        pending = [
            pending[i]
            for i in sorted(range(len(pending)), key=lambda i: (pending[i][2], counts[i]))
        ]
        t0 = time.perf_counter()
        done = 0
        # progress counts chunks ("embed") and passages ("passages") apart; both
        # totals are told first, so a front end can estimate the time left
        # totals are told first, so a front end can estimate the time left (from
        # the tokens: texts come shortest first, so a count of texts runs fast early)
        n_chunks = sum(1 for _, _, kind in pending if kind == 0)
        tokens = [
            counts[i] for i in sorted(range(len(counts)), key=lambda i: (kinds[i], counts[i]))
        ]
        tokens_done = 0
        if progress and pending:
            progress("embed", 0, n_chunks)
            progress("passages", 0, len(pending) - n_chunks)
            progress("tokens", 0, sum(tokens))
        batches = [pending[i : i + self.batch] for i in range(0, len(pending), self.batch)]
        with closing(self._made(emb, batches)) as made:
            for batch, vecs in made:
                hashes = [h for h, _, _ in batch]
                with self._write:
                    self._vectors.put_vectors(emb.model_id, hashes, vecs)
                    if own:
                        self._dense.add(hashes=hashes)
                before, done = done, done + len(batch)
                tokens_done += sum(tokens[before:done])
                if progress:
                    progress("tokens", tokens_done, sum(tokens))
                    if before < n_chunks:
                        progress("embed", min(done, n_chunks), n_chunks)
                    if done > n_chunks:
                        progress("passages", done - n_chunks, len(pending) - n_chunks)
        if done < len(pending):
            rep.interrupted = True
            log.info("embedding stopped with %d chunks left", len(pending) - done)
        rep.embedded += done
        rep.embedded_passages += max(0, done - n_chunks)
        rep.embed_seconds += time.perf_counter() - t0
        return done

    def _made(
        self, emb: Embedder, batches: list[list[tuple[str, str, int]]]
    ) -> Generator[tuple[list[tuple[str, str, int]], np.ndarray], None, None]:
        """Each batch with its vectors, the next batch already in the model while
        the caller writes this one (commits it, grows the matrix): the model
        never waits for the writer (benchmarks/README.md, "The writer beside
        the model"). A cancel stops it after the batch in flight; closed early
        (the caller failed), it waits for that batch and drops it."""

        def start(k: int) -> Future | None:
            if k >= len(batches) or self._cancelled.is_set():
                return None
            return ahead.submit(emb.encode, [t for _, t, _ in batches[k]])

        with ThreadPoolExecutor(1, thread_name_prefix="mdseek-embed-ahead") as ahead:
            coming = start(0)
            for k, batch in enumerate(batches):
                if coming is None:
                    return
                vecs = coming.result()
                coming = start(k + 1)
                yield batch, vecs
