"""What a search does (``engine.searcher``): read the query once, run the lexical side beside the
query's embedding, fuse both candidate lists into sections
(:func:`retrieve.rank_sections`), optionally rerank, and write each result's
snippet and explain; related sections are a search seeded with a section."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..model.rerank import Reranker
from ..search import retrieve
from ..search.query import Query, QueryTerms, words_of
from ..search.requests import Mode, SearchRequest
from ..store.chunks import Chunks
from ..store.store import SectionRow
from ..text.files import display_path, relpath
from ..text.snippet import plain_text, snippet
from .dense_side import DenseSide
from .lexical_side import LexicalSide
from .model_choice import ModelChoice

log = logging.getLogger(__name__)


@dataclass
class SearchResult:
    path: str
    heading: str
    breadcrumb: str
    level: int
    slug: str
    start_line: int  # section span, 0-based, end exclusive
    end_line: int
    heading_line: int
    heading_end_line: int
    score: float
    lexical_rank: int | None
    dense_rank: int | None
    snippet: str
    explain: dict | None = None  # score parts, when asked (Engine.search(explain=True))

    def to_dict(self) -> dict:
        d = asdict(self)
        if d["explain"] is None:
            del d["explain"]
        return d

    def as_json(self, heading: str) -> dict:
        """The result as the front ends' JSON shows it (``mdseek search --json``,
        ``mdseek/search``): lines 1-based and inclusive, ``heading`` as the file
        writes it (inline markup kept) beside ``heading_text``, plain; ``explain``
        only when the search asked for it."""
        first, last = self.lines()
        out = {
            "path": display_path(self.path),
            "heading": heading,
            "heading_text": self.heading,
            "breadcrumb": self.breadcrumb,
            "anchor": self.slug,
            "level": self.level,  # the heading's level (a picker's icon)
            "start_line": first,
            "end_line": last,
            "heading_line": self.heading_lines()[0],
            "score": self.score,
            "lexical_rank": self.lexical_rank,
            "dense_rank": self.dense_rank,
            "snippet": self.snippet,
        }
        if self.explain is not None:
            out["explain"] = self.explain
        return out

    def lines(self) -> tuple[int, int]:
        """(first, last) line of the section, 1-based and inclusive: what people,
        the CLI's JSON, MCP and ``mdseek/search`` show (the engine is 0-based, end exclusive)."""
        return self.start_line + 1, max(self.start_line + 1, self.end_line)

    def heading_lines(self) -> tuple[int, int]:
        """(first, last) line of the heading itself, 1-based and inclusive."""
        return self.heading_line + 1, max(self.heading_line + 1, self.heading_end_line)


@dataclass
class SearchResponse:
    results: list[SearchResult]
    mode: Mode  # what ranked
    note: str | None = None
    # how well the best candidates match, on an absolute scale (retrieve.evidence)
    evidence: dict | None = None


