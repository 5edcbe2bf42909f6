"""``python -m benchmarks.floor --work DIR``: the score floor, tuned on the dev
halves and reported on the held-out test halves.

The floor (``retrieve.Ranking.similarity_floor``, :func:`retrieve.apply_floor`)
leaves out of a hybrid search's results a section found by meaning alone (not
among the keyword candidates) whose raw cosine to the query is under it. It
exists for honesty, not ranking: a query about nothing in the folder should not
get ten confident-looking sections. A floor is *safe* when it costs nothing
measurable on the dev halves (every corpus):

* no judged-relevant section or document in the hybrid top 10 of a dev query
  is cut, and no corpus's dev nDCG@10 drops by more than ``--noise``;
* weak-but-right answers stay: the floor is at most the lowest cosine of a
  right answer that only meaning finds (a judged-relevant section in the dense
  top 10 of a dev query that is not among its keyword candidates: a paraphrase
  sharing no word with its answer).

The floor chosen is the *lowest* safe floor of the grid that leaves the
no-answer dev queries within ``--saturation`` results (per query, mean over
the corpora) of what the highest safe floor leaves them: as high as is useful,
and no higher, so that answers weaker than any the dev halves hold stay.

What it does is measured on questions the corpus has no answer to (the other
corpora's questions, a few off-topic ones written here, like the trial's
"quokka crossing", and for the fixture handbook and the E-Manual the questions
on their own topics written for the "no section matches well" note,
benchmarks/no_answer/questions.json): how many of the 10 results are left. The test halves then
give nDCG@10 before and after through the product path (``Engine.search``),
every mode (lexical and dense have no floor: they must not move).

``DIR`` is a work folder of ``python -m benchmarks --model "" --work DIR
--keep-work`` (its indexes are reused: nothing is embedded again unless the
chunking changed). Writes ``<out>/floor.json`` and ``floor.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from mdseek.index.engine.engine import Engine
from mdseek.index.search import retrieve

from . import quality
from .data import QrelSet, split_qids
from .models import CORPORA, corpora

FLOORS = (0.0, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.22, 0.24, 0.26, 0.28, 0.3, 0.35, 0.4)
LIMIT = 10

# Questions the corpora cannot answer, in the style of the trial's "quokka crossing".
OFF_TOPIC = [
    "quokka crossing",
    "recipe for banana bread with walnuts",
    "who won the football world cup in 1998",
    "how do I tune the low E string on a guitar",
    "best month to plant tomato seedlings outdoors",
    "what is the capital of Mongolia",
    "how long should I boil an egg for a runny yolk",
    "why do cats purr",
    "cheap flights to Lisbon in October",
    "lyrics of a sea shanty about a whale",
    "how to remove red wine stains from a carpet",
    "rules of cricket for beginners",
]

# For each corpus, the corpora whose questions it has no answer to (the
# product docs and the fixture handbook share infrastructure topics, so they
# are not used against each other).
NO_ANSWER_FROM = {
    "rhdh": ("scifact",),
    "rhdh-long": ("scifact",),
    "fixtures": ("scifact",),
    "fixtures-long": ("scifact",),
    "scifact": ("rhdh", "fixtures"),
    "emanual": ("scifact",),
    "emanual-long": ("scifact",),
}

# and the questions written for the corpus that it does not answer, on its own
# topics (benchmarks/no_answer/questions.json: odd numbers dev, even test)
WRITTEN_FOR = {
    "fixtures": "handbook",
    "fixtures-long": "handbook",
    "emanual": "emanual",
    "emanual-long": "emanual",
}


WRITTEN = ("off-", "own-")  # the no-answer questions written here, not another corpus's


def _written(name: str, split: str) -> dict[str, str]:
    from .no_answer import QUESTIONS

    if name not in WRITTEN_FOR:
        return {}
    qs = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    mine = [q for q in qs if q["corpus"] == WRITTEN_FOR[name]]
    return {
        f"own-{q['id']}": q["question"] for i, q in enumerate(mine) if i % 2 == (split == "test")
    }


def _relevant(c: quality.Corpus, qid: str, hit: quality.Hit) -> bool:
    if c.sections:
        return (hit[0], hit[1] + 1) in set(c.qrels.sections.get(qid, []))
    return c.qrels.docs.get(qid, {}).get(hit[0], 0) > 0


def _cut(before: dict, after: dict) -> dict[str, list]:
    """query id -> the hits of ``before``'s top 10 that ``after`` left out."""
    out = {}
    for qid, hits in before.items():
        kept = set(after[qid])
        out[qid] = [h for h in hits[:LIMIT] if h not in kept]
    return out


