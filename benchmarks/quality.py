"""Retrieval quality on every corpus the benchmark has: SciFact (BEIR, document
level), the product docs (document and section level) and the fixture
handbook's paraphrase questions (section level).

* The headline numbers run the real product path, ``Engine.search``, query
  embedding included, with the defaults of :mod:`mdseek.index.search.retrieve`, beside
  the plain baseline of :mod:`benchmarks.baseline` on the same queries.
* Ablations (one change at a time, from mdseek as it was to the default, and
  each ranking knob around the default) replay the same functions
  (``Engine.candidates`` then ``retrieve.rank_sections``) from cached candidate
  lists; the run checks that the replay ranks exactly as ``Engine.search``.
* Every figure is given for the two halves of the queries, ``dev`` (where a
  choice may be made) and ``test`` (held out), split by a hash of the query id
  (:func:`benchmarks.data.split_of`).
"""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mdseek.index.engine.engine import Engine
from mdseek.index.search import retrieve
from mdseek.index.search.dense import PASSAGE_DISCOUNT, DenseIndex
from mdseek.index.search.query import MAX_DF, STOP_WORDS, Query, QueryTerms, question_of, words_of
from mdseek.index.store import survey
from mdseek.index.text.coverage import Coverage, window_coverage
from mdseek.index.text.files import FileFilter, scan
from mdseek.index.text.parse import parse_bytes

from .data import QrelSet, split_qids

Log = Callable[[str], None]

# Published nDCG@10 on the SciFact test split (BEIR leaderboard / MTEB).
PUBLISHED_SCIFACT = {"BM25": 0.665, "all-MiniLM-L6-v2": 0.645}

# Ranked items: (doc id = path without .md, start line, end line), 0-based end-exclusive.
Hit = tuple[str, int, int]

SPLITS = ("dev", "test")


def doc_id(path: str) -> str:
    return path.removesuffix(".md")


# -- metrics ------------------------------------------------------------------


def _dcg(gains: Sequence[float], k: int) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def rank_metrics(gains: Sequence[float], ideal: Sequence[float]) -> dict[str, float]:
    """nDCG@10, Recall@10, Recall@100 and MRR@10 of one ranking.

    ``gains``: the grade of each returned item in order (0 = not relevant);
    ``ideal``: the grades of every relevant item (for the ideal DCG and recall)."""
    ideal = sorted(ideal, reverse=True)
    n_rel = sum(1 for g in ideal if g > 0)
    idcg = _dcg(ideal, 10)
    hits = [1 if g > 0 else 0 for g in gains]
    first = next((i for i, h in enumerate(hits[:10]) if h), None)
    return {
        "ndcg@10": _dcg(gains, 10) / idcg if idcg else 0.0,
        "recall@10": sum(hits[:10]) / n_rel if n_rel else 0.0,
        "recall@100": sum(hits[:100]) / n_rel if n_rel else 0.0,
        "mrr@10": 1.0 / (first + 1) if first is not None else 0.0,
    }


def doc_gains(hits: Sequence[Hit], rels: dict[str, int]) -> list[float]:
    """Document ranking from section hits: first occurrence of each document counts."""
    seen: set[str] = set()
    out = []
    for doc, _, _ in hits:
        if doc in seen:
            continue
        seen.add(doc)
        out.append(float(rels.get(doc, 0)))
    return out


def section_gains(hits: Sequence[Hit], qrels: list[tuple[str, int]]) -> list[float]:
    """A returned section is relevant when it is a judged section: same document,
    and it starts on the judged heading line (qrel lines are 1-based, hits
    0-based). Each judged section is credited once."""
    left = set(qrels)
    out = []
    for doc, start, _end in hits:
        key = (doc, start + 1)
        if key in left:
            left.discard(key)
            out.append(1.0)
        else:
            out.append(0.0)
    return out


def mean_metrics(per_query: list[dict[str, float]]) -> dict[str, float]:
    if not per_query:
        return {}
    keys = per_query[0].keys()
    return {k: round(sum(m[k] for m in per_query) / len(per_query), 4) for k in keys}


