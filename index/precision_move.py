"""An index of fp32 vectors moved to int8, once, while it keeps serving
(``engine.move``).

int8 is the bundled model's default precision (:mod:`embed`). An index made
before (or with ``--precision fp32`` and then opened without asking, when
nothing was remembered) holds fp32 vectors: :class:`model_choice.ModelChoice`
then serves search from them (its ``embedder`` is fp32, hybrid search as
before) and keeps the int8 embedder aside as ``mover``. :meth:`PrecisionMove.next`
embeds a slice of the texts that wait for an int8 vector (stored under the
int8 model id, so the two never mix), the shortest first; when none is left it
switches: the int8 embedder serves, the dense matrix is reloaded from the int8
vectors and the fp32 ones are swept, in that order.

A process killed during the move loses nothing: each slice is committed, the
fp32 vectors stay until every int8 one is in, and the next open resumes (the
index still has fp32 vectors, so the move starts again with what is left).
The sweep keeps the mover's vectors (:meth:`PrecisionMove.kept_models`). One
process embeds at a time (:mod:`embed_lock`), the move included.
"""

from __future__ import annotations

import logging
import threading
import time

from .dense_side import DenseSide
from .embed_queue import EmbedQueue
from .model import ModelUnavailable
from .model_choice import ModelChoice
from .report import IndexReport
from .store_vectors import VectorCache
from .vectors_file import ImportReport, import_vectors

log = logging.getLogger(__name__)

MOVING = (
    "moving this index's vectors to int8 in the background ({n} texts); "
    "search uses the fp32 vectors until then"
)


class PrecisionMove:
    """The move of an :class:`engine.Engine`'s vectors to int8 (see the module)."""

    def __init__(
        self,
        vectors: VectorCache,
        models: ModelChoice,
        queue: EmbedQueue,
        dense: DenseSide,
        cancelled: threading.Event,
        write_lock: threading.RLock,
    ):
        """``queue``: embeds the move's slices (and forgets its own order at
        the switch); ``dense``: reloaded from the int8 vectors at the switch."""
        self._vectors = vectors
        self._models = models
        self._queue = queue
        self._dense = dense
        self._cancelled = cancelled
        self._write = write_lock
        self._order: list[str] | None = None  # texts still to move, popped from the end
        self.said = False
        self._t0 = 0.0

    def kept_models(self) -> tuple[str, ...]:
        """Model ids the sweep keeps beside the serving one (a move's target)."""
        mover = self._models.mover
        return (mover.model_id,) if mover is not None else ()

    def pending(self) -> int:
        """Texts still waiting for an int8 vector (0: no move)."""
        mover = self._models.mover
        return self._vectors.pending_count(mover.model_id) if mover is not None else 0

    def take_vectors(self, data: tuple) -> ImportReport:
        """A team's vectors file's int8 vectors (read and checked by
        :meth:`Engine.seed_vectors`) for the texts the move still waits for."""
        mover = self._models.mover
        assert mover is not None
        with self._write:
            got = import_vectors(self._vectors, mover.model_id, self._models.embedder.dim, data)
        self._order = None
        return got

    def next(self, limit: int, rep: IndexReport | None = None) -> int:
        """Embed up to ``limit`` of the texts the move still needs (shortest
        first) and return how many are left; with none left, switch to the
        int8 vectors (0 from then on)."""
        mover = self._models.mover
        if mover is None:
            return 0
        rep = rep or IndexReport()
        try:
            mover.load()
        except ModelUnavailable as exc:
            log.warning("the move to int8 stopped (%s); search keeps the fp32 vectors", exc)
            self._models.stop_move()
            return 0
        if mover.model_id == self._models.model_id:  # its int8 copy was refused: fp32 stays
            self._models.stop_move()
            return 0
        if not self.said:
            self.said, self._t0 = True, time.perf_counter()
            log.warning("%s", MOVING.format(n=self.pending()))
        if self._cancelled.is_set():
            return self.pending()
        if self._order is None:
            pending = self._vectors.pending_texts(mover.model_id)
            counts = mover.token_counts([t for _, t, _ in pending])
            # popped from the end: chunks before passages, shortest first
            order = sorted(
                range(len(pending)), key=lambda i: (pending[i][2], counts[i]), reverse=True
            )
            self._order = [pending[i][0] for i in order]
        queue = self._order
        take = [queue.pop() for _ in range(min(limit, len(queue)))]
        if take:
            self._queue.embed(None, rep, set(take), emb=mover)
        if queue or rep.interrupted:
            return len(queue) + (len(take) if rep.interrupted else 0)
        self._order = None  # texts written meanwhile are counted again
        left = self.pending()
        return left if left else self._switch()

    def _switch(self) -> int:
        """Every text has its int8 vector: int8 serves, the fp32 vectors go."""
        with self._write:
            mover = self._models.mover
            if mover is None or self._vectors.pending_count(mover.model_id):
                return self.pending()
            old = self._models.model_id
            self._models.switch()
            self._queue.forget_order()
            self._dense.reload()  # a loaded matrix: the int8 one now
            self._vectors.sweep_vectors(self._models.model_id)
        log.warning(
            "this index's vectors are int8 now (%s replaced, %.0f s)",
            old,
            time.perf_counter() - self._t0,
        )
        return 0
