"""Retrieval quality: SciFact (BEIR) and the product docs, three modes, ablations.

* The headline numbers run the real product path, ``Engine.search``, query
  embedding included, with the defaults of :mod:`mdseek.index.retrieve`.
* Ablations (RRF k, FTS column weights, stemming, pooling, candidates, chunk
  floor) replay the same pipeline from cached candidate lists (FTS hits and
  dense hits per query), which is checked to give exactly the
  ``Engine.search`` ranking for the default configuration. Every ablation is
  scored on two halves of the queries: ``dev`` (where a choice may be made)
  and ``test`` (held out, reported), see :func:`benchmarks.data.split_of`.
"""

from __future__ import annotations

import math
import re
import shutil
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mdseek.index import retrieve
from mdseek.index.coverage import Coverage, window_coverage
from mdseek.index.engine import Engine
from mdseek.index.files import FileFilter, scan
from mdseek.index.parse import parse_bytes

from .data import QrelSet, split_qids

Log = Callable[[str], None]

# Published nDCG@10 on the SciFact test split (BEIR leaderboard / MTEB).
PUBLISHED_SCIFACT = {"BM25": 0.665, "all-MiniLM-L6-v2": 0.645}

# Ranked items: (doc id = file stem, start line, end line), 0-based end-exclusive.
Hit = tuple[str, int, int]


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
    """A returned span is relevant when it holds a judged section's start line.

    Qrel lines are 1-based; spans are 0-based and end-exclusive. Each judged
    section is credited once."""
    left = list(qrels)
    out = []
    for doc, start, end in hits:
        g = 0.0
        for j, (qdoc, line1) in enumerate(left):
            if qdoc == doc and start <= line1 - 1 < end:
                g = 1.0
                left.pop(j)
                break
        out.append(g)
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
    out = {"doc": mean_metrics(docs), "queries": len(docs)}
    if sections:
        out["section"] = mean_metrics(secs)
    return out


# -- the product path ---------------------------------------------------------


def _hits(resp) -> list[Hit]:
    return [(Path(r.path).stem, r.start_line, r.end_line) for r in resp.results]


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


def evaluate_modes(engine: Engine, qrels: QrelSet, sections: bool, log: Log) -> dict:
    out = {}
    for mode in ("hybrid", "lexical", "dense"):
        runs, ms = run_engine(engine, qrels, mode)
        out[mode] = score_runs(runs, qrels, sections)
        out[mode]["median_query_ms"] = round(ms, 1)
        m = out[mode]
        log(
            f"    {mode:8} doc nDCG@10 {m['doc']['ndcg@10']:.3f}"
            + (f"  section nDCG@10 {m['section']['ndcg@10']:.3f}" if sections else "")
            + f"  ({ms:.0f} ms/query)"
        )
    return out


# -- replayable pipeline for ablations ---------------------------------------


@dataclass(frozen=True)
class Config:
    rrf_k: int = retrieve.RRF_K
    weights: tuple[float, float, float] = retrieve.FTS_WEIGHTS
    stemming: bool = True
    pooling: str = "max"  # max (a chunk credits every section it covers), max-first, sum
    candidates: int = retrieve.CANDIDATES
    lexical_weight: float = 1.0  # weight of the lexical list in RRF (dense = 1)


DEFAULT = Config()


def _pool(ranked, info, pooling: str):
    if pooling == "max":
        return retrieve.pool_to_sections(ranked, info)
    if pooling == "max-first":
        return retrieve.pool_to_sections(ranked, {c: (d, f, f) for c, (d, f, _) in info.items()})
    if pooling == "sum":
        acc: dict = {}
        for order, (cid, score) in enumerate(ranked):
            span = info.get(cid)
            if span is None:
                continue
            d, f, last = span
            for o in range(f, last + 1):
                s, c, first = acc.get((d, o), (0.0, cid, order))
                acc[(d, o)] = (s + score, c, first)
        items = sorted(acc.items(), key=lambda kv: (-kv[1][0], kv[1][2], kv[0]))
        return [(k, v[0], v[1]) for k, v in items]
    raise ValueError(pooling)