class Searcher:
    """Searching an :class:`engine.Engine`'s index (see the module)."""

    def __init__(
        self,
        root: Path,
        chunks: Chunks,
        models: ModelChoice,
        dense: DenseSide,
        lexical: LexicalSide,
    ):
        """``root``: the folder (a related section's path is relative to it);
        ``chunks``: the store's sections and chunks, read for results."""
        self._root = root
        self._chunks = chunks
        self._models = models
        self._dense = dense
        self._lexical = lexical
        self.ranking = retrieve.DEFAULT  # fusion and document-context settings
        self.reranker: Reranker | None = None  # an optional second stage (index/model/rerank.py)
        self.emphasise_question = True  # long queries: the question counts twice
        self._warned_lexical = False
        self._lock = threading.Lock()
        self._threads: ThreadPoolExecutor | None = (
            None  # a query's lexical side, beside its embedding
        )

    def close(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=True)

    def _lexical_hits(
        self, query: Query, depth: int | None = None
    ) -> tuple[QueryTerms, list[tuple[int, float]]]:
        return self._lexical.hits(query, depth or self.ranking.candidates)

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._threads is None:
                self._threads = ThreadPoolExecutor(2, thread_name_prefix="mdseek-query")
            return self._threads

    def query_vector(self, query: Query):
        """The query's dense vector(s) as this searcher's ranking reads a long query."""
        return self._dense.query_vector(query, self.ranking)

    def parse_query(self, text: str | None, prefix_last: bool = False) -> Query:
        """Read a query once (see :class:`query.Query`); a long query's question
        counts twice unless ``emphasise_question`` is off."""
        return Query.parse(text, prefix_last, question=self.emphasise_question)

    def _prefetch(self) -> None:
        """What a search needs besides the model -- the snippet parser, the
        vector matrix -- read while the model loads. Never raises: whatever
        fails here fails again, and is reported, in the search."""
        try:
            plain_text("*warm* up")
            self._dense.sync()
        except Exception as exc:  # noqa: BLE001 - an optimisation only
            log.debug("prefetch skipped: %s", exc)

    def warm_up(self) -> None:
        """Pay a first search's one-time costs now (:meth:`_prefetch`, and the
        model's first run: ONNX Runtime allocates on it), so the first query a
        user makes is as fast as the next."""
        self._prefetch()
        try:
            if self._models.embedder.loaded and self._models.embedder.error is None:
                self._models.embedder.encode(["warm up the model"], _count=False)
        except Exception as exc:  # noqa: BLE001 - the search reports it
            log.debug("warm-up skipped: %s", exc)

    def candidates(
        self,
        query: Query,
        mode: Mode,
        lexical: tuple[QueryTerms, list[tuple[int, float]]] | None = None,
        depth: int | None = None,
    ) -> tuple[dict[str, list[tuple[int, float]]], dict[str, dict[int, float]], Query]:
        """Each retriever's best chunks, (chunk id, score) best first, the dense
        score of every lexical candidate (exact: one row each), and the query
        with its lexical terms. Dense runs when the query has a vector.
        ``lexical``: the lexical side's answer, when already computed;
        ``depth``: chunks asked of each retriever (a filtered search asks more)."""
        lists: dict[str, list[tuple[int, float]]] = {}
        extra: dict[str, dict[int, float]] = {}
        k = depth or self.ranking.candidates
        if mode in (Mode.HYBRID, Mode.LEXICAL):
            terms, lists["lexical"] = lexical or self._lexical_hits(query, depth)
            query = query.with_terms(terms)
        qv = query.vector
        if mode in (Mode.HYBRID, Mode.DENSE) and qv is not None:
            self._dense.sync()
            lists["dense"] = self._dense.matrix.search(qv, k)
            if "lexical" in lists:
                seen = {cid for cid, _ in lists["dense"]}
                ids = [cid for cid, _ in lists["lexical"] if cid not in seen]
                extra["dense"] = self._dense.matrix.scores(qv, ids)
        return lists, extra, query

    def search(
        self,
        request: SearchRequest | Query | str,
        *,
        prefix_last: bool = False,
        wait_for_model: bool = True,
        exclude_path: str | None = None,
        only_paths: frozenset[str] | None = None,
        depth: int | None = None,
        **options: Any,
    ) -> SearchResponse:
        """Sections ranked for ``request`` (the search, its options read here: the
        query, ``limit``, ``mode``, ``explain``, which adds each result's score
        parts). A :class:`Query` or a text (read by :meth:`parse_query`) makes one
        with ``options`` (tests, benchmarks, related sections). The engine's own
        knobs beside it: ``only_paths``, sections of these documents only (a
        filter), from the best ``depth`` chunks of each retriever; ``exclude_path``;
        ``wait_for_model`` False, lexical while the model loads."""
        if not isinstance(request, SearchRequest):
            if not isinstance(request, Query):
                request = self.parse_query(request, prefix_last)
            request = SearchRequest(request, **{"mode": Mode.HYBRID, **options})
        q, limit, mode, explain = request.query, request.limit, request.mode, request.explain
        if not q.seeded and not q.prefix_last and not q.blank:
            weak = q.unsearchable()
            if weak is not None:  # nothing to rank by: say so instead of confident scores
                return SearchResponse([], mode, weak)
        note = None
        use_dense = mode in (Mode.HYBRID, Mode.DENSE) and (not q.blank or q.seeded)
        lexical: Future | None = None
        if use_dense and mode == Mode.HYBRID and not q.seeded:
            # The lexical side runs while the model loads (a cold start) and embeds the query.
            lexical = self._pool().submit(self._lexical_hits, q, depth)
        if use_dense and not self._models.embedder.loaded:
            if wait_for_model and self._models.embedder.error is None:
                self._pool().submit(self._prefetch)
                self._models.embedder.available()
            if not self._models.embedder.loaded:
                use_dense = False
                err = self._models.embedder.error
                note = (
                    f"lexical results only: {err}"
                    if err
                    else "lexical results only: the embedding model is still loading"
                )
                if err and not self._warned_lexical:
                    log.warning("%s", note)
                    self._warned_lexical = True
        if not use_dense:
            q = q.with_vector(None)
        elif not q.seeded:
            q = q.with_vector(self.query_vector(q))
        lexical_mode = mode
        if mode == Mode.HYBRID and q.vector is None:
            lexical_mode = Mode.LEXICAL
        lists, extra, q = self.candidates(
            q, lexical_mode, lexical.result() if lexical is not None else None, depth
        )
        all_ids = {cid for hits in lists.values() for cid, _ in hits} | {
            cid for e in extra.values() for cid in e
        }
        spans = self._chunks.spans(all_ids)
        chunk_info = {
            cid: (doc_id, first, last)
            for cid, (doc_id, path, first, last) in spans.items()
            if (exclude_path is None or path != exclude_path)
            and (only_paths is None or path in only_paths)
        }
        unscored = None
        if "dense" in lists and "lexical" in lists:  # chunks with no vector yet (a first index)
            have = {cid for cid, _ in lists["dense"]} | set(extra.get("dense", {}))
            unscored = {"dense": {cid for cid, _ in lists["lexical"] if cid not in have}}
        ranked = retrieve.rank_sections(
            lists,
            chunk_info,
            self.ranking,
            extra,
            q.bm25_max,
            unscored,
            q.rare_rule_input,
        )
        ev = retrieve.evidence(
            ranked,
            self._dense.matrix.typical() if q.vector is not None else None,
            not q.seeded
            and q.vector is not None
            and self._holds_every_word(q, lists.get("lexical")),
            q.ask is not None,
        )
        no_match = not q.seeded and retrieve.weak_match(
            ev, *retrieve.weak_for(self._models.model_id, self.ranking)
        )
        if not q.seeded and len(lists) == 2:
            # hybrid: what meaning alone found weakly is left out (lexical and dense
            # rankings, and related sections, are shown whole)
            floor = retrieve.floor_for(self._models.model_id, self.ranking)
            ranked, cut = retrieve.apply_floor(ranked, floor)
            if cut and len(ranked) < limit:
                why = retrieve.floor_note(len(ranked), cut, floor, no_match)
                note = f"{note}; {why}" if note else why
        reranked: dict[int, float] = {}
        if self.reranker is not None and not q.seeded and not q.blank and ranked:
            ranked, reranked = self.reranker.reorder(q.text, ranked, self._passages)
        ranked = ranked[: max(0, limit)]
        sections = self._chunks.sections([f.key for f in ranked])
        texts = self._chunks.texts(f.best_chunk for f in ranked if f.best_chunk is not None)
        passages = self._passages_found(q, ranked, texts) if q.vector is not None else {}
        results = []
        for f in ranked:
            s = sections.get(f.key)
            if s is None:
                continue
            cid = f.best_chunk
            text = texts.get(cid, "") if cid is not None else ""
            found = passages.get(id(f))
            if found is not None:  # meaning found it through one passage: show that one
                text = text[found["start"] : found["end"]]
            r = self._result(s, f, text, q.highlight)
            if explain:
                r.explain = f.explain(self.ranking)
                if found is not None:
                    r.explain["dense_passage"] = {
                        "cosine": round(found["cosine"], 6),
                        "lines": found["lines"],
                    }
                if q.terms is not None:
                    r.explain.update(q.terms.explain())
                if reranked and self.reranker is not None:
                    r.explain["rerank"] = {
                        "score": None if id(f) not in reranked else round(reranked[id(f)], 6),
                        "ms": self.reranker.stats()["last_ms"],
                    }
            results.append(r)
        used = (
            Mode.HYBRID if len(lists) == 2 else (Mode.DENSE if "dense" in lists else Mode.LEXICAL)
        )
        if no_match:  # said first: it is what the reader needs to know
            note = f"{retrieve.NO_GOOD_MATCH}; {note}" if note else retrieve.NO_GOOD_MATCH
        return SearchResponse(results, used, note, ev)

    def _holds_every_word(self, q: Query, lexical: Sequence[tuple[int, float]] | None) -> bool:
        """Whether the best keyword candidate holds every word searched (the last
        one as a prefix, as you type): a section a keyword matches in every word
        answers the query, however far its meaning (an identifier, a rare name)."""
        terms = q.terms
        if not lexical or terms is None or not (terms.words or terms.prefix):
            return False
        cid = lexical[0][0]
        held = set(words_of(self._chunks.texts([cid]).get(cid, "")))
        if any(w not in held for w in terms.words):
            return False
        return terms.prefix is None or any(w.startswith(terms.prefix) for w in held)

    def _passages_found(
        self, q: Query, ranked: Sequence[retrieve.Scored], texts: dict[int, str]
    ) -> dict[int, dict]:
        """For the results whose shown chunk is the dense side's and scored by
        one of its passages (:mod:`dense`): id(result) -> the passage's place in
        the chunk's text, its cosine and its lines (1-based, inclusive)."""
        assert q.vector is not None
        dense = [
            f for f in ranked if f.best_chunk is not None and f.best_chunk == f.chunks.get("dense")
        ]
        best = self._dense.matrix.best_rows(q.vector, [f.best_chunk for f in dense])
        pids = {-key for cosine, key in best.values() if key < 0}
        if not pids:
            return {}
        places = self._chunks.passage_places(pids)
        firsts = self._chunks.first_lines({c for c, _, _ in places.values()})
        out: dict[int, dict] = {}
        for f in dense:
            cosine, key = best.get(f.best_chunk, (0.0, 0))  # type: ignore[arg-type]
            place = places.get(-key)
            if key >= 0 or place is None:
                continue
            cid, a, b = place
            text = texts.get(cid, "")
            first = firsts.get(cid, 0) + text.count("\n", 0, a) + 1
            last = first + text.count("\n", a, b) - (1 if text[a:b].endswith("\n") else 0)
            out[id(f)] = {"start": a, "end": b, "cosine": cosine, "lines": [first, last]}
        return out

    def _passages(self, ranked: Sequence[retrieve.Scored]) -> list[str]:
        """What a reranker reads of each section: breadcrumb, blank line, best chunk."""
        sections = self._chunks.sections([f.key for f in ranked])
        texts = self._chunks.texts(f.best_chunk for f in ranked if f.best_chunk is not None)
        out = []
        for f in ranked:
            s = sections.get(f.key)
            text = texts.get(f.best_chunk, "") if f.best_chunk is not None else ""
            out.append(f"{s.breadcrumb}\n\n{text}" if s is not None else text)
        return out

    @staticmethod
    def _result(s: SectionRow, f: retrieve.Scored, text: str, terms: list[str]) -> SearchResult:
        return SearchResult(
            path=s.path,
            heading=s.heading,
            breadcrumb=s.breadcrumb,
            level=s.level,
            slug=s.slug,
            start_line=s.start_line,
            end_line=s.end_line,
            heading_line=s.start_line,
            heading_end_line=s.heading_end_line,
            score=round(f.score, 6),
            lexical_rank=f.ranks.get("lexical"),
            dense_rank=f.ranks.get("dense"),
            # never empty: a section of only a heading (or a list of links) shows its heading
            snippet=snippet(text, terms) or s.heading or s.breadcrumb,
        )

    def related(self, path: str, ordinal: int, limit: int = 5) -> SearchResponse:
        """Sections elsewhere in the workspace about the same topic as one section:
        hybrid retrieval seeded with the section itself (its text as the lexical
        query, the mean of its chunk vectors as the dense query)."""
        rel = _rel(self._root, path)
        chunks = [
            c
            for c in self._chunks.document_chunks(rel)
            if c.section_first <= ordinal <= c.section_last
        ]
        if not chunks:
            return SearchResponse([], Mode.LEXICAL, "section not indexed")
        text = " ".join(c.embedding_text for c in chunks)[:2000]
        seed = None
        if self._models.embedder.loaded:
            self._dense.sync()
            vecs = [v for v in (self._dense.matrix.vector(c.id) for c in chunks) if v is not None]
            if vecs:
                m = np.mean(vecs, axis=0)
                seed = (m / (np.linalg.norm(m) or 1.0)).astype(np.float32)
        if seed is None:  # lexical only, the text read as any query's
            query, mode = self.parse_query(text), Mode.LEXICAL
        else:
            query, mode = Query.seed(text, seed), Mode.HYBRID
        return self.search(query, limit=limit, mode=mode, wait_for_model=False, exclude_path=rel)


def _rel(root: Path, path: str | Path) -> str:
    """A path relative to the folder, posix (one already relative stays as given)."""
    p = Path(path)
    return relpath(root, p) if p.is_absolute() else p.as_posix()