def score_runs(runs: dict[str, list[Hit]], qrels: QrelSet, sections: bool) -> dict[str, dict]:
    """Mean metrics of query id -> hits: {"doc": {...}, "section": {...}} (section if asked)."""
    docs = []
    secs = []
    for qid, hits in runs.items():
        rels = qrels.docs.get(qid, {})
        docs.append(rank_metrics(doc_gains(hits, rels), list(rels.values())))
        if sections:
            sq = qrels.sections.get(qid, [])
            secs.append(rank_metrics(section_gains(hits, sq), [1.0] * len(sq)))
    out: dict = {"doc": mean_metrics(docs), "queries": len(docs)}
    if sections:
        out["section"] = mean_metrics(secs)
    return out


def ndcg_of(hits: Sequence[Hit], c: Corpus, qid: str) -> float:
    """One query's nDCG@10 at its corpus' level (sections, else documents)."""
    if c.sections:
        sq = c.qrels.sections.get(qid, [])
        return rank_metrics(section_gains(hits, sq), [1.0] * len(sq))["ndcg@10"]
    rels = c.qrels.docs.get(qid, {})
    return rank_metrics(doc_gains(hits, rels), list(rels.values()))["ndcg@10"]


def per_query(c: Corpus, runs: dict[str, list[Hit]]) -> dict[str, float]:
    """query id -> nDCG@10 at the corpus' level (the judge's input)."""
    return {q: ndcg_of(hits, c, q) for q, hits in runs.items()}


def score_splits(runs: dict[str, list[Hit]], qrels: QrelSet, sections: bool) -> dict[str, dict]:
    """:func:`score_runs` on all queries and on each half."""
    out = {"all": score_runs(runs, qrels, sections)}
    for split in SPLITS:
        keep = split_qids(runs, split, qrels.groups)
        out[split] = score_runs({q: runs[q] for q in keep}, qrels, sections)
    return out


# -- corpora --------------------------------------------------------------------


@dataclass
class Corpus:
    """One evaluation corpus: its workspace, queries, and the level that matters."""

    name: str
    label: str
    root: Path
    qrels: QrelSet
    sections: bool  # section-level qrels exist
    engine: Engine | None = None
    qvecs: dict[str, np.ndarray] = field(default_factory=dict)
    baseline_runs: dict[str, list] = field(default_factory=dict)  # the plain baseline, hybrid

    @property
    def primary(self) -> str:
        return "section" if self.sections else "doc"


# -- the product path ---------------------------------------------------------


def _hits(resp) -> list[Hit]:
    return [(doc_id(r.path), r.start_line, r.end_line) for r in resp.results]


def run_engine(engine: Engine, qrels: QrelSet, mode: str, limit: int = 100) -> tuple[dict, float]:
    """query id -> hits through ``Engine.search``; also the median query time (ms)."""
    runs: dict[str, list[Hit]] = {}
    times = []
    for qid, text in qrels.queries.items():
        t0 = time.perf_counter()
        resp = engine.search(text, limit=limit, mode=mode)
        times.append(time.perf_counter() - t0)
        if resp.mode != mode:
            raise RuntimeError(f"asked for {mode} search, engine answered {resp.mode}: {resp.note}")
        runs[qid] = _hits(resp)
    return runs, float(np.median(times) * 1000) if times else 0.0


def evaluate_modes(c: Corpus, log: Log) -> dict:
    """mdseek's three modes through ``Engine.search``, on all queries and each half."""
    assert c.engine is not None
    out = {}
    for mode in ("hybrid", "lexical", "dense"):
        runs, ms = run_engine(c.engine, c.qrels, mode)
        out[mode] = score_splits(runs, c.qrels, c.sections)
        out[mode]["median_query_ms"] = round(ms, 1)
        m = out[mode]["all"]
        log(
            f"    {c.name} {mode:8} doc nDCG@10 {m['doc']['ndcg@10']:.3f}"
            + (f"  section nDCG@10 {m['section']['ndcg@10']:.3f}" if c.sections else "")
            + f"  ({ms:.0f} ms/query)"
        )
    return out


