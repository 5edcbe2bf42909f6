"""An optional second stage: a cross-encoder re-scores the best fused sections.

Off by default. With a sentence-transformers ``CrossEncoder`` (a name in the
local Hugging Face cache, or a folder) the top :data:`TOP_N` sections of the
fused ranking are re-ordered by the cross-encoder's score of (query, section
text); the rest keep their fused order below them. The cross-encoder reads
each section as ``breadcrumb + blank line + best chunk's text``, what the
embedder reads. It runs on torch (loaded on first use; seconds), refused like
an embedding model that needs custom code or pickle weights
(:func:`~mdseek.index.model.model.check_usable`). The time it takes is kept
(:meth:`Reranker.stats`) and shown in ``--explain`` and status.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from ..settings import MAX_TOP_N, TOP_N  # sections re-scored per query
from .model import ModelUnavailable, resolve_model
from .torch_loader import load_torch_model

log = logging.getLogger(__name__)


T = TypeVar("T")


class Reranker:
    """One cross-encoder, loaded on first use; thread-safe."""

    def __init__(self, model: str, top_n: int = TOP_N, allow_pickle: bool = False):
        if not 1 <= top_n <= MAX_TOP_N:
            raise ValueError(f"rerank top N must be 1..{MAX_TOP_N} (got {top_n})")
        self.model = model
        self.resolved = resolve_model(model)
        self.top_n = top_n
        self.allow_pickle = allow_pickle
        self._ce: Any = None
        self._error: ModelUnavailable | None = None
        self._lock = threading.Lock()
        self.calls = 0
        self.seconds = 0.0
        self.last_seconds: float | None = None
        self._warned = False

    def load(self) -> Any:
        with self._lock:
            if self._error is not None:
                raise self._error
            if self._ce is None:
                try:
                    self._ce = _load(self.resolved, self.allow_pickle)
                except ModelUnavailable as exc:
                    self._error = exc
                    raise
            return self._ce

    def scores(self, query: str, passages: list[str]) -> list[float]:
        """The cross-encoder's score of each (query, passage), higher is better."""
        if not passages:
            return []
        ce = self.load()
        t0 = time.perf_counter()
        out = ce.predict(
            [(query, p) for p in passages], batch_size=len(passages), show_progress_bar=False
        )
        took = time.perf_counter() - t0
        with self._lock:
            self.calls += 1
            self.seconds += took
            self.last_seconds = took
        return [float(x) for x in out]

    def reorder(
        self, query: str, ranked: Sequence[T], passages: Callable[[Sequence[T]], list[str]]
    ) -> tuple[list[T], dict[int, float]]:
        """``ranked`` with its first ``top_n`` re-ordered by score (ties keep the
        fused order); also each re-scored item's score, by ``id()``."""
        head = list(ranked[: self.top_n])
        try:
            scores = self.scores(query, passages(head))
        except ModelUnavailable as exc:  # said once; the fused order stands
            if not self._warned:
                self._warned = True
                log.warning("%s; results are not reranked", exc)
            return list(ranked), {}
        order = sorted(range(len(head)), key=lambda i: -scores[i])
        return [head[i] for i in order] + list(ranked[self.top_n :]), {
            id(head[i]): scores[i] for i in range(len(head))
        }

    def stats(self) -> dict:
        return {
            "model": self.model,
            "top_n": self.top_n,
            "loaded": self._ce is not None,
            "error": str(self._error) if self._error else None,
            "calls": self.calls,
            "last_ms": None if self.last_seconds is None else round(self.last_seconds * 1000, 1),
            "mean_ms": round(self.seconds / self.calls * 1000, 1) if self.calls else None,
        }


@lru_cache(maxsize=2)
def _load(resolved: str, allow_pickle: bool) -> Any:
    return load_torch_model("CrossEncoder", resolved, allow_pickle, "reranker")
