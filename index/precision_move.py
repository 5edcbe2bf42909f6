"""An index's vectors moved to another precision, once, while it keeps serving.

The precision of an index's vectors is asked for (``--precision``, a setting),
remembered by the index, or the model's default (:mod:`embed`: fp32). An index
that holds vectors of the other precision -- fp32 vectors and int8 now asked,
or back -- is moved: :meth:`EngineBase._choose_precision` serves search from
the vectors it has (the engine's ``embedder`` is theirs, hybrid search as
before) and keeps the asked-for embedder aside as ``mover``. :meth:`move_next`
embeds a slice of the texts that wait for a vector of the new precision
(stored under its own model id, so the two never mix), the shortest first;
when none is left it switches: the new embedder serves, the dense matrix is
reloaded from the new vectors and the old ones are swept, in that order.

A process killed during the move loses nothing: each slice is committed, the
old vectors stay until every new one is in, and the next open resumes (the
index remembers the precision asked for and still has the old vectors, so the
move starts again with what is left). The sweep keeps the mover's vectors
(:meth:`kept_models`). One process embeds at a time (:mod:`embed_lock`), the
move included."""

from __future__ import annotations

import logging
import time

from .embed_queue import EmbedQueue
from .engine_base import IndexReport
from .model import ModelUnavailable

log = logging.getLogger(__name__)

MOVING = (
    "moving this index's vectors to {to} in the background ({n} texts); "
    "search uses the {old} vectors until then"
)


class PrecisionMove(EmbedQueue):
    """The move of an :class:`engine.Engine`'s vectors to another precision (see the module)."""

    def _init_parts(self) -> None:
        super()._init_parts()
        self.move_said = False
        self._move_t0 = 0.0

    def kept_models(self) -> tuple[str, ...]:
        """Model ids the sweep keeps beside the engine's own (a move's target)."""
        return (self.mover.model_id,) if self.mover is not None else ()

    def move_pending(self) -> int:
        """Texts still waiting for a vector of the new precision (0: no move)."""
        return self.store.pending_count(self.mover.model_id) if self.mover is not None else 0

    def move_next(self, limit: int, rep: IndexReport | None = None) -> int:
        """Embed up to ``limit`` of the texts the move still needs (shortest
        first) and return how many are left; with none left, switch to the
        new vectors (0 from then on)."""
        mover = self.mover
        if mover is None:
            return 0
        rep = rep or IndexReport()
        try:
            mover.load()
        except ModelUnavailable as exc:
            log.warning(
                "the move to %s stopped (%s); search keeps the %s vectors",
                mover.precision,
                exc,
                self.embedder.precision,
            )
            self.mover = None
            return 0
        if mover.model_id == self.model_id:  # an int8 copy was refused: fp32 stays
            self.mover = None
            return 0
        if not self.move_said:
            self.move_said, self._move_t0 = True, time.perf_counter()
            log.warning(
                "%s",
                MOVING.format(
                    to=mover.precision, old=self.embedder.precision, n=self.move_pending()
                ),
            )
        if self.cancelled.is_set():
            return self.move_pending()
        if self._move_queue is None:
            pending = self.store.pending_texts(mover.model_id)
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
        """Every text has its new vector: the new embedder serves, the old vectors go."""
        with self._write:
            mover = self.mover
            if mover is None or self.store.pending_count(mover.model_id):
                return self.move_pending()
            old = self.embedder.model_id
            self.embedder, self.mover = mover, None
            self._queue = None
            if self._dense_version is not None:  # a loaded matrix: the new one now
                self._dense_version = None
                self._sync_dense()
            self.store.sweep_vectors(self.model_id)
        log.warning(
            "this index's vectors are %s now (%s replaced, %.0f s)",
            self.embedder.precision,
            old,
            time.perf_counter() - self._move_t0,
        )
        return 0
