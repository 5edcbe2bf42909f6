"""The engine's lexical side (``engine.lexical_side``): a query's terms against
the index's word counts, then BM25 from FTS5 or, in a long-lived process over
a big folder, from in-memory postings (:mod:`lexical`) built in the
background and patched after each write."""

from __future__ import annotations

import logging
import threading
import time

from ..search import retrieve
from ..search.lexical import LexicalIndex, Phrase
from ..search.query import MAX_DF, Query, QueryTerms
from ..store.store import Store

log = logging.getLogger(__name__)

# Chunks from which a long-lived process ranks BM25 from memory. Below, FTS5
# is about as fast (1.2 ms both at 1k chunks; 11.3 vs 1.7 ms at 10k) and runs
# beside the query's embedding, while building the postings holds the GIL
# (0.2 s at 2k chunks) and slowed the first searches after a folder opened.
LEXICAL_IN_MEMORY_MIN = 5000


class LexicalSide:
    """The lexical retriever of an :class:`engine.Engine` (see the module)."""

    def __init__(self, store: Store):
        """``store``: its postings, its chunk count and its change counter."""
        self._store = store
        self.fts_weights = retrieve.FTS_WEIGHTS
        self.max_df = MAX_DF  # lexical: words in more of the chunks are left out
        # Long-lived processes (server, MCP) rank lexical candidates from memory:
        # FTS5's BM25, same scores, without scoring every matching row in SQLite.
        self.in_memory = False
        self.in_memory_min = LEXICAL_IN_MEMORY_MIN  # chunks; FTS5 below
        self.index = LexicalIndex()
        self._version: int | None = None  # data_version it reflects; None: not built
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._rows = 0
        self._count_version: int | None = None  # data_version the chunk count reflects

    def chunk_count(self) -> int:
        """Chunks in the index, recounted after a write (here: :meth:`forget_count`,
        or by another process)."""
        v = self._store.data_version()
        if self._count_version != v:
            self._rows = self._store.chunks.count()
            self._count_version = v
        return self._rows

    def forget_count(self) -> None:
        """This process wrote chunks: count them again."""
        self._count_version = None

    def build(self) -> float:
        """(Re)build the in-memory BM25 postings from the index (see
        :mod:`lexical`); returns the seconds it took. Writes made meanwhile by
        this process are applied at the next search; by another, start a rebuild."""
        t0 = time.perf_counter()
        postings = self._store.postings
        version = self._store.data_version()
        postings.take_fts_touched()  # what was written so far is in the snapshot
        fresh = LexicalIndex()
        fresh.reset(postings.read_postings())
        with self._lock:
            self.index = fresh
            self._version = version
        log.debug(
            "lexical postings of %d chunks read in %.2fs", len(fresh), time.perf_counter() - t0
        )
        return time.perf_counter() - t0

    def _start_build(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return

        def build() -> None:
            try:
                self.build()
            except Exception as exc:  # FTS5 keeps answering; say why once
                log.warning("in-memory lexical ranking unavailable: %s", exc)
                self.in_memory = False

        self._thread = threading.Thread(target=build, name="mdseek-lexical", daemon=True)
        self._thread.start()

    def current(self) -> bool:
        """Is the in-memory BM25 usable now? Applies this process's own writes;
        after a write by another process (or a batch too big to patch) it is
        rebuilt in the background, and FTS5 answers meanwhile."""
        if not self.in_memory:
            return False
        postings = self._store.postings
        if self.chunk_count() < self.in_memory_min:
            postings.take_fts_touched()  # FTS5 answers; nothing to patch later
            with self._lock:
                if self._version is not None:  # the folder shrank: free the postings
                    self.index, self._version = LexicalIndex(), None
            return False
        with self._lock:
            if self._version is None or self._version != self._store.data_version():
                self._version = None
                self._start_build()
                return False
            touched = postings.take_fts_touched()
            if len(touched) > max(2000, len(self.index) // 5):
                self._version = None
                self._start_build()
                return False
            if touched:
                self.index.refresh(touched, postings.row_postings(touched))
            return True

    def terms(self, query: Query, word_terms: dict[str, list[str]] | None = None) -> QueryTerms:
        """The words the lexical retriever searches for (see :meth:`Query.terms_for`):
        stop words out, words in more than half of the chunks out (they cannot
        change a BM25 order), everything else kept however long the query.
        ``word_terms`` (word -> its index terms): count chunks in memory."""
        words = list(query.words)
        df: dict[str, int] | None = None
        rows = 0
        if words:
            if word_terms is not None:
                per = self.index.doc_freq({t for w in words for t in word_terms.get(w, [])})
                df = {w: min((per[t] for t in word_terms.get(w, [])), default=0) for w in words}
                rows = len(self.index)
            else:
                df = self._store.postings.term_doc_freq(words)
                rows = self.chunk_count()
        return query.terms_for(df, rows, self.max_df)

    def hits(self, query: Query, k: int) -> tuple[QueryTerms, list[tuple[int, float]]]:
        """The lexical retriever: terms, then the ``k`` best chunks by BM25 (from
        memory when it is current and every word is one index term, else FTS5)."""
        if self.current():
            words = list(query.words)
            word_terms = dict(zip(words, self._store.postings.word_terms(words), strict=True))
            terms = self.terms(query, word_terms)
            phrases = [word_terms[w] for w in terms.phrases]
            prefix = word_terms.get(terms.prefix, []) if terms.prefix else None
            if all(len(p) == 1 for p in phrases) and (prefix is None or len(prefix) == 1):
                match = [Phrase(p[0]) for p in phrases] + (
                    [Phrase(prefix[0], True)] if prefix else []
                )
                return terms, self.index.search(match, k, self.fts_weights)
        else:
            terms = self.terms(query)
        return terms, self._store.postings.fts_search(terms.match(), k, self.fts_weights)
