"""Embedding with sentence-transformers: lazy, batched by length, normalised.

The model loads on first use (or in the background via :meth:`Embedder.preload`),
never at import, so commands that need no vector never pay for torch. If the
model cannot be loaded, :class:`~mdseek.index.model.ModelUnavailable` carries
the reason; the engine then serves lexical results and says why, once.
"""

from __future__ import annotations

import logging
import threading
import time
from functools import lru_cache
from typing import Any

import numpy as np

from .model import ModelUnavailable, model_id, offline_env, resolve_model

log = logging.getLogger(__name__)


@lru_cache(maxsize=4)
def load_sentence_transformer(resolved: str) -> Any:
    offline_env()
    try:
        import torch

        torch.set_num_threads(max(1, torch.get_num_threads()))
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(resolved, device="cpu")
    except Exception as exc:  # any failure to load is reported, not raised raw
        raise ModelUnavailable(f"cannot load embedding model {resolved!r}: {exc}") from exc


class Embedder:
    def __init__(self, model: str | None = None, batch_size: int = 32):
        self.resolved = resolve_model(model)
        self.model_id = model_id(self.resolved)
        self.batch_size = batch_size
        self._model: Any = None
        self._error: ModelUnavailable | None = None
        self._lock = threading.Lock()
        # Counters the tests and benchmarks read.
        self.texts_embedded = 0
        self.calls = 0
        self.load_seconds: float | None = None
        self._query_cache: dict[str, np.ndarray] = {}
        self.query_cache_size = 256  # 0 disables (benchmarks time the model call)

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def error(self) -> ModelUnavailable | None:
        return self._error

    def load(self) -> Any:
        """Load the model (once); raises ModelUnavailable (remembered) on failure."""
        if self._model is not None:
            return self._model
        if self._error is not None:
            raise self._error
        with self._lock:
            if self._model is None and self._error is None:
                t0 = time.perf_counter()
                try:
                    self._model = load_sentence_transformer(self.resolved)
                except ModelUnavailable as exc:
                    self._error = exc
                    log.error("%s; search falls back to lexical (FTS) results only", exc)
                    raise
                self.load_seconds = time.perf_counter() - t0
                log.info("loaded model %s in %.1fs", self.model_id, self.load_seconds)
        if self._error is not None:
            raise self._error
        return self._model

    def available(self) -> bool:
        try:
            self.load()
            return True
        except ModelUnavailable:
            return False

    def preload(self) -> threading.Thread:
        t = threading.Thread(target=self.available, name="mdseek-model-load", daemon=True)
        t.start()
        return t

    @property
    def dim(self) -> int:
        m = self.load()
        getter = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: list[str], _count: bool = True) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in input order."""
        m = self.load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if _count:
            self.calls += 1
            self.texts_embedded += len(texts)
        # Longest first so each batch pads to similar lengths; restore order after.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vecs = m.encode(
            [texts[i] for i in order],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ).astype(np.float32, copy=False)
        out = np.empty_like(vecs)
        out[np.asarray(order)] = vecs
        return out

    def encode_query(self, text: str) -> np.ndarray:
        """A query vector (not counted in ``texts_embedded``, which counts documents).

        Recent queries are cached: editors resend the same query (a retyped
        character, a repeated hover), and the model call is most of a search."""
        v = self._query_cache.get(text)
        if v is None:
            v = self.encode([text], _count=False)[0]
            if self.query_cache_size > 0:
                with self._lock:
                    self._query_cache[text] = v
                    while len(self._query_cache) > self.query_cache_size:
                        self._query_cache.pop(next(iter(self._query_cache)))
        return v