def evaluate_baseline(c: Corpus, baseline, log: Log) -> dict:
    """The plain baseline (benchmarks/baseline.py), three modes. Its query vector is
    the whole query's (mdseek's own adds a long query's question; short queries,
    every query of SciFact and the short forms, have the same vector)."""
    assert c.engine is not None
    plain = {
        q: c.qvecs[q] if question_of(t) is None else c.engine.embedder.encode_query(t)
        for q, t in c.qrels.queries.items()
    }
    out = {}
    for mode in ("hybrid", "lexical", "dense"):
        runs = {q: baseline.search(t, plain[q], mode) for q, t in c.qrels.queries.items()}
        out[mode] = score_splits(runs, c.qrels, c.sections)
        if mode == "hybrid":
            c.baseline_runs = runs
    m = out["hybrid"]["all"][c.primary]
    log(f"    {c.name} plain baseline hybrid {c.primary} nDCG@10 {m['ndcg@10']:.3f}")
    return out


# -- replayable pipeline for ablations ---------------------------------------


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
        self.embed = embed or engine.embedder.encode_query
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
            self.engine.dense.passage_discount = discount
            return self.engine.dense
        if self._chunks_only is None:
            self._chunks_only = DenseIndex()
            self._chunks_only.reset(*self.engine.store.vectors.chunk_vectors(self.engine.model_id))
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
            top = [self.engine.dense.vector(cid) for cid, _ in self.engine.dense.search(q, n)]
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


class Bench:
    """Every corpus's replays (one per chunk floor), for ablations and tuning."""

    def __init__(self, corpora: list[Corpus], replays: dict[tuple[str, int | None], Replay]):
        self.corpora = corpora
        self.replays = replays
        self.splits = {
            c.name: {s: split_qids(c.qrels.queries, s, c.qrels.groups) for s in SPLITS}
            for c in corpora
        }
        # (config, mode) -> corpus -> query id -> nDCG@10 at its level (the judge's input)
        self.per_query: dict[tuple[Config, str], dict[str, dict[str, float]]] = {}

    def score(self, cfg: Config, mode: str = "hybrid") -> dict[str, dict]:
        """corpus -> split -> {"doc": {...}, "section": {...}}; each query's
        nDCG@10 is kept in :attr:`per_query`."""
        out: dict[str, dict] = {}
        pq = self.per_query.setdefault((cfg, mode), {})
        for c in self.corpora:
            rp = self.replays.get((c.name, cfg.floor)) or self.replays[(c.name, None)]
            out[c.name] = {}
            for split in SPLITS:
                runs = rp.run(cfg, mode, self.splits[c.name][split])
                out[c.name][split] = score_runs(runs, c.qrels, c.sections)
                pq.setdefault(c.name, {}).update(per_query(c, runs))
        return out

    def objective(self, scores: dict[str, dict], split: str = "dev") -> float:
        """Mean nDCG@10 over the corpora at their primary level, plus the product
        docs at document level (so the section win cannot cost the document one)."""
        vals = []
        for c in self.corpora:
            m = scores[c.name][split]
            if not m.get(c.primary):  # a half without queries (--quick)
                continue
            vals.append(m[c.primary]["ndcg@10"])
            if c.sections and c.name == "rhdh":
                vals.append(m["doc"]["ndcg@10"])
        return sum(vals) / len(vals) if vals else 0.0


def _row(label: str, scores: dict, bench: Bench, **extra) -> dict:
    row: dict = {"label": label, **extra}
    for c in bench.corpora:
        for split in SPLITS:
            m = scores[c.name][split]
            row[f"{c.name}/{split}"] = {
                lvl: {k: m[lvl][k] for k in ("ndcg@10", "recall@10", "mrr@10")}
                for lvl in ("doc", "section")
                if m.get(lvl)  # empty when a half has no query (--quick)
            }
    row["objective_dev"] = round(bench.objective(scores, "dev"), 4)
    row["objective_test"] = round(bench.objective(scores, "test"), 4)
    return row


