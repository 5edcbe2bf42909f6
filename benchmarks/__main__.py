"""``python -m benchmarks``: every benchmark in one run.

    python -m benchmarks             full run (~25 min on 2 cores); writes
                                     benchmarks/results/{results.json,results.md,latency.png}
                                     and the table in benchmarks/README.md
    python -m benchmarks --quick     smoke run on tiny subsets (under a minute)
    --out DIR                        write results there instead (README untouched)
    --work DIR                       scratch folder (default: a temp dir, removed after)
    --only quality,speed,lsp         run some parts only
    --model NAME [--rerank CE]       the quality benchmark alone for any model on disk
                                     (and reranker), beside the plain baseline: nDCG@10 on
                                     the dev and test halves of every corpus
                                     (--corpora rhdh,fixtures,... for some; benchmarks/models.py)
    --corpora A,B                    the quality part on these corpora only (default: all but
                                     the sealed condqa-dev-sealed and condqa-dev-sealed-long)

Data comes from ../shared/data beside the checkout or $MDSEEK_BENCH_DATA; a
part whose data is absent is skipped with a line saying so (speed and LSP
then run on fixtures/).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .data import (
    FIXTURES,
    REPO,
    DataMissing,
    QrelSet,
    data_dir,
    fixtures_workspace,
    long_queries,
    rhdh_workspace,
    scifact_workspace,
    where_data_should_be,
)
from .report import README_END, README_START, render

RESULTS = REPO / "benchmarks" / "results"
README = REPO / "benchmarks" / "README.md"

T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:6.0f}s] {msg}", file=sys.stderr, flush=True)


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        import psutil

        mem = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        pass
    vers = {}
    for mod in ("torch", "sentence_transformers", "numpy"):
        try:
            vers[mod] = __import__(mod).__version__
        except ImportError:
            vers[mod] = None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "torch": vers["torch"],
        "sentence_transformers": vers["sentence_transformers"],
        "numpy": vers["numpy"],
    }


def git_commit() -> str | None:
    try:
        return (
            subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.strip()
            or None
        )
    except (OSError, subprocess.SubprocessError):
        return None


# -- corpora --------------------------------------------------------------------


ALL_CORPORA = ("rhdh", "rhdh-long", "scifact", "fixtures", "fixtures-long")


def corpus_names(arg: str | None) -> set[str]:
    """``--corpora``: a comma list, or None / "all" for every corpus but the sealed ones
    (quality.SEALED run only when named)."""
    from .quality import HUMAN, SEALED

    every = set(ALL_CORPORA) | set(HUMAN)
    if not arg or arg == "all":
        return every
    names = {n.strip() for n in arg.split(",") if n.strip()}
    unknown = names - every - set(SEALED)
    if unknown:
        known = ", ".join((*ALL_CORPORA, *HUMAN, *SEALED))
        raise SystemExit(f"unknown corpora {sorted(unknown)}; known: {known}")
    return names


# -- parts ----------------------------------------------------------------------


def run_all(args: argparse.Namespace, work: Path) -> dict:
    from mdseek.index.engine.engine import Engine
    from mdseek.index.search import retrieve
    from mdseek.index.search.query import MAX_DF
    from mdseek.index.store import survey
    from mdseek.index.text.chunk import DEFAULT_FLOOR

    from . import (
        backends,
        cold_cli,
        incremental,
        latency_at_scale,
        lsp_speed,
        quality,
        save_latency,
        speed,
    )

    parts = set(args.only.split(",")) if args.only else {"quality", "speed", "lsp"}
    quick = args.quick
    res: dict = {"skipped": [], "quality": {}, "speed": {}}
    data = data_dir()
    if data is None:
        res["skipped"].append(
            f"skipped: benchmark data not found at {where_data_should_be()} (set MDSEEK_BENCH_DATA);"
            " quality on SciFact and the product docs not measured, speed and LSP run on fixtures/"
        )
        log(res["skipped"][-1])

    # The docs corpus: product docs if present, else the fixtures (speed only).
    rh_qrels: QrelSet | None = None
    if data is not None:
        try:
            docs_root, rh_qrels = rhdh_workspace(data, work, quick)
        except DataMissing as exc:
            res["skipped"].append(f"skipped: {exc}")
            data_docs = None
        else:
            data_docs = docs_root
    else:
        data_docs = None
    if data_docs is None:
        docs_root = work / "fixtures" / "docs"
        shutil.copytree(FIXTURES, docs_root, copy_function=shutil.copy2)
    docs_index = docs_root.parent / "index.sqlite"

    log(f"indexing {docs_root} (throughput)")
    t_model = time.perf_counter()
    from mdseek.index.model.embed import Embedder

    Embedder().load()
    model_load = time.perf_counter() - t_model
    if "speed" in parts:
        tp, eng = speed.throughput(docs_root, docs_index, log)
    else:  # quality only: the index (reused when the work folder is kept), no timing
        eng = Engine(docs_root, index_path=docs_index)
        eng.index()
    res["meta_model"] = {
        "model_id": eng.models.model_id,
        "model_load_seconds": round(model_load, 2),
        "window": eng.models.tokenizer.window,
    }
    if "speed" in parts:
        res["speed"]["throughput"] = tp

    corpora: list = []
    names = corpus_names(args.corpora)
    sf_root = None
    if "quality" in parts:
        if rh_qrels is not None and "rhdh" in names:
            corpora.append(quality.Corpus("rhdh", "product docs", docs_root, rh_qrels, True, eng))
        if rh_qrels is not None and "rhdh-long" in names:
            corpora.append(quality.Corpus(
                "rhdh-long", "product docs, long form", docs_root, long_queries(rh_qrels), True, eng
            ))  # fmt: skip
        if data is not None and "scifact" in names:
            try:
                sf_root, sf_qrels = scifact_workspace(data, work, quick)
            except DataMissing as exc:
                res["skipped"].append(f"skipped: {exc}")
                log(res["skipped"][-1])
            else:
                corpora.append(quality.Corpus("scifact", "SciFact", sf_root, sf_qrels, False))
        fx_root, fx_qrels, fx_long = fixtures_workspace(work, quick)
        if "fixtures" in names:
            corpora.append(
                quality.Corpus("fixtures", "fixture paraphrases", fx_root, fx_qrels, True)
            )
        if "fixtures-long" in names:
            corpora.append(quality.Corpus(
                "fixtures-long", "fixture paraphrases, long form", fx_root, fx_long, True
            ))  # fmt: skip
        for c in quality.human_corpora(data, work, names, quick, log):
            corpora.append(c)
        res["quality"] = quality.run(corpora, log)
        bench = res["quality"].pop("_bench", None)
        if bench is not None:
            from .judge import quality_section

            log("quality: the judge (pooled human questions, paired bootstrap intervals)")
            res["quality"]["judge"] = quality_section(corpora, {}, bench, log)
        sf_root = next((c.root for c in corpora if c.name == "scifact"), None)

    if "quality" in parts:
        roots = {}
        if sf_root is not None:
            roots["SciFact"] = sf_root
        if data_docs is not None:
            roots["product docs"] = docs_root
        roots["fixtures"] = FIXTURES
        log("coverage")
        res["coverage"] = quality.coverage_table(roots, eng.models.tokenizer, log)
    for c in corpora:
        if c.engine is not None and c.engine is not eng:
            c.engine.close()

    if "speed" in parts:
        log("speed: embedding backends side by side (torch, ONNX Runtime)")
        res["speed"]["backends"] = backends.backends(
            docs_root, docs_index, rh_qrels, work, log, rounds=1 if quick else 2,
            n_queries=10 if quick else 30, max_texts=32 if quick else 192,
        )  # fmt: skip
        log("speed: int8 quantisation study")
        res["speed"]["int8"] = backends.int8_study(
            docs_index, work, log, max_texts=24 if quick else 200
        )
        log("speed: cold command line")
        res["speed"]["cold_cli"] = cold_cli.cold_cli(
            docs_root,
            docs_index,
            "how do I configure the database connection",
            log,
            n=3 if quick else 7,
        )
        log("speed: incremental reindex")
        res["speed"]["incremental"] = incremental.incremental(
            docs_root, docs_index, work / "incremental", log
        )
        sizes = [300] if quick else [int(x) for x in args.sizes.split(",")]
        log(f"speed: scale corpora {sizes}")
        tiers = latency_at_scale.build_tiers(docs_root, docs_index, work / "scale", sizes, log)
        if rh_qrels is not None:
            queries = list(rh_qrels.queries.values())
        else:
            queries = [
                h
                for f in sorted(docs_root.rglob("*.md"))
                for h in f.read_text().split("\n")
                if h.startswith("#")
            ]
        random.Random(1).shuffle(queries)
        n = 10 if quick else 150
        # brute force re-reads every vector: fewer queries on the bigger tiers
        brute = [3 if quick else (60, 40, 20)[min(i, 2)] for i in range(len(tiers))]
        res["speed"]["latency"] = latency_at_scale.latency(tiers, queries, n, brute, work, log)
        res["speed"]["tiers"] = tiers

    if "lsp" in parts:
        log("language servers")
        lsp_root = work / "lsp" / "docs"
        shutil.copytree(docs_root, lsp_root, copy_function=shutil.copy2, dirs_exist_ok=True)
        lsp_index = work / "lsp" / "index.sqlite"
        survey.copy(docs_index, lsp_index)
        # Reconcile the copy once so the server starts on an up-to-date index of this folder.
        e2 = Engine(lsp_root, index_path=lsp_index)
        r2 = e2.index()
        e2.close()
        if r2.embedded:
            log(f"  note: {r2.embedded} chunks re-embedded for the LSP copy")
        res["lsp"] = lsp_speed.run(
            lsp_root, lsp_index, log, rounds=1 if quick else 5, n_queries=5 if quick else 40,
            install=not args.no_install, starts=2 if quick else 7,
        )  # fmt: skip
        log("save -> searchable through the server")
        try:
            res["lsp"]["save"] = save_latency.measure(
                work / "save", edits=3 if quick else 20, fixtures=quick
            )
        except Exception as exc:
            res["lsp"]["save"] = {"skipped": f"failed: {type(exc).__name__}: {exc}"}
            log(f"  save latency failed: {exc}")
    eng.close()

    res["config"] = {
        "ranking": retrieve.DEFAULT.to_dict(),
        "fts_weights": list(retrieve.FTS_WEIGHTS),
        "max_df": MAX_DF,
        "chunk_floor": DEFAULT_FLOOR,
    }
    return res


QUALITY_START = "<!-- quality:start -->"
QUALITY_END = "<!-- quality:end -->"


def update_readme(md: str, meta: dict, quality_only: bool = False) -> None:
    """Paste the tables into benchmarks/README.md: a full run's between the results
    markers, a quality-only run's between the quality markers (its own section)."""
    start, end = (QUALITY_START, QUALITY_END) if quality_only else (README_START, README_END)
    title = "## Latest retrieval quality run" if quality_only else "## Latest results"
    text = README.read_text(encoding="utf-8") if README.exists() else ""
    block = f"{start}\n{md}{end}"
    if start in text and end in text:
        a = text.index(start)
        b = text.index(end) + len(end)
        text = text[:a] + block + text[b:]
    else:
        text = text.rstrip() + f"\n\n{title}\n\n" + block + "\n"
    README.write_text(text, encoding="utf-8")