class Replay:
    """Cached candidate lists of one index, replayed under any :class:`Config`."""

    MAX_CANDIDATES = 300

    def __init__(self, engine: Engine, qrels: QrelSet, qvecs: dict[str, np.ndarray]):
        self.engine = engine
        self.qrels = qrels
        self.qvecs = qvecs
        db = engine.store.db
        self.info = {
            int(r[0]): (int(r[1]), int(r[2]), int(r[3]))
            for r in db.execute("SELECT id, doc_id, section_first, section_last FROM chunks")
        }
        self.sections = {
            (s.doc_id, s.ordinal): (Path(s.path).stem, s.start_line, s.end_line)
            for s in engine.store.all_sections()
        }
        self._lex: dict[tuple, dict[str, list]] = {}
        self._dense: dict[str, list] | None = None
        self._nostem: sqlite3.Connection | None = None

    def close(self) -> None:
        if self._nostem is not None:
            self._nostem.close()

    # FTS without stemming: a copy of the FTS table with the plain unicode61 tokenizer.
    def _nostem_db(self) -> sqlite3.Connection:
        if self._nostem is None:
            db = sqlite3.connect(":memory:")
            db.execute(
                "CREATE VIRTUAL TABLE chunks_fts USING fts5(title, headings, body,"
                " tokenize = 'unicode61 remove_diacritics 2')"
            )
            rows = self.engine.store.db.execute(
                "SELECT rowid, title, headings, body FROM chunks_fts"
            ).fetchall()
            db.executemany("INSERT INTO chunks_fts(rowid, title, headings, body) VALUES (?,?,?,?)", rows)
            self._nostem = db
        return self._nostem

    def lexical(self, weights, stemming: bool) -> dict[str, list]:
        key = (tuple(weights), stemming)
        if key not in self._lex:
            w = ", ".join(str(float(x)) for x in weights)
            out = {}
            for qid, text in self.qrels.queries.items():
                match = retrieve.fts_query(text)
                if stemming:
                    out[qid] = self.engine.store.fts_search(match, self.MAX_CANDIDATES, weights)
                elif match:
                    rows = self._nostem_db().execute(
                        f"SELECT rowid, bm25(chunks_fts, {w}) AS s FROM chunks_fts"
                        " WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
                        (match, self.MAX_CANDIDATES),
                    ).fetchall()
                    out[qid] = [(int(r[0]), -float(r[1])) for r in rows]
                else:
                    out[qid] = []
            self._lex[key] = out
        return self._lex[key]

    def dense(self) -> dict[str, list]:
        if self._dense is None:
            self.engine._sync_dense()
            self._dense = {
                qid: self.engine.dense.search(self.qvecs[qid], self.MAX_CANDIDATES)
                for qid in self.qrels.queries
            }
        return self._dense

    def run(self, cfg: Config, mode: str, qids: list[str] | None = None, limit: int = 100) -> dict:
        lex = self.lexical(cfg.weights, cfg.stemming) if mode in ("hybrid", "lexical") else None
        den = self.dense() if mode in ("hybrid", "dense") else None
        runs = {}
        for qid in qids if qids is not None else list(self.qrels.queries):
            lists = {}
            if lex is not None:
                lists["lexical"] = _pool(lex[qid][: cfg.candidates], self.info, cfg.pooling)
            if den is not None:
                lists["dense"] = _pool(den[qid][: cfg.candidates], self.info, cfg.pooling)
            fused = retrieve.rrf(lists, k=cfg.rrf_k, weights={"lexical": cfg.lexical_weight})
            runs[qid] = [self.sections[f.key] for f in fused[:limit] if f.key in self.sections]
        return runs