# One change at a time, from mdseek before retrieval v2 to the default.
_D = retrieve.DEFAULT
CHAIN: list[tuple[str, dict]] = [
    ("mdseek before: floor 40, first 32 words, RRF k=60", {}),
    ("+ every query word (no 32-word cap)", {"first_words": None}),
    ("+ merged chunk credits its first section only", {"merged": "first"}),
    ("+ floor 0: every section its own vector", {"floor": None}),
    ("+ stop words left out", {"stop_words": True}),
    ("+ words in over half the chunks left out", {"max_df": MAX_DF}),
    ("+ a long query's question counts twice", {"question": True}),
    ("+ convex fusion of normalised scores", {
        "fusion": "convex", "dense_weight": _D.dense_weight, "lexical_norm": _D.lexical_norm,
        "dense_norm": _D.dense_norm, "bm25_share": _D.bm25_share, "doc_weight": _D.doc_weight,
    }),
    (f"+ score floor {_D.similarity_floor:g} (benchmarks/floor.py)", {
        "similarity_floor": _D.similarity_floor,
    }),
    ("+ passage vectors (a section scored by its best paragraph too)", {"passages": True}),
    ("+ keyword weight grows with the match", {
        "dense_weight_matched": _D.dense_weight_matched, "match_power": _D.match_power,
    }),
    ("+ a rare word's lone keyword section has its say (issue 48)", {
        "dense_weight_decisive": _D.dense_weight_decisive, "rare_df": _D.rare_df,
    }),
]  # fmt: skip

# Each knob around the default (the others at their defaults).
KNOBS: list[tuple[str, list]] = [
    ("fusion", [("rrf k=60", {"fusion": "rrf"}), ("convex", {})]),
    ("rrf_k (rrf fusion)", [(str(k), {"fusion": "rrf", "rrf_k": k}) for k in (10, 30, 60)]),
    ("dense_weight", [(f"{w:g}", {"dense_weight": w}) for w in (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)]),
    ("passage vectors", [("on", {"passages": True}), ("off", {"passages": False})]),
    ("passage_discount", [(f"{d:g}", {"passage_discount": d}) for d in sorted({0.0, 0.01, 0.02, 0.04, PASSAGE_DISCOUNT})]),
    ("dense_weight_matched (keyword weight grows with the match)", [
        ("off", {"dense_weight_matched": None}),
        *((f"{w:g}", {"dense_weight_matched": w}) for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)),
    ]),
    ("match_power", [(f"{x:g}", {"match_power": x}) for x in (1.0, 2.0, 3.0)]),
    ("dense_weight_decisive (a rare word's lone keyword section)", [
        ("off", {"dense_weight_decisive": None}),
        *((f"{w:g}", {"dense_weight_decisive": w}) for w in (0.3, 0.4, 0.5)),
        ("0.4, any query (no rare word needed)", {"rare_df": None}),
    ]),
    ("lexical_norm", [
        ("minmax", {}), ("max", {"lexical_norm": "max"}), ("bm25 bound", {"lexical_norm": "bm25"}),
        ("bm25 bound, dense weight 0.4", {"lexical_norm": "bm25", "dense_weight": 0.4}),
        ("bm25 0.3 x bound, dense weight 0.7", {"lexical_norm": "bm25", "bm25_share": 0.3, "dense_weight": 0.7}),
    ]),
    ("dense_norm", [(n, {"dense_norm": n}) for n in ("max", "minmax", "raw")]),
    ("doc_weight (document term)", [(f"{w:g}", {"doc_weight": w}) for w in (0.0, 0.1, 0.2, 0.3)]),
    ("candidates", [(str(k), {"candidates": k}) for k in (50, 100, 200)]),
    ("max_df (IDF pruning)", [(f"{x:g}", {"max_df": x}) for x in (0.05, 0.1, 0.2, 0.5, 1.0)]),
    ("stop_words", [("out", {}), ("kept", {"stop_words": False})]),
    ("question counts twice", [("on", {}), ("off", {"question": False})]),
    ("fts_weights", [("/".join(f"{x:g}" for x in w), {"weights": w}) for w in ((1.0, 1.0, 1.0), (2.0, 4.0, 1.0), (1.0, 2.0, 1.0))]),
    ("chunk floor", [("0", {}), ("40 (no passages)", {"floor": 40, "passages": False})]),
    ("similarity_floor (score floor)", [(f"{f:g}", {"similarity_floor": f}) for f in sorted({0.0, 0.2, _D.similarity_floor, 0.3})]),
    ("vector PRF (Rocchio: top n, beta)", [("off", {}), *((f"{n}, {b:g}", {"prf": (n, b)}) for n, b in ((3, 0.3), (5, 0.5), (10, 0.5)))]),
]  # fmt: skip


