"""The engine's dense side (``engine.dense_side``): the matrix of every chunk's
vector and its passages' (:mod:`dense`), loaded once from the index file,
kept in step with this process's writes and reloaded after another
process's; and the query's vector. Loading reads on a reader connection and
waits for no write: the matrix's own lock keeps a load and the writer's
changes in order (a change committed during a load is in what it read, or
applied after it)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from ..search.dense import DenseIndex
from ..search.query import Query
from ..search.retrieve import DEFAULT, Ranking
from ..store.vectors import VectorCache
from .model_choice import ModelChoice


class DenseSide:
    """The dense retriever of an :class:`engine.Engine` (see the module)."""

    def __init__(
        self,
        vectors: VectorCache,
        data_version: Callable[[], int],
        models: ModelChoice,
    ):
        """``vectors``: the store's vector cache; ``data_version``: the index
        file's change counter (another process's writes)."""
        self._vectors = vectors
        self._data_version = data_version
        self._models = models
        self.matrix = DenseIndex()
        self._version: int | None = None  # data_version the matrix reflects
        # A load (read, then reset) and a change (add, remove) one at a time: the
        # writer changes the matrix after its commit, so a change a load missed
        # is applied after the load.
        self._lock = threading.Lock()

    def sync(self) -> None:
        """Load the matrix once; reload only when another process changed the file."""
        v = self._data_version()
        if self._version == v:
            return
        with self._lock:
            v = self._data_version()  # read before the rows: never newer than they are
            if self._version == v:
                return  # another search loaded it meanwhile
            model = self._models.model_id
            ids, mat = self._vectors.chunk_vectors(model)
            pids, owners, pmat = self._vectors.passage_vectors(model)
            self.matrix.reset(ids, mat, pids, owners, pmat, adopt=True)
            del mat, pmat
            self._version = v

    def reload(self) -> None:
        """A loaded matrix read again (the serving model changed); none stays none."""
        with self._lock:
            if self._version is None:
                return
            self._version = None
        self.sync()

    def add(self, chunk_ids: list[int] | None = None, hashes: list[str] | None = None) -> None:
        """New vector rows (chunks written, or texts embedded; committed) join a
        loaded matrix."""
        with self._lock:
            if self._version is None:
                return  # the load to come reads them
            model = self._models.model_id
            if hashes is not None:  # texts embedded: only the rows of those texts
                ids, mat = self._vectors.chunk_vectors_for_hashes(model, hashes)
                self.matrix.add(ids, mat)
                pids, own, pmat = self._vectors.passage_vectors_for_hashes(model, hashes)
                self.matrix.add(-pids, pmat, own)
                return
            ids, mat = self._vectors.chunk_vectors(model, chunk_ids)
            self.matrix.add(ids, mat)
            if chunk_ids:
                pids, own, pmat = self._vectors.passage_vectors(model, chunk_ids)
                self.matrix.add(-pids, pmat, own)

    def remove(self, chunk_ids: list[int]) -> None:
        """Chunks deleted (committed) leave a loaded matrix."""
        with self._lock:
            if self._version is not None:
                self.matrix.remove(chunk_ids)

    def query_vector(self, query: Query, ranking: Ranking = DEFAULT) -> np.ndarray:
        """The query's unit vector; for a long query with an ask
        (:attr:`Query.ask`), the whole text's and the ask's read together as
        ``ranking.ask`` says (:func:`join_ask`), so the scenario cannot drown
        what is asked. Nothing empty is embedded."""
        embedder = self._models.embedder
        qv = embedder.encode_query(query.text)
        if query.ask and ranking.ask != "off":
            qv = join_ask(qv, embedder.encode_query(query.ask), ranking)
        return qv


def join_ask(whole: np.ndarray, ask: np.ndarray, ranking: Ranking = DEFAULT) -> np.ndarray:
    """A long query's whole-text and ask vectors as its dense query: ``"mean"``,
    one unit vector ``(1 - w) * whole + w * ask`` (``w = ranking.ask_weight``;
    a section's cosine is then the weighted mean of its cosines with the two, up
    to one factor per query); ``"max"``, both rows, a section scored by the
    closer (:func:`dense.cosines`)."""
    if ranking.ask == "max":
        return np.stack([whole, ask]).astype(np.float32)
    w = ranking.ask_weight
    m = (1.0 - w) * whole + w * ask
    return (m / (np.linalg.norm(m) or 1.0)).astype(np.float32)
