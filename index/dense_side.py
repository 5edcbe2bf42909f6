"""The engine's dense side: the matrix of every chunk's vector and its
passages' (:mod:`dense`), loaded once from the index file, kept in step with this process's writes and reloaded after
another process's; and the query's vector."""

from __future__ import annotations

import numpy as np

from .dense import DenseIndex
from .engine_base import EngineBase
from .query import Query


class DenseSide(EngineBase):
    """The dense retriever of an :class:`engine.Engine` (see the module)."""

    def _init_parts(self) -> None:
        super()._init_parts()
        self.dense = DenseIndex()
        self._dense_version: int | None = None  # data_version the matrix reflects

    def _sync_dense(self) -> None:
        """Load the matrix once; reload only when another process changed the file."""
        v = self.store.data_version()
        if self._dense_version == v:
            return
        with self._write:
            ids, mat = self.store.vectors.chunk_vectors(self.model_id)
            pids, owners, pmat = self.store.vectors.passage_vectors(self.model_id)
            self.dense.reset(ids, mat, pids, owners, pmat)
            self._dense_version = v

    def _dense_add(
        self, chunk_ids: list[int] | None = None, hashes: list[str] | None = None
    ) -> None:
        """New vector rows (chunks written, or texts embedded) join a loaded matrix."""
        if self._dense_version is None:
            return
        if hashes is not None:
            ids, mat = self.store.vectors.chunk_vectors_for_hashes(self.model_id, hashes)
            owners = self.store.vectors.passage_chunks_for_hashes(hashes)
        else:
            ids, mat = self.store.vectors.chunk_vectors(self.model_id, chunk_ids)
            owners = chunk_ids or []
        self.dense.add(ids, mat)
        if owners:
            pids, own, pmat = self.store.vectors.passage_vectors(self.model_id, owners)
            self.dense.add(-pids, pmat, own)

    def _dense_remove(self, chunk_ids: list[int]) -> None:
        if self._dense_version is not None:
            self.dense.remove(chunk_ids)

    def query_vector(self, query: Query) -> np.ndarray:
        """The query's unit vector; for a long query with a question
        (:attr:`Query.question`), the mean of the whole text's and the
        question's vectors, so the context cannot drown what is asked."""
        qv = self.embedder.encode_query(query.text)
        if query.question:
            m = qv + self.embedder.encode_query(query.question)
            qv = (m / (np.linalg.norm(m) or 1.0)).astype(np.float32)
        return qv