def ablations(bench: Bench, log: Log) -> dict:
    """The chain (one change at a time) and every knob around the default,
    hybrid, on each corpus and half; plus each mode of the default."""
    t0 = time.perf_counter()
    chain = []
    cfg = BEFORE
    for label, change in CHAIN:
        cfg = cfg.but(**change)
        chain.append(_row(label, bench.score(cfg), bench))
    if cfg != DEFAULT:
        raise RuntimeError(f"the ablation chain does not end at the default: {cfg} != {DEFAULT}")
    knobs = []
    for knob, values in KNOBS:
        for label, change in values:
            c = DEFAULT.but(**change)
            knobs.append(_row(label, bench.score(c), bench, knob=knob, default=c == DEFAULT))
    modes = [_row(mode, bench.score(DEFAULT, mode), bench) for mode in ("lexical", "dense")]
    log(
        f"  ablations: {len(chain) + len(knobs) + len(modes)} configurations in {time.perf_counter() - t0:.0f}s"
    )
    return {"chain": chain, "knobs": knobs, "modes": modes}


# -- the whole quality part ----------------------------------------------------


def _copy_index(src: Path, dest: Path) -> None:
    """Copy an index consistently (WAL included)."""
    survey.copy(src, dest)


def floor_engine(c: Corpus, floor: int, log: Log) -> Engine:
    """The corpus indexed with another chunk floor, without passages (as mdseek
    before): a copy of its index re-chunked (vectors are keyed by text, so only
    chunks whose text changed are embedded)."""
    assert c.engine is not None
    idx = c.engine.index_path.parent / f"index-floor{floor}.sqlite"
    if not idx.exists():
        _copy_index(c.engine.index_path, idx)
    eng = Engine(c.root, index_path=idx, chunk_floor=floor, passage_words=0)
    rep = eng.index()
    log(f"  {c.name}: floor {floor} index, {rep.chunks} chunks ({rep.embedded} embedded)")
    return eng


def run(corpora: list[Corpus], log: Log) -> dict:
    """Index each corpus (or reuse its index), run the product path and the plain
    baseline on it, then the ablations over every corpus together."""
    from .baseline import PlainBaseline

    out: dict = {"corpora": {}, "replay_check": {}}
    replays: dict[tuple[str, int | None], Replay] = {}
    engines: dict[Path, Engine] = {c.root: c.engine for c in corpora if c.engine is not None}
    floor_engines: dict[Path, Engine] = {}
    for c in corpora:
        t0 = time.perf_counter()
        if c.engine is None:
            c.engine = engines.get(c.root) or Engine(
                c.root, index_path=c.root.parent / "index.sqlite"
            )
            engines[c.root] = c.engine
        rep = c.engine.index()
        if rep.lexical_only_reason:
            raise RuntimeError(rep.lexical_only_reason)
        log(f"quality: {c.label}, {rep.files} files, {rep.chunks} chunks ({rep.embedded} embedded,"
            f" {time.perf_counter() - t0:.0f}s); {len(c.qrels.queries)} queries")  # fmt: skip
        r = out["corpora"][c.name] = {
            "label": c.label,
            "queries": len(c.qrels.queries),
            "levels": ["doc", "section"] if c.sections else ["doc"],
            "index": {
                "files": rep.files,
                "chunks": rep.chunks,
                "sections": c.engine.store.counts()["sections"],
            },
        }
        c.qvecs, _ = query_vectors(c.engine, c.qrels)
        r["modes"] = evaluate_modes(c, log)
        bl = PlainBaseline(c.root, c.engine.embedder.encode, c.root.parent / "baseline-vectors.npz")
        r["baseline"] = evaluate_baseline(c, bl, log)
        r["baseline"]["vectors"] = len(bl.items)
        bl.close()
        if c.name == "rhdh":
            r["dense_baselines"] = dense_baselines(c.root, c.qrels, c.engine.embedder, c.qvecs, log)
        replays[(c.name, None)] = rp = Replay(c.engine, c.qrels, c.qvecs)
        out["replay_check"][c.name] = check_replay(rp, c.engine)
        if c.root not in floor_engines:
            floor_engines[c.root] = floor_engine(c, 40, log)
        replays[(c.name, 40)] = Replay(floor_engines[c.root], c.qrels, c.qvecs)
    if corpora:
        log("quality: ablations (replayed from cached candidate lists)")
        bench = Bench(corpora, replays)
        out["ablations"] = ablations(bench, log)
        base = {c.name: out["corpora"][c.name]["baseline"]["hybrid"] for c in corpora}
        out["ablations"]["baseline"] = _row("plain baseline", base, bench)
        out["_bench"] = bench  # for the judge's section (benchmarks/judge.py), then dropped
    for e in floor_engines.values():
        e.close()
    return out