def _no_answer_sets(cs: list[quality.Corpus]) -> dict[str, dict[str, QrelSet]]:
    """corpus -> split -> queries it has no answer to (no judgements)."""
    by_name = {c.name: c for c in cs}
    out: dict[str, dict[str, QrelSet]] = {}
    for c in cs:
        out[c.name] = {}
        for split in quality.SPLITS:
            qs = {f"off-{i}": t for i, t in enumerate(OFF_TOPIC) if i % 2 == (split == "test")}
            qs.update(_written(c.name, split))
            for other in NO_ANSWER_FROM.get(c.name, ()):
                o = by_name.get(other)
                if o is None:
                    continue
                for q in split_qids(o.qrels.queries, split, o.qrels.groups)[:60]:
                    qs[f"{other}-{q}"] = o.qrels.queries[q]
            out[c.name][split] = QrelSet(qs, {q: {} for q in qs})
    return out


def meaning_only_right(c: quality.Corpus, rp: quality.Replay, qids: list[str]) -> list[float]:
    """Cosines of the right answers only meaning finds: judged-relevant sections
    in the dense top 10 of a query that are not among its keyword candidates."""
    lex = rp.lexical(quality.DEFAULT.lexical)
    den = rp.dense()
    k = retrieve.DEFAULT.candidates
    out = []
    for qid in qids:
        hits, _ = lex[qid]
        keyword = {rp.info[cid][:2] for cid, _ in hits[:k] if cid in rp.info}
        for key, cos, _ in retrieve.pool_to_sections(den[qid][:k], rp.info)[:LIMIT]:
            if key not in keyword and key in rp.sections and _relevant(c, qid, rp.sections[key]):
                out.append(round(float(cos), 4))
    return sorted(out)


def tune(
    cs: list[quality.Corpus], floors: tuple[float, ...], noise: float, saturation: float, log
) -> dict:
    """The grid on the dev halves (hybrid), and the floor chosen."""
    replays = {}
    unanswerable = _no_answer_sets(cs)
    off_replays = {}
    right: dict[str, list[float]] = {}
    for c in cs:
        assert c.engine is not None
        c.qvecs, _ = quality.query_vectors(c.engine, c.qrels)
        replays[c.name] = rp = quality.Replay(c.engine, c.qrels, c.qvecs)
        right[c.name] = meaning_only_right(
            c, rp, split_qids(c.qrels.queries, "dev", c.qrels.groups)
        )
        na = unanswerable[c.name]
        both = QrelSet({**na["dev"].queries, **na["test"].queries}, {})
        qv, _ = quality.query_vectors(c.engine, both)
        off_replays[c.name] = quality.Replay(c.engine, both, qv)
        log(f"{c.name}: right answers only meaning finds on dev: {len(right[c.name])},"
            f" lowest cosines {right[c.name][:5]}")  # fmt: skip
    lowest = min((v for vs in right.values() for v in vs), default=1.0)
    grid = []
    base: dict[tuple, dict] = {}
    for floor in floors:
        cfg = quality.DEFAULT.but(similarity_floor=floor)
        per: dict = {}
        for c in cs:
            rp = replays[c.name]
            dev = split_qids(c.qrels.queries, "dev", c.qrels.groups)
            runs = rp.run(cfg, "hybrid", dev)
            m = quality.score_runs(runs, c.qrels, c.sections)
            na = unanswerable[c.name]["dev"]
            off = off_replays[c.name].run(cfg, "hybrid", list(na.queries))
            if floor == floors[0]:
                base[(c.name, "q")], base[(c.name, "off")] = runs, off
            cut = _cut(base[(c.name, "q")], runs)
            per[c.name] = {
                "ndcg@10": m[c.primary]["ndcg@10"],
                "doc_ndcg@10": m["doc"]["ndcg@10"],
                "relevant_cut": sum(_relevant(c, q, h) for q, hs in cut.items() for h in hs),
                "no_answer_shown": round(
                    sum(len(v[:LIMIT]) for v in off.values()) / max(1, len(off)), 2
                ),
                "off_topic_shown": round(
                    sum(len(v[:LIMIT]) for q, v in off.items() if q.startswith(WRITTEN))
                    / max(1, sum(1 for q in off if q.startswith(WRITTEN))),
                    2,
                ),
                "no_answer_queries": len(off),
            }
        row = {"floor": floor, "corpora": per}
        grid.append(row)
        log(
            f"floor {floor:<5g} hybrid dev nDCG@10 "
            + " ".join(f"{n} {v['ndcg@10']:.3f}" for n, v in per.items())
            + f"; relevant cut {sum(v['relevant_cut'] for v in per.values())};"
            " no-answer results shown "
            + " ".join(f"{n} {v['no_answer_shown']:.1f}" for n, v in per.items())
        )
    safe = grid[0]
    for row in grid:
        ok = row["floor"] <= lowest and all(
            v["relevant_cut"] == 0
            and v["ndcg@10"] >= grid[0]["corpora"][n]["ndcg@10"] - noise
            and v["doc_ndcg@10"] >= grid[0]["corpora"][n]["doc_ndcg@10"] - noise
            for n, v in row["corpora"].items()
        )
        if not ok:
            break
        safe = row

    def left(row: dict) -> float:  # results left per no-answer dev query, mean over corpora
        return sum(v["no_answer_shown"] for v in row["corpora"].values()) / len(row["corpora"])

    # as low as it can be (every weak-but-right answer it could cost stays), as high
    # as is useful: the lowest safe floor that leaves the no-answer queries (nearly)
    # as few results as the highest safe floor does
    chosen = next(
        r for r in grid if r["floor"] <= safe["floor"] and left(r) <= left(safe) + saturation
    )
    return {
        "grid": grid,
        "chosen": chosen["floor"],
        "highest_safe": safe["floor"],
        "saturation": saturation,
        "noise": noise,
        "meaning_only_right": right,
        "lowest_meaning_only_right": lowest,
    }


