"""The engine's dense side (``engine.dense_side``): the matrix of every chunk's
vector and its passages' (:mod:`dense`), loaded once from the index file,
kept in step with this process's writes and reloaded after another
process's; and the query's vector."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from ..search.dense import DenseIndex
from ..search.query import Query
from ..store.vectors import VectorCache
from .model_choice import ModelChoice


class DenseSide:
    """The dense retriever of an :class:`engine.Engine` (see the module)."""

    def __init__(
        self,
        vectors: VectorCache,
        data_version: Callable[[], int],
        models: ModelChoice,
        write_lock: threading.RLock,
    ):
        """``vectors``: the store's vector cache; ``data_version``: the index
        file's change counter (another process's writes); ``write_lock``: the
        engine's, held while the matrix is loaded."""
        self._vectors = vectors
        self._data_version = data_version
        self._models = models
        self._write = write_lock
        self.matrix = DenseIndex()
        self._version: int | None = None  # data_version the matrix reflects

    def sync(self) -> None:
        """Load the matrix once; reload only when another process changed the file."""
        v = self._data_version()
        if self._version == v:
            return
        with self._write:
            model = self._models.model_id
            ids, mat = self._vectors.chunk_vectors(model)
            pids, owners, pmat = self._vectors.passage_vectors(model)
            self.matrix.reset(ids, mat, pids, owners, pmat)
            self._version = v

    def reload(self) -> None:
        """A loaded matrix read again (the serving model changed); none stays none."""
        if self._version is not None:
            self._version = None
            self.sync()

    def add(self, chunk_ids: list[int] | None = None, hashes: list[str] | None = None) -> None:
        """New vector rows (chunks written, or texts embedded) join a loaded matrix."""
        if self._version is None:
            return
        model = self._models.model_id
        if hashes is not None:
            ids, mat = self._vectors.chunk_vectors_for_hashes(model, hashes)
            owners = self._vectors.passage_chunks_for_hashes(hashes)
        else:
            ids, mat = self._vectors.chunk_vectors(model, chunk_ids)
            owners = chunk_ids or []
        self.matrix.add(ids, mat)
        if owners:
            pids, own, pmat = self._vectors.passage_vectors(model, owners)
            self.matrix.add(-pids, pmat, own)

    def remove(self, chunk_ids: list[int]) -> None:
        if self._version is not None:
            self.matrix.remove(chunk_ids)

    def query_vector(self, query: Query) -> np.ndarray:
        """The query's unit vector; for a long query with a question
        (:attr:`Query.question`), the mean of the whole text's and the
        question's vectors, so the context cannot drown what is asked."""
        embedder = self._models.embedder
        qv = embedder.encode_query(query.text)
        if query.question:
            m = qv + embedder.encode_query(query.question)
            qv = (m / (np.linalg.norm(m) or 1.0)).astype(np.float32)
        return qv