# -- simple alternatives a user could build ----------------------------------


def fixed_chunks(text: str, size: int = 1200) -> list[tuple[int, int]]:
    """Character spans of fixed-size chunks split on blank lines: paragraphs are packed
    greedily up to ``size`` characters; a longer paragraph is cut every ``size``."""
    spans: list[tuple[int, int]] = []
    paras = []
    pos = 0
    for m in re.finditer(r"\n[ \t]*\n", text):
        paras.append((pos, m.start()))
        pos = m.end()
    paras.append((pos, len(text)))
    cur: tuple[int, int] | None = None
    for a, b in paras:
        if not text[a:b].strip():
            continue
        while b - a > size:
            if cur:
                spans.append(cur)
                cur = None
            spans.append((a, a + size))
            a += size
        if cur and b - cur[0] <= size:
            cur = (cur[0], b)
        else:
            if cur:
                spans.append(cur)
            cur = (a, b)
    if cur:
        spans.append(cur)
    return spans


def coverage_table(roots: dict[str, Path], tok, log: Log) -> dict:
    """mdseek's chunker vs one vector per document vs 1,200-character chunks, same tokenizer."""
    from mdseek.index.text.coverage import coverage_of

    out = {}
    for name, root in roots.items():
        t0 = time.perf_counter()
        ours = coverage_of(root, tok, FileFilter())
        whole = Coverage()
        fixed = Coverage()
        for f in scan(root, FileFilter()):
            doc = parse_bytes(f.path.read_bytes(), f.rel)
            whole.add(window_coverage(tok, [("", doc.text)]))
            fixed.add(
                window_coverage(tok, [("", doc.text[a:b]) for a, b in fixed_chunks(doc.text)])
            )
        out[name] = {
            "files": len(ours["files"]),
            "mdseek": {
                "coverage": ours["coverage"],
                "vectors": ours["chunks"],
                "body_tokens": ours["body_tokens"],
            },
            "whole_document": {
                "coverage": round(whole.fraction, 6),
                "vectors": whole.vectors,
                "body_tokens": whole.body_tokens,
            },
            "fixed_1200_chars": {
                "coverage": round(fixed.fraction, 6),
                "vectors": fixed.vectors,
                "body_tokens": fixed.body_tokens,
            },
            "window": tok.window,
        }
        log(
            f"  coverage {name}: mdseek {ours['coverage'] * 100:.1f}%, whole doc {whole.fraction * 100:.1f}%,"
            f" 1200 chars {fixed.fraction * 100:.1f}% ({time.perf_counter() - t0:.1f}s)"
        )
    return out


