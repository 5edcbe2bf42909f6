"""An index's vectors moved to another precision, once, while it keeps
serving (``engine.move``).

The precision of an index's vectors is asked for (``--precision``, a setting),
remembered by the index, or the model's default (:func:`embed.default_precision`:
int8 for the bundled model, fp32 for others). An index that holds vectors of
the other precision -- fp32 vectors and int8 now asked or the default (an
index of the old fp32 default), or back -- is moved: :class:`model_choice.ModelChoice` serves search from the
vectors it has (its ``embedder`` is theirs, hybrid search as before) and keeps
the asked-for embedder aside as ``mover``. :meth:`PrecisionMove.next` embeds a
slice of the texts that wait for a vector of the new precision (stored under
its own model id, so the two never mix), the shortest first; when none is left
it switches: the new embedder serves, the dense matrix is reloaded from the new
vectors and the old ones are swept, in that order.

A process killed during the move loses nothing: each slice is committed, the
old vectors stay until every new one is in, and the next open resumes (the
index remembers the precision asked for and still has the old vectors, so the
move starts again with what is left). The sweep keeps the mover's vectors
(:meth:`PrecisionMove.kept_models`). One process embeds at a time
(:mod:`embed_lock`), the move included.
"""

from __future__ import annotations

import logging
import threading
import time

from ..model.model import ModelUnavailable
from ..store.vectors import VectorCache
from ..store.vectors_file import ImportReport, import_vectors
from .dense_side import DenseSide
from .embed_queue import EmbedQueue
from .model_choice import ModelChoice
from .report import IndexReport

log = logging.getLogger(__name__)

MOVING = (
    "moving this index's vectors to {to} in the background ({n} texts); "
    "search uses the {old} vectors until then"
)


class PrecisionMove:
    """The move of an :class:`engine.Engine`'s vectors to another precision (see the module)."""

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
        the switch); ``dense``: reloaded from the new vectors at the switch."""
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
        """Texts still waiting for a vector of the new precision (0: no move)."""
        mover = self._models.mover
        return self._vectors.pending_count(mover.model_id) if mover is not None else 0

    def take_vectors(self, data: tuple) -> ImportReport:
        """A team's vectors file's vectors of the new precision (read and checked by
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
        new vectors (0 from then on)."""
        mover = self._models.mover
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
                self._models.embedder.precision,
            )
            self._models.stop_move()
            return 0
        if mover.model_id == self._models.model_id:  # an int8 copy was refused: fp32 stays
            self._models.stop_move()
            return 0
        if not self.said:
            self.said, self._t0 = True, time.perf_counter()
            log.warning(
                "%s",
                MOVING.format(
                    to=mover.precision, old=self._models.embedder.precision, n=self.pending()
                ),
            )
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
        """Every text has its new vector: the new embedder serves, the old vectors go."""
        with self._write:
            mover = self._models.mover
            if mover is None or self._vectors.pending_count(mover.model_id):
                return self.pending()
            old = self._models.model_id
            self._models.switch()
            self._queue.forget_order()
            self._dense.reload()  # a loaded matrix: the new one now
            self._vectors.sweep_vectors(self._models.model_id)
        log.warning(
            "this index's vectors are %s now (%s replaced, %.0f s)",
            self._models.embedder.precision,
            old,
            time.perf_counter() - self._t0,
        )
        return 0