def model_main(args: argparse.Namespace) -> int:
    """``--model``: the quality benchmark for one model (benchmarks/models.py)."""
    from . import models

    names = corpus_names(args.corpora)
    work = args.work or Path(tempfile.mkdtemp(prefix="mdseek-bench-model-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        cs = models.corpora(work, args.quick, names, log)
        res = models.measure(cs, args.model, args.rerank, args.rerank_top, log)
    finally:
        if args.work is None and not args.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    res["meta"] = {
        "command": " ".join(["python -m benchmarks"] + sys.argv[1:]),
        "git_commit": git_commit(),
        "quick": args.quick,
        "wall_seconds": round(time.perf_counter() - T0, 1),
    }
    md = models.write(res, args.out or RESULTS / "models", args.model, args.rerank)
    print(md.read_text(encoding="utf-8"), end="")
    log(f"done: {md}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run on tiny subsets")
    ap.add_argument(
        "--out", type=Path, default=None, help="results folder (default benchmarks/results)"
    )
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temp dir)")
    ap.add_argument("--keep-work", action="store_true", help="do not delete the scratch folder")
    ap.add_argument("--only", default=None, help="comma list of parts: quality,speed,lsp")
    ap.add_argument("--no-readme", action="store_true", help="do not update benchmarks/README.md")
    ap.add_argument("--no-install", action="store_true", help="never npm-install VS Code's server")
    ap.add_argument(
        "--sizes", default="1000,10000,100000", help="chunks of the scale corpora (speed)"
    )
    ap.add_argument(
        "--model",
        default=None,
        help='quality of this model (name or folder; "" = the default) only',
    )
    ap.add_argument("--rerank", default=None, help="with --model: a CrossEncoder reranking")
    ap.add_argument("--rerank-top", type=int, default=10, help="sections the reranker re-scores")
    ap.add_argument(
        "--corpora",
        default=None,
        help="quality corpora, comma list (default: all but the sealed condqa-dev-sealed*)",
    )
    args = ap.parse_args(argv)
    if args.model is not None or args.rerank:
        return model_main(args)
    quality_only = args.only is not None and set(args.only.split(",")) == {"quality"}
    # A quality-only run keeps its own results folder, so a full run's speed and
    # language-server figures stay where they are.
    out = args.out or (RESULTS / "quality" if quality_only else RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="mdseek-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    load_start = os.getloadavg()
    log(f"work folder {work}; results to {out}; load average {load_start[0]:.1f}")
    started = dt.datetime.now(dt.UTC)
    try:
        res = run_all(args, work)
    finally:
        if args.work is None and not args.keep_work:
            shutil.rmtree(work, ignore_errors=True)
    mm = res.pop("meta_model", {})
    cfg = res.pop("config")
    cfg["window"] = mm.get("window")
    cmd = (
        "python -m benchmarks"
        + (" --quick" if args.quick else "")
        + (f" --only {args.only}" if args.only else "")
    )
    res = {
        "meta": {
            "date": started.strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(),
            "git_commit": git_commit(),
            "quick": args.quick,
            "command": cmd,
            "wall_seconds": round(time.perf_counter() - T0, 1),
            "model_id": mm.get("model_id"),
            "model_load_seconds": mm.get("model_load_seconds"),
            "config": cfg,
            "load_average_start": round(load_start[0], 2),
            "load_average_end": round(os.getloadavg()[0], 2),
        },
        **res,
    }
    (out / "results.json").write_text(
        json.dumps(res, indent=1, default=str) + "\n", encoding="utf-8"
    )
    md = render(res)
    (out / "results.md").write_text(md, encoding="utf-8")
    lat = res.get("speed", {}).get("latency")
    if lat:
        from .latency_at_scale import plot

        plot(lat, out / "latency.png")
    if args.out is None and not args.quick and not args.no_readme:
        update_readme(md, res["meta"], quality_only)
    log(f"done in {res['meta']['wall_seconds'] / 60:.1f} min: {out / 'results.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
