"""The ablations: one change at a time from mdseek before retrieval v2 to the
default (:data:`CHAIN`), and each ranking knob around the default
(:data:`KNOBS`), replayed on every corpus and half (:class:`Bench`)."""

from __future__ import annotations

import time
from collections.abc import Callable

from mdseek.index.search import retrieve
from mdseek.index.search.dense import PASSAGE_DISCOUNT
from mdseek.index.search.query import MAX_DF

from .data import split_qids
from .metrics import SPLITS, Corpus, per_query, score_runs
from .replay import BEFORE, DEFAULT, Config, Replay

Log = Callable[[str], None]


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