def per_query(c: quality.Corpus, runs: dict) -> dict[str, float]:
    """query id -> nDCG@10 at the corpus's level."""
    out = {}
    for qid, hits in runs.items():
        if c.sections:
            sq = c.qrels.sections.get(qid, [])
            gains = quality.section_gains(hits, sq)
            ideal = [1.0] * len(sq)
        else:
            rels = c.qrels.docs.get(qid, {})
            gains, ideal = quality.doc_gains(hits, rels), list(rels.values())
        out[qid] = quality.rank_metrics(gains, ideal)["ndcg@10"]
    return out


def paired(before: dict[str, float], after: dict[str, float], qids: list[str]) -> dict:
    """How the floor moved each query: queries better / worse, and a paired
    bootstrap 95% interval of the mean difference (2,000 resamples, fixed seed)."""
    import numpy as np

    d = np.array([after[q] - before[q] for q in qids])
    rng = np.random.default_rng(0)
    means = d[rng.integers(0, len(d), (2000, len(d)))].mean(axis=1) if len(d) else np.zeros(1)
    return {
        "better": int((d > 1e-12).sum()),
        "worse": int((d < -1e-12).sum()),
        "mean_diff": round(float(d.mean()) if len(d) else 0.0, 4),
        "ci95": [
            round(float(np.percentile(means, 2.5)), 4),
            round(float(np.percentile(means, 97.5)), 4),
        ],
    }


def report(cs: list[quality.Corpus], floor: float, log) -> dict:
    """nDCG@10 on every test half (and dev, for reference) without and with the
    floor, through ``Engine.search`` (the product path), each mode; plus what
    the floor cuts of the no-answer queries' top 10."""
    out: dict = {}
    unanswerable = _no_answer_sets(cs)
    for c in cs:
        assert c.engine is not None
        out[c.name] = {"label": c.label, "level": c.primary, "queries": len(c.qrels.queries)}
        for mode in ("hybrid", "lexical", "dense"):
            res = {}
            # lexical and dense have no floor: one run stands for before and after
            floors = (
                (("before", 0.0), ("after", floor)) if mode == "hybrid" else (("after", floor),)
            )
            each = {}
            for tag, f in floors:
                c.engine.searcher.ranking = dataclasses.replace(
                    retrieve.DEFAULT, similarity_floor=f
                )
                runs, _ = quality.run_engine(c.engine, c.qrels, mode)
                each[tag] = per_query(c, runs)
                sc = quality.score_splits(runs, c.qrels, c.sections)
                res[tag] = {s: sc[s][c.primary]["ndcg@10"] for s in quality.SPLITS}
                na = unanswerable[c.name]["test"]
                off, _ = quality.run_engine(c.engine, na, mode, limit=LIMIT)
                res[tag]["no_answer_results"] = sum(len(v) for v in off.values())
                res[tag]["no_answer_queries"] = len(off)
                res[tag]["off_topic_results"] = sum(
                    len(v) for q, v in off.items() if q.startswith(WRITTEN)
                )
                res[tag]["off_topic_queries"] = sum(1 for q in off if q.startswith(WRITTEN))
            res.setdefault("before", res["after"])
            if "before" in each:
                test = split_qids(c.qrels.queries, "test", c.qrels.groups)
                res["test_paired"] = paired(each["before"], each["after"], test)
            out[c.name][mode] = res
            log(
                f"{c.name} {mode}: test nDCG@10 {res['before']['test']:.4f} -> "
                f"{res['after']['test']:.4f}; no-answer test queries: "
                f"{res['before']['no_answer_results']} -> {res['after']['no_answer_results']}"
                f" results in {res['after']['no_answer_queries']} queries"
            )
    for c in cs:
        assert c.engine is not None
        c.engine.searcher.ranking = retrieve.DEFAULT
    return out