def dense_baselines(
    root: Path, qrels: QrelSet, embedder, qvecs: dict[str, np.ndarray], log: Log
) -> dict:
    """Dense retrieval a user could build in an afternoon, with the same model:
    one vector per document, and one per 1,200-character chunk (max-pooled to
    documents). Document level only: neither returns sections."""
    docs = []
    for f in scan(root, FileFilter()):
        doc = parse_bytes(f.path.read_bytes(), f.rel)
        docs.append((doc_id(f.rel), doc))
    out = {}
    t0 = time.perf_counter()
    # One vector per whole document (the model reads its first window of tokens).
    mat = embedder.encode([d.text for _, d in docs])
    runs = {}
    for qid in qrels.queries:
        order = np.argsort(-(mat @ qvecs[qid]))
        runs[qid] = [(docs[i][0], 0, docs[i][1].line_count) for i in order[:100]]
    res = score_runs(runs, qrels, False)
    res["vectors"] = len(docs)
    out["whole_document"] = res
    # Fixed 1,200-character chunks.
    pieces = []
    for stem, d in docs:
        for a, b in fixed_chunks(d.text):
            pieces.append((stem, d.offset_line(a), d.offset_line(max(a, b - 1)) + 1, d.text[a:b]))
    mat = embedder.encode([p[3] for p in pieces])
    runs = {}
    for qid in qrels.queries:
        order = np.argsort(-(mat @ qvecs[qid]))[:300]
        runs[qid] = [(pieces[i][0], pieces[i][1], pieces[i][2]) for i in order]
    res = score_runs(runs, qrels, False)
    res["vectors"] = len(pieces)
    out["fixed_1200_chars"] = res
    log(
        f"  dense baselines: {len(docs)} + {len(pieces)} vectors in {time.perf_counter() - t0:.0f}s"
    )
    return out


def query_vectors(engine: Engine, qrels: QrelSet) -> tuple[dict[str, np.ndarray], list[float]]:
    """One vector per query, each embedded alone as Engine.search does; also the times."""
    out = {}
    times = []
    for qid, text in qrels.queries.items():
        t0 = time.perf_counter()
        out[qid] = engine.query_vector(engine.parse_query(text))
        times.append(time.perf_counter() - t0)
    return out, times


def clean(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# -- corpora of human questions (issue 29) -------------------------------------

# Built from public data by benchmarks/make_emanual.py and make_condqa.py into
# ../shared/data (README "Human-question corpora"); skipped with a line when absent.
HUMAN = ("emanual", "emanual-long", "covidqa", "covidqa-long", "condqa", "condqa-long")
# ConditionalQA's dev split, sealed: the issue writer's held-out set. Never in the
# default list ("all"); run only when named, once, at the end.
SEALED = ("condqa-dev-sealed", "condqa-dev-sealed-long")


def human_corpora(data: Path | None, work: Path, names: set[str], quick: bool, log: Log) -> list:
    """The human-question corpora named in ``names``, each copied to the work folder."""
    from . import data as D

    out: list[Corpus] = []
    specs = [  # (short name, long name, label, loader, long form, data folder)
        ("emanual", "emanual-long", "E-Manual", D.load_emanual, "scenario", "emanual"),
        ("covidqa", "covidqa-long", "COVID-QA", D.load_covidqa, "scenario", "covidqa"),
        ("condqa", "condqa-long", "ConditionalQA train", D.load_condqa, "own", "condqa"),
        (
            "condqa-dev-sealed",
            "condqa-dev-sealed-long",
            "ConditionalQA dev (sealed)",
            D.load_condqa_dev_sealed,
            "own",
            "condqa-dev",
        ),
    ]
    for short, long, label, loader, long_kind, folder in specs:
        if not names & {short, long}:
            continue
        home = D.data_home(folder) if data is not None else None
        if home is None:
            log(f"skipped: {short}: benchmark data not found at {D.where_data_should_be()}")
            continue
        try:
            src, qrels, long_qrels = _load_pair(loader, home, long_kind)
        except D.DataMissing as exc:
            log(f"skipped: {exc}")
            continue
        root = work / short / "docs"
        D.copy_docs(src, root)
        if quick:
            qids = sorted(qrels.queries)[:12]
            qrels, long_qrels = qrels.subset(qids), long_qrels.subset(qids)
        if short in names:
            out.append(Corpus(short, label, root, qrels, True))
        if long in names:
            out.append(Corpus(long, f"{label}, long form", root, long_qrels, True))
    return out


def _load_pair(loader, data: Path, long_kind: str) -> tuple[Path, QrelSet, QrelSet]:
    """(docs, short questions, long questions): the long form is the data set's own
    (scenario then question) or, without one, a scenario paragraph (data.long_form)."""
    from .data import long_form

    got = loader(data)
    if long_kind == "own":
        return got  # type: ignore[no-any-return]
    src, qrels = got
    return src, qrels, qrels.with_queries({q: long_form(q, t) for q, t in qrels.queries.items()})