def check_replay(replay: Replay, engine: Engine, n: int = 25) -> dict[str, str]:
    """The replay with the default config must rank exactly as ``Engine.search``."""
    out = {}
    qids = list(replay.qrels.queries)[:n]
    for mode in ("hybrid", "lexical", "dense"):
        mine = replay.run(DEFAULT, mode, qids, limit=20)
        same = 0
        for qid in qids:
            resp = engine.search(
                replay.qrels.queries[qid],
                limit=20,
                mode=mode,
                seed_vector=replay.qvecs[qid] if mode != "lexical" else None,
            )
            same += _hits(resp) == mine[qid]
        out[mode] = f"{same}/{len(qids)}"
    return out


def _objective(res: dict, name: str) -> float:
    m = res[name]
    vals = [m["doc"]["ndcg@10"]]
    if "section" in m:
        vals.append(m["section"]["ndcg@10"])
    return sum(vals) / len(vals)


def ablations(replays: dict[str, Replay], log: Log) -> dict:
    """Score each knob's values (others at their defaults) on dev and held-out test halves."""
    sets = {
        name: {s: split_qids(r.qrels.queries, s) for s in ("dev", "test")}
        for name, r in replays.items()
    }
    weights = [(1.0, 1.0, 1.0), (2.0, 4.0, 1.0), (1.0, 2.0, 1.0), (2.0, 2.0, 1.0), (4.0, 8.0, 1.0), (8.0, 16.0, 1.0), (0.5, 1.0, 1.0)]
    knobs: list[tuple[str, list[tuple[str, Config]], tuple[str, ...]]] = [
        ("rrf_k", [(str(k), Config(rrf_k=k)) for k in (1, 5, 10, 20, 30, 60, 100, 200)], ("hybrid",)),
        (
            "fts_weights",
            [("/".join(f"{x:g}" for x in w), Config(weights=w)) for w in weights],
            ("lexical", "hybrid"),
        ),
        ("stemming", [("porter", Config()), ("none", Config(stemming=False))], ("lexical", "hybrid")),
        ("pooling", [(p, Config(pooling=p)) for p in ("max", "max-first", "sum")], ("lexical", "dense", "hybrid")),
        ("candidates", [(str(c), Config(candidates=c)) for c in (50, 100, 200, 300)], ("hybrid",)),
        ("lexical_weight", [(f"{w:g}", Config(lexical_weight=w)) for w in (0.5, 0.75, 1.0, 1.5, 2.0)], ("hybrid",)),
    ]
    rows = []
    t0 = time.perf_counter()
    for knob, values, modes in knobs:
        for mode in modes:
            for label, cfg in values:
                row: dict = {"knob": knob, "value": label, "mode": mode, "default": cfg == DEFAULT}
                for name, rp in replays.items():
                    sec = bool(rp.qrels.sections)
                    for split in ("dev", "test"):
                        runs = rp.run(cfg, mode, sets[name][split])
                        res = score_runs(runs, rp.qrels, sec)
                        row[f"{name}/{split}"] = {
                            "doc_ndcg@10": res["doc"]["ndcg@10"],
                            **({"section_ndcg@10": res["section"]["ndcg@10"]} if sec else {}),
                            "doc_recall@100": res["doc"]["recall@100"],
                        }
                rows.append(row)
    log(f"  ablations: {len(rows)} configurations in {time.perf_counter() - t0:.0f}s")
    # The choice: per knob and mode, the value with the best mean nDCG@10 over corpora on dev.
    choices = []
    for knob, _values, modes in knobs:
        for mode in modes:
            cand = [r for r in rows if r["knob"] == knob and r["mode"] == mode]

            def dev_score(r, split="dev"):
                vals = []
                for name in replays:
                    m = r[f"{name}/{split}"]
                    vals.append(m["doc_ndcg@10"])
                    if "section_ndcg@10" in m:
                        vals.append(m["section_ndcg@10"])
                return sum(vals) / len(vals)

            best = max(cand, key=dev_score)
            default = next((r for r in cand if r["default"]), None)
            choices.append(
                {
                    "knob": knob,
                    "mode": mode,
                    "best_on_dev": best["value"],
                    "dev_gain": round(dev_score(best) - dev_score(default), 4) if default else None,
                    "test_gain": round(dev_score(best, "test") - dev_score(default, "test"), 4)
                    if default
                    else None,
                    "default": default["value"] if default else None,
                }
            )
    return {"rows": rows, "choices": choices}


