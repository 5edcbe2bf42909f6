"""The engine: one workspace root, one index file, one model.

``Engine`` is what the command line, the language server and the MCP server
call. It is assembled from one class per job, each in its own module:

  engine_base.py   the folder, the index file, the model, settings, IndexReport
  reconcile.py     the index kept in line with the files (Reconcile)
  embed_queue.py   chunks waiting for a vector, embedded in batches or slices
                   (EmbedQueue), one process at a time (embed_lock.py)
  lexical_side.py  query terms and BM25 from FTS5 or in-memory postings (LexicalSide)
  dense_side.py    the vector matrix and the query's vector (DenseSide)
  search.py        search, fusion, snippets, explain, related (Search)
"""

from __future__ import annotations

from .engine_base import IndexReport, Progress
from .reconcile import Reconcile
from .search import Search, SearchResponse, SearchResult

__all__ = ["Engine", "IndexReport", "Progress", "SearchResponse", "SearchResult"]


class Engine(Reconcile, Search):
    """One folder, its index file and its model: reconcile with the files,
    embed, search, related, status. Open it with ``Engine(root)`` (see
    :class:`engine_base.EngineBase` for the options)."""

    def close(self) -> None:
        self.cancel()
        if self._threads is not None:
            self._threads.shutdown(wait=True)
        self.store.close()
        if self._claim is not None:
            self._claim.close()  # another process may adopt it now

    def status(self) -> dict:
        counts = self.store.counts()
        err = self.embedder.error
        return {
            "root": str(self.root),
            "index_path": str(self.index_path),
            "index_location": self.location.kind,  # "cache", "workspace" or "explicit"
            "model": self.model_id,
            "model_loaded": self.embedder.loaded,
            "model_backend": self.embedder.backend,
            "model_backend_note": self.embedder.fallback_reason,
            "model_error": str(err) if err else None,
            "window": self.tokenizer.window,
            "pending_embeds": self.store.pending_count(self.model_id),
            "precision": self.embedder.precision,
            "moving_vectors": self.move_pending(),  # texts waiting for the new precision (0: no move)
            "reranker": self.reranker.stats() if self.reranker is not None else None,
            **counts,
        }
