"""Scoring a ranking against judged documents and sections: nDCG@10, recall@10,
MRR@10 per query and per half (dev/test), a corpus with its queries, and the
product path's runs (``Engine.search``) that every study scores."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mdseek.index.engine.engine import Engine

from .data import QrelSet, split_qids

Log = Callable[[str], None]


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