def table(res: dict) -> str:
    f = res["chosen"]
    names = " / ".join(res["corpora"])
    n_right = sum(len(v) for v in res["meaning_only_right"].values())
    lines = [
        f"Floor chosen on the dev halves: **{f:g}**. Safe floors cut no judged-relevant"
        f" top-10 result of any dev query (hybrid), cost no corpus more than {res['noise']}"
        " dev nDCG@10, and stay under the lowest cosine of a right answer only meaning finds"
        f" ({res['lowest_meaning_only_right']:g}, the lowest of {n_right} judged-relevant"
        " sections in a dev query's dense top 10 that are not among its keyword candidates);"
        f" the highest safe floor of the grid is {res['highest_safe']:g}, and {f:g} is the"
        " lowest that leaves the no-answer dev queries within"
        f" {res['saturation']:g} results of what it leaves. Corpora in each cell: {names}.",
        "",
        "| floor | hybrid dev nDCG@10 | relevant top-10 results cut | no-answer dev queries:"
        " results left of 10 | of which the ones written here (off-topic, or on the corpus's topics) |",
        "|---|---|---|---|---|",
    ]
    for row in res["grid"]:
        h = row["corpora"]
        lines.append(
            f"| {row['floor']:g} | "
            + " / ".join(f"{v['ndcg@10']:.3f}" for v in h.values())
            + f" | {sum(v['relevant_cut'] for v in h.values())} | "
            + " / ".join(f"{v['no_answer_shown']:.1f}" for v in h.values())
            + " | "
            + " / ".join(f"{v['off_topic_shown']:.1f}" for v in h.values())
            + " |"
        )
    lines += [
        "",
        f"Test halves, nDCG@10 without / with the floor {f:g} (`Engine.search`), and the"
        " results left for the no-answer test queries:",
        "",
        "| corpus | level | mode | test nDCG@10 before | after | dev before | after"
        " | no-answer test queries: results before / after (queries) | of which written here |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in res["test"].values():
        for mode in ("hybrid", "lexical", "dense"):
            b, a = c[mode]["before"], c[mode]["after"]
            lines.append(
                f"| {c['label']} | {c['level']} | {mode} | {b['test']:.4f} | {a['test']:.4f} |"
                f" {b['dev']:.4f} | {a['dev']:.4f} | {b['no_answer_results']} /"
                f" {a['no_answer_results']} ({a['no_answer_queries']}) |"
                f" {b['off_topic_results']} / {a['off_topic_results']} ({a['off_topic_queries']}) |"
            )
    lines += [
        "",
        "Lexical and dense searches have no floor (one run stands for before and after).",
        "Hybrid, per test query: queries the floor made better / worse, and a paired bootstrap"
        " 95% interval of the mean nDCG@10 difference:",
        "",
        "| corpus | better | worse | mean difference | 95% interval |",
        "|---|---|---|---|---|",
    ]
    for c in res["test"].values():
        t = c["hybrid"].get("test_paired")
        if t:
            lines.append(
                f"| {c['label']} | {t['better']} | {t['worse']} | {t['mean_diff']:+.4f} |"
                f" [{t['ci95'][0]:+.4f}, {t['ci95'][1]:+.4f}] |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.floor", description=__doc__)
    ap.add_argument("--work", type=Path, required=True, help="kept work folder of a benchmark run")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "floor")
    ap.add_argument("--floors", default=",".join(f"{f:g}" for f in FLOORS))
    ap.add_argument("--noise", type=float, default=0.001)
    ap.add_argument("--saturation", type=float, default=0.1)
    ap.add_argument("--corpora", default=",".join(CORPORA))
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    cs = corpora(args.work, False, set(args.corpora.split(",")), log)
    engines: dict[Path, Engine] = {}
    for c in cs:
        c.engine = engines.get(c.root)
        if c.engine is None:
            c.engine = engines[c.root] = Engine(c.root, index_path=c.root.parent / "index.sqlite")
            rep = c.engine.index()
            log(f"{c.root.parent.name}: {rep.chunks} chunks, {rep.embedded} embedded")
    floors = tuple(float(x) for x in args.floors.split(","))
    res = tune(cs, floors, args.noise, args.saturation, log)
    res["corpora"] = [c.name for c in cs]
    res["test"] = report(cs, res["chosen"], log)
    res["command"] = "python -m benchmarks.floor " + " ".join(argv or sys.argv[1:])
    res["seconds"] = round(time.perf_counter() - t0)
    for e in engines.values():
        e.close()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "floor.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    (args.out / "floor.md").write_text(table(res), encoding="utf-8")
    print(table(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
