"""``python -m benchmarks --model NAME [--rerank CE]``: the quality benchmark for
any model on disk, beside the plain baseline with the same model.

Every corpus of the quality benchmark (the product docs and their long form,
SciFact, the fixture paraphrases short and long; ``--corpora`` picks some) is
indexed with the model (its prompts applied, README "Models"), searched
through ``Engine.search`` in hybrid mode, and scored on the dev and test halves
at the corpus's level (section where judged, else document); the plain
baseline (benchmarks/baseline.py) uses the same model's vectors. Ablations,
speed and the language servers are not run. Results go to
``<out>/model-<model>.json`` and ``.md`` and the table to stdout.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .data import (
    DataMissing,
    data_dir,
    fixtures_workspace,
    long_queries,
    rhdh_workspace,
    scifact_workspace,
    where_data_should_be,
)

CORPORA = ("rhdh", "rhdh-long", "scifact", "fixtures", "fixtures-long")


def corpora(work: Path, quick: bool, names: set[str], log) -> list:
    """The quality benchmark's corpora (as ``run_all`` builds them), without engines."""
    from . import quality

    out = []
    data = data_dir()
    if data is None and names & {"rhdh", "rhdh-long", "scifact"}:
        log(f"skipped: benchmark data not found at {where_data_should_be()} (MDSEEK_BENCH_DATA)")
    if data is not None and names & {"rhdh", "rhdh-long"}:
        try:
            root, qrels = rhdh_workspace(data, work, quick)
        except DataMissing as exc:
            log(f"skipped: {exc}")
        else:
            if "rhdh" in names:
                out.append(quality.Corpus("rhdh", "product docs", root, qrels, True))
            if "rhdh-long" in names:
                out.append(quality.Corpus(
                    "rhdh-long", "product docs, long form", root, long_queries(qrels), True
                ))  # fmt: skip
    if data is not None and "scifact" in names:
        try:
            root, qrels = scifact_workspace(data, work, quick)
        except DataMissing as exc:
            log(f"skipped: {exc}")
        else:
            out.append(quality.Corpus("scifact", "SciFact", root, qrels, False))
    if names & {"fixtures", "fixtures-long"}:
        root, qrels, long = fixtures_workspace(work, quick)
        if "fixtures" in names:
            out.append(quality.Corpus("fixtures", "fixture paraphrases", root, qrels, True))
        if "fixtures-long" in names:
            out.append(quality.Corpus(
                "fixtures-long", "fixture paraphrases, long form", root, long, True
            ))  # fmt: skip
    out += quality.human_corpora(data, work, names, quick, log)
    return out


def measure(cs: list, model: str | None, rerank: str | None, rerank_top: int, log) -> dict:
    """Index each corpus with ``model``, then mdseek's hybrid search (reranked
    if asked) and the plain baseline, scored on each half."""
    from mdseek.index.engine.engine import Engine
    from mdseek.index.model.rerank import Reranker

    from . import quality
    from .baseline import PlainBaseline

    engines: dict[Path, Engine] = {}
    reranker = Reranker(rerank, rerank_top) if rerank else None
    out: dict = {"corpora": {}}
    for c in cs:
        c.engine = engines.get(c.root)
        if c.engine is None:
            c.engine = engines[c.root] = Engine(
                c.root, index_path=c.root.parent / "index.sqlite", model=model
            )
        c.engine.searcher.reranker = reranker
        rep = c.engine.index()
        if rep.lexical_only_reason:
            raise RuntimeError(rep.lexical_only_reason)
        out["model_id"] = c.engine.models.model_id
        out["prompts"] = {
            "query": c.engine.models.embedder.prompts.query,
            "document": c.engine.models.embedder.prompts.document,
        }
        out["window"] = c.engine.models.tokenizer.window
        log(f"{c.label}: {rep.files} files, {rep.chunks} chunks ({rep.embedded} embedded in"
            f" {rep.embed_seconds:.0f}s); {len(c.qrels.queries)} queries")  # fmt: skip
        runs, ms = quality.run_engine(c.engine, c.qrels, "hybrid")
        c.qvecs, _ = quality.query_vectors(c.engine, c.qrels)
        tag = hashlib.sha1(c.engine.models.model_id.encode()).hexdigest()[:12]
        bl = PlainBaseline(
            c.root, c.engine.models.embedder.encode, c.root.parent / f"baseline-{tag}.npz"
        )  # per model id (prompts included): the long form reuses the short form's
        base = quality.evaluate_baseline(c, bl, log)["hybrid"]
        bl.close()
        out["corpora"][c.name] = {
            "label": c.label,
            "level": c.primary,
            "queries": len(c.qrels.queries),
            "chunks": rep.chunks,
            "index_bytes": c.engine.index_path.stat().st_size,
            "median_query_ms": round(ms, 1),
            "mdseek": quality.score_splits(runs, c.qrels, c.sections),
            "baseline": base,
        }
        r = out["corpora"][c.name]
        log(f"  {c.name} {c.primary} nDCG@10 mdseek dev {r['mdseek']['dev'][c.primary]['ndcg@10']:.3f}"
            f" test {r['mdseek']['test'][c.primary]['ndcg@10']:.3f}; plain baseline dev"
            f" {base['dev'][c.primary]['ndcg@10']:.3f} test {base['test'][c.primary]['ndcg@10']:.3f}")  # fmt: skip
    if reranker is not None:
        out["reranker"] = reranker.stats()
    for e in engines.values():
        e.close()
    return out


def table(res: dict) -> str:
    """nDCG@10 per corpus and half, mdseek beside the plain baseline."""
    lines = [
        f"Model {res.get('model_id')}; query prompt {res.get('prompts', {}).get('query')!r},"
        f" document prompt {res.get('prompts', {}).get('document')!r}; window {res.get('window')}"
        + (
            f"; reranker {res['reranker']['model']} top {res['reranker']['top_n']}"
            f" ({res['reranker']['mean_ms']} ms/query)"
            if res.get("reranker")
            else ""
        ),  # fmt: skip
        "",
        "| corpus | level | queries | dev: mdseek | dev: plain | test: mdseek | test: plain | ms/query |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in res["corpora"].values():
        lvl = c["level"]

        def nd(part: str, split: str, c: dict = c, lvl: str = lvl) -> str:
            v = c[part][split].get(lvl, {}).get("ndcg@10")
            return "-" if v is None else f"{v:.3f}"

        lines.append(
            f"| {c['label']} | {lvl} | {c['queries']} | {nd('mdseek', 'dev')} | "
            f"{nd('baseline', 'dev')} | {nd('mdseek', 'test')} | {nd('baseline', 'test')} | "
            f"{c['median_query_ms']} |"
        )
    return "\n".join(lines) + "\n"


def write(res: dict, out: Path, model: str | None, rerank: str | None) -> Path:
    slug = "".join(
        ch if ch.isalnum() or ch in "-_." else "_" for ch in Path(model or "default").name
    )
    if rerank:
        slug += "+rerank-" + "".join(
            ch if ch.isalnum() or ch in "-_." else "_" for ch in Path(rerank).name
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / f"model-{slug}.json").write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    md = out / f"model-{slug}.md"
    md.write_text(table(res), encoding="utf-8")
    return md
