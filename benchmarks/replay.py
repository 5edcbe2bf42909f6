"""The replay: a ranking configuration (:class:`Config`) run on cached candidate
lists of one index with the engine's own functions (``Engine.candidates`` then
``retrieve.rank_sections``), checked to rank exactly as ``Engine.search``
(:func:`check_replay`). Every ablation and the judge score variants this way."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mdseek.index.engine.engine import Engine
from mdseek.index.search import retrieve
from mdseek.index.search.dense import PASSAGE_DISCOUNT, DenseIndex
from mdseek.index.search.query import MAX_DF, STOP_WORDS, Query, QueryTerms, question_of, words_of
from mdseek.index.store import survey

from .data import QrelSet
from .metrics import _hits, doc_id

Log = Callable[[str], None]


@dataclass(frozen=True)
class Lexical:
    """How the lexical query is made (the product: stop words out, IDF pruning)."""

    stop_words: bool = True
    max_df: float = MAX_DF
    first_words: int | None = None  # mdseek before: the first 32 distinct words only
    weights: tuple[float, float, float] = retrieve.FTS_WEIGHTS
    question: bool = True  # a long query's question counts twice (lexical and dense)


@dataclass(frozen=True)
class Config:
    ranking: retrieve.Ranking = retrieve.DEFAULT
    lexical: Lexical = Lexical()
    floor: int | None = None  # None: the default index; else an index chunked with this floor
    # Vector pseudo-relevance feedback (Rocchio): the query vector plus ``beta`` times
    # the mean of its ``n`` best dense chunks, renormalised; (n, beta) or None (off).
    # Measured here only: it did not win on the dev halves, so the product has none.
    prf: tuple[int, float] | None = None
    # Passage vectors (passages.py): a chunk's dense score is the best of its own and
    # its passages' cosines; off = the chunks' own vectors only.
    passages: bool = True
    # subtracted from a passage's cosine before its chunk takes the best (DenseIndex)
    passage_discount: float = PASSAGE_DISCOUNT

    def but(self, **kw) -> Config:
        """A copy with ranking or lexical fields changed (``dense_weight=.6``, ``max_df=1``)."""
        rk = {k: v for k, v in kw.items() if k in retrieve.Ranking.__dataclass_fields__}
        lx = {k: v for k, v in kw.items() if k in Lexical.__dataclass_fields__}
        other = {k: v for k, v in kw.items() if k not in rk and k not in lx}
        return dataclasses.replace(
            self,
            ranking=dataclasses.replace(self.ranking, **rk),
            lexical=dataclasses.replace(self.lexical, **lx),
            **other,
        )


DEFAULT = Config()
# mdseek before retrieval v2: 40-token merge floor, every covered section credited,
# the first 32 distinct words (stop words included), reciprocal rank fusion.
BEFORE = Config(
    ranking=retrieve.Ranking(
        fusion="rrf",
        doc_weight=0.0,
        merged="all",
        similarity_floor=0.0,
        dense_weight_matched=None,
        dense_weight_decisive=None,
    ),
    lexical=Lexical(
        stop_words=False, max_df=1.0, first_words=32, question=False, weights=(2.0, 4.0, 1.0)
    ),
    floor=40,
    passages=False,
)


class Replay:
    """Cached candidate lists of one index, replayed under any :class:`Config`."""

    MAX_CANDIDATES = 300

    def __init__(
        self,
        engine: Engine,
        qrels: QrelSet,
        qvecs: dict[str, np.ndarray],
        embed: Callable[[str], np.ndarray] | None = None,
    ):
        """``qvecs``: each query's vector as ``Engine.search`` makes it; ``embed``:
        a text's query vector (default the engine's ``encode_query``; a cache)."""
        self.engine = engine
        self.embed = embed or engine.models.embedder.encode_query
        self.qrels = qrels
        self.qvecs = qvecs
        self.info = survey.chunk_sections(engine.index_path)
        self.sections = {
            k: (doc_id(path), a, b)
            for k, (path, a, b) in survey.section_spans(engine.index_path).items()
        }
        self._lex: dict[Lexical, dict[str, tuple[list, QueryTerms]]] = {}
        self._dense: dict[tuple, dict[str, list]] = {}
        self._plain: dict[str, np.ndarray] = {}  # text -> its own query vector
        self._prf: dict[tuple, np.ndarray] = {}
        self._chunks_only: DenseIndex | None = None

    def index(self, passages: bool, discount: float = PASSAGE_DISCOUNT) -> DenseIndex:
        """The engine's matrix (chunks and passages, with this passage discount),
        or one of the chunks' own vectors."""
        self.engine.dense_side.sync()
        if passages:
            self.engine.dense_side.matrix.passage_discount = discount
            return self.engine.dense_side.matrix
        if self._chunks_only is None:
            self._chunks_only = DenseIndex()
            self._chunks_only.reset(
                *self.engine.store.vectors.chunk_vectors(self.engine.models.model_id)
            )
        return self._chunks_only

    def terms(self, text: str, lx: Lexical) -> QueryTerms:
        if lx == Lexical(weights=lx.weights):
            return self.engine.lexical_terms(self.engine.parse_query(text))  # the product's own
        if lx.first_words is not None:
            text = " ".join(words_of(text)[: lx.first_words])
        query = Query.parse(text, question=lx.question)
        words = list(query.words)
        df = self.engine.store.postings.term_doc_freq(words) if len(words) > 1 else None
        return query.terms_for(
            doc_freq=df,
            rows=self.engine.lexical_side.chunk_count(),
            max_df=lx.max_df,
            stop_words=STOP_WORDS if lx.stop_words else frozenset(),
        )

    def lexical(self, lx: Lexical) -> dict[str, tuple[list, QueryTerms]]:
        """query id -> (FTS hits, the query's lexical terms)."""
        if lx not in self._lex:
            out = {}
            for qid, text in self.qrels.queries.items():
                terms = self.terms(text, lx)
                hits = self.engine.store.postings.fts_search(
                    terms.match(), self.MAX_CANDIDATES, lx.weights
                )
                out[qid] = (hits, terms)
            self._lex[lx] = out
        return self._lex[lx]

    def qvec(
        self,
        qid: str,
        question: bool,
        prf: tuple[int, float] | None = None,
        ask: tuple[str, float] = (retrieve.DEFAULT.ask, retrieve.DEFAULT.ask_weight),
    ) -> np.ndarray:
        """The query vector (``question``: as the engine makes it, else the whole
        text's only; ``ask``: a long query's ask read another way, see
        ``dense_side.join_ask``; ``prf``: moved towards its best dense chunks, see
        :class:`Config`)."""
        text = self.qrels.queries[qid]
        if not question and question_of(text) is not None:
            q = self.encode(text)
        elif ask != (retrieve.DEFAULT.ask, retrieve.DEFAULT.ask_weight):
            q = self.asked(qid, ask)
        else:
            q = self.qvecs[qid]
        if prf is None:
            return q
        key = (qid, question, prf)
        if key not in self._prf:
            n, beta = prf
            self.engine.dense_side.sync()
            top = [
                self.engine.dense_side.matrix.vector(cid)
                for cid, _ in self.engine.dense_side.matrix.search(q, n)
            ]
            v = q + beta * np.mean(top, axis=0)
            self._prf[key] = (v / np.linalg.norm(v)).astype(np.float32)
        return self._prf[key]

    def encode(self, text: str) -> np.ndarray:
        """One text's query vector, embedded once (``self.embed``)."""
        if text not in self._plain:
            self._plain[text] = self.embed(text)
        return self._plain[text]

    def asked(self, qid: str, ask: tuple[str, float]) -> np.ndarray:
        """The query vector with its ask joined as ``ask`` = (how, weight) says."""
        from mdseek.index.engine.dense_side import join_ask

        query = self.engine.parse_query(self.qrels.queries[qid])
        whole = self.encode(query.text)
        if not query.ask or ask[0] == "off":
            return whole
        rk = dataclasses.replace(retrieve.DEFAULT, ask=ask[0], ask_weight=ask[1])
        return join_ask(whole, self.encode(query.ask), rk)

    def dense(
        self,
        question: bool = True,
        prf: tuple[int, float] | None = None,
        passages: bool = True,
        discount: float = PASSAGE_DISCOUNT,
        ask: tuple[str, float] = (retrieve.DEFAULT.ask, retrieve.DEFAULT.ask_weight),
    ) -> dict[str, list]:
        key = (question, prf, passages, discount, ask)
        if key not in self._dense:
            index = self.index(passages, discount)
            self._dense[key] = {
                qid: index.search(self.qvec(qid, question, prf, ask), self.MAX_CANDIDATES)
                for qid in self.qrels.queries
            }
        return self._dense[key]

    def run(self, cfg: Config, mode: str, qids: list[str] | None = None, limit: int = 100) -> dict:
        rk = cfg.ranking
        k = rk.candidates
        lex = self.lexical(cfg.lexical) if mode in ("hybrid", "lexical") else None
        question = cfg.lexical.question
        ask = (rk.ask, rk.ask_weight)
        den = (
            self.dense(question, cfg.prf, cfg.passages, cfg.passage_discount, ask)
            if mode in ("hybrid", "dense")
            else None
        )
        runs = {}
        for qid in qids if qids is not None else list(self.qrels.queries):
            lists = {}
            extra = {}
            bound = rarest = None
            if lex is not None:
                hits, terms = lex[qid]
                bound = terms.bm25_max
                # as Engine.search: no rare-word rule for a query read in parts
                rarest = (
                    None if self.engine.parse_query(self.qrels.queries[qid]).ask else terms.rarest
                )
                lists["lexical"] = hits[:k]
            if den is not None:
                lists["dense"] = den[qid][:k]
                if lex is not None:
                    seen = {cid for cid, _ in lists["dense"]}
                    ids = [cid for cid, _ in lists["lexical"] if cid not in seen]
                    extra["dense"] = self.index(cfg.passages, cfg.passage_discount).scores(
                        self.qvec(qid, question, cfg.prf, ask), ids
                    )
            ranked = retrieve.rank_sections(lists, self.info, rk, extra, bound, None, rarest)
            if mode == "hybrid":  # as Engine.search: the floor needs keyword evidence
                ranked, _ = retrieve.apply_floor(ranked, rk.similarity_floor)
            runs[qid] = [self.sections[f.key] for f in ranked[:limit] if f.key in self.sections]
        self.index(True)  # the engine's matrix as the product has it
        return runs


def check_replay(replay: Replay, engine: Engine, n: int = 25) -> dict[str, str]:
    """The replay with the default config must rank exactly as ``Engine.search``."""
    out = {}
    qids = list(replay.qrels.queries)[:n]
    for mode in ("hybrid", "lexical", "dense"):
        mine = replay.run(DEFAULT, mode, qids, limit=20)
        same = 0
        for qid in qids:
            resp = engine.search(replay.qrels.queries[qid], limit=20, mode=mode)
            same += _hits(resp) == mine[qid]
        out[mode] = f"{same}/{len(qids)}"
    return out
