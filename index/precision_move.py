"""An index of fp32 vectors moved to int8, once, while it keeps serving.

int8 is the bundled model's default precision (:mod:`embed`). An index made
before (or with ``--precision fp32`` and then opened without asking, when
nothing was remembered) holds fp32 vectors: :meth:`EngineBase._choose_precision`
then serves search from them (the engine's ``embedder`` is fp32, hybrid search
as before) and keeps the int8 embedder aside as ``mover``. :meth:`move_next`
embeds a slice of the texts that wait for an int8 vector (stored under the
int8 model id, so the two never mix), the shortest first; when none is left it
switches: the int8 embedder serves, the dense matrix is reloaded from the int8
vectors and the fp32 ones are swept, in that order.

A process killed during the move loses nothing: each slice is committed, the
fp32 vectors stay until every int8 one is in, and the next open resumes (the
index still has fp32 vectors, so the move starts again with what is left).
The sweep keeps the mover's vectors (:meth:`kept_models`). One process embeds
at a time (:mod:`embed_lock`), the move included.
"""

from __future__ import annotations

import logging
import time

from .embed_queue import EmbedQueue
from .engine_base import IndexReport
from .model import ModelUnavailable

log = logging.getLogger(__name__)

MOVING = (
    "moving this index's vectors to int8 in the background ({n} texts); "
    "search uses the fp32 vectors until then"
)


class PrecisionMove(EmbedQueue):
    """The move of an :class:`engine.Engine`'s vectors to int8 (see the module)."""

    def _init_parts(self) -> None:
        super()._init_parts()
        self.move_said = False
        self._move_t0 = 0.0

    def kept_models(self) -> tuple[str, ...]:
        """Model ids the sweep keeps beside the engine's own (a move's target)."""
        return (self.mover.model_id,) if self.mover is not None else ()

    def move_pending(self) -> int:
        """Texts still waiting for an int8 vector (0: no move)."""
        return (
            self.store.vectors.pending_count(self.mover.model_id) if self.mover is not None else 0
        )

    def move_next(self, limit: int, rep: IndexReport | None = None) -> int:
        """Embed up to ``limit`` of the texts the move still needs (shortest
        first) and return how many are left; with none left, switch to the
        int8 vectors (0 from then on)."""
        mover = self.mover
        if mover is None:
            return 0
        rep = rep or IndexReport()
        try:
            mover.load()
        except ModelUnavailable as exc:
            log.warning("the move to int8 stopped (%s); search keeps the fp32 vectors", exc)
            self.mover = None
            return 0
        if mover.model_id == self.model_id:  # its int8 copy was refused: fp32 stays
            self.mover = None
            return 0
        if not self.move_said:
            self.move_said, self._move_t0 = True, time.perf_counter()
            log.warning("%s", MOVING.format(n=self.move_pending()))
        if self.cancelled.is_set():
            return self.move_pending()
        if self._move_queue is None:
            pending = self.store.vectors.pending_texts(mover.model_id)
            counts = mover.token_counts([t for _, t, _ in pending])
            # popped from the end: chunks before passages, shortest first
            order = sorted(
                range(len(pending)), key=lambda i: (pending[i][2], counts[i]), reverse=True
            )
            self._move_queue = [pending[i][0] for i in order]
        queue = self._move_queue
        take = [queue.pop() for _ in range(min(limit, len(queue)))]
        if take:
            self._embed(None, rep, set(take), emb=mover)
        if queue or rep.interrupted:
            return len(queue) + (len(take) if rep.interrupted else 0)
        self._move_queue = None  # texts written meanwhile are counted again
        left = self.move_pending()
        return left if left else self._switch()

    def _switch(self) -> int:
        """Every text has its int8 vector: int8 serves, the fp32 vectors go."""
        with self._write:
            mover = self.mover
            if mover is None or self.store.vectors.pending_count(mover.model_id):
                return self.move_pending()
            old = self.embedder.model_id
            self.embedder, self.mover = mover, None
            self._queue = None
            if self._dense_version is not None:  # a loaded matrix: the int8 one now
                self._dense_version = None
                self._sync_dense()
            self.store.vectors.sweep_vectors(self.model_id)
        log.warning(
            "this index's vectors are int8 now (%s replaced, %.0f s)",
            old,
            time.perf_counter() - self._move_t0,
        )
        return 0