def floor_ablation(root: Path, qrels: QrelSet, work: Path, floors: Sequence[int], log: Log) -> list[dict]:
    """Lexical-only quality for other chunk floors (no re-embedding: FTS only)."""
    out = []
    for floor in floors:
        idx = work / f"floor-{floor}.sqlite"
        eng = Engine(root, index_path=idx, chunk_floor=floor)
        try:
            eng.index(embed=False)
            runs = {}
            for split in ("dev", "test"):
                sub = qrels.subset(split_qids(qrels.queries, split))
                runs, _ = run_engine(eng, sub, "lexical")
                res = score_runs(runs, sub, bool(qrels.sections))
                out.append(
                    {
                        "floor": floor,
                        "split": split,
                        "chunks": eng.store.counts()["chunks"],
                        "doc_ndcg@10": res["doc"]["ndcg@10"],
                        "section_ndcg@10": res.get("section", {}).get("ndcg@10"),
                    }
                )
        finally:
            eng.close()
            for f in work.glob(f"floor-{floor}.sqlite*"):
                f.unlink()
    log(f"  chunk floor (lexical only): {len(floors)} floors")
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
    from mdseek.lsp.cli import coverage_of

    out = {}
    for name, root in roots.items():
        t0 = time.perf_counter()
        ours = coverage_of(root, tok, FileFilter())
        whole = Coverage()
        fixed = Coverage()
        for f in scan(root, FileFilter()):
            doc = parse_bytes(f.path.read_bytes(), f.rel)
            whole.add(window_coverage(tok, [("", doc.text)]))
            fixed.add(window_coverage(tok, [("", doc.text[a:b]) for a, b in fixed_chunks(doc.text)]))
        out[name] = {
            "files": len(ours["files"]),
            "mdseek": {"coverage": ours["coverage"], "vectors": ours["chunks"], "body_tokens": ours["body_tokens"]},
            "whole_document": {"coverage": round(whole.fraction, 6), "vectors": whole.vectors, "body_tokens": whole.body_tokens},
            "fixed_1200_chars": {"coverage": round(fixed.fraction, 6), "vectors": fixed.vectors, "body_tokens": fixed.body_tokens},
            "window": tok.window,
        }
        log(
            f"  coverage {name}: mdseek {ours['coverage'] * 100:.1f}%, whole doc {whole.fraction * 100:.1f}%,"
            f" 1200 chars {fixed.fraction * 100:.1f}% ({time.perf_counter() - t0:.1f}s)"
        )
    return out


def dense_baselines(root: Path, qrels: QrelSet, embedder, qvecs: dict[str, np.ndarray], log: Log) -> dict:
    """Dense retrieval a user could build in an afternoon, with the same model:
    one vector per document, and one per 1,200-character chunk (max-pooled to documents;
    a chunk's line span is its section-level hit)."""
    docs = []
    for f in scan(root, FileFilter()):
        doc = parse_bytes(f.path.read_bytes(), f.rel)
        docs.append((Path(f.rel).stem, doc))
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
    res = score_runs(runs, qrels, bool(qrels.sections))
    res["vectors"] = len(pieces)
    out["fixed_1200_chars"] = res
    log(f"  dense baselines: {len(docs)} + {len(pieces)} vectors in {time.perf_counter() - t0:.0f}s")
    return out


def query_vectors(engine: Engine, qrels: QrelSet) -> tuple[dict[str, np.ndarray], list[float]]:
    """One vector per query, each embedded alone as Engine.search does; also the times."""
    out = {}
    times = []
    for qid, text in qrels.queries.items():
        t0 = time.perf_counter()
        out[qid] = engine.embedder.encode_query(text)
        times.append(time.perf_counter() - t0)
    return out, times


def clean(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
