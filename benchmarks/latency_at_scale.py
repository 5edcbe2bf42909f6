"""Query latency and memory at scale: tiers of about 1k, 10k and 100k chunks
(:func:`build_tiers`) made from a real indexed folder, each measured in a
worker process of its own (``python -m benchmarks.speed worker``:
:func:`worker`) beside a brute-force search that re-reads every vector from
SQLite per query (:func:`latency`), and the plot. The real folder keeps its
real vectors; the generated sections (made from its paragraphs) get synthetic
random unit vectors (the cost of a matrix product, a top-k and the memory do
not depend on which unit vectors are in the matrix). With passages (the
default chunker) the generated sections' passages get vectors too.

Alone, on one indexed folder, for a quick before/after of a ranking change:

    .venv/bin/python -m benchmarks.latency_at_scale --root DIR --index FILE
        [--sizes 100000] [--n 150] [--work DIR] [--passage-words N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mdseek.index.engine.engine import Engine
from mdseek.index.search import retrieve
from mdseek.index.store import survey

from .data import REPO, load_fixture_queries, make_scale_docs
from .timing import ms_stats

Log = Callable[[str], None]

# -- scale corpora ------------------------------------------------------------


def _link(src: Path, dest: Path) -> None:
    try:
        os.link(src, dest)
    except OSError:
        shutil.copy2(src, dest)


def build_tiers(
    real_root: Path,
    real_index: Path,
    work: Path,
    sizes: list[int],
    log: Log,
    seed: int = 7,
) -> list[dict]:
    """Index folders of about ``sizes`` chunks: real docs first (with their real vectors),
    then generated docs (synthetic unit vectors). Each tier contains the previous one."""
    work.mkdir(parents=True, exist_ok=True)
    model = survey.models(real_index)[0]
    real_vecs = survey.vectors_by_hash(real_index, model)
    per_doc = [(p, n) for p, n in survey.chunks_per_document(real_index) if n]
    rng = np.random.default_rng(seed)
    gen = work / "generated"
    shutil.rmtree(gen, ignore_errors=True)
    made = 0  # generated sections so far (files gen-00000.md ... in `gen`)
    tiers: list[dict] = []
    prev_index: Path | None = None
    prev_root: Path | None = None
    for n, size in enumerate(sizes):
        t0 = time.perf_counter()
        root = work / f"tier-{size}"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        total = 0
        for rel, c in per_doc:
            if total >= size:
                break
            dest = root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            _link(real_root / rel, dest)
            total += int(c)
        need = size - total
        if need > 0:
            extra = need - made
            if extra > 0:
                make_scale_docs(real_root, gen, extra, seed=seed + n, prefix=f"gen{n}")
                made += extra
            for f in sorted(gen.glob("*.md")):
                _link(f, root / f.name)
        index = work / f"tier-{size}.sqlite"
        if prev_index is not None and prev_root is not None:
            survey.copy(prev_index, index)
            # The previous tier's documents are the same files under a new root: the
            # index keys them by relative path, size and mtime, so they are not redone.
        eng = Engine(root, index_path=index)
        try:
            rep = eng.index(embed=False)
            model_id = eng.models.model_id
            if model_id != model:
                raise RuntimeError(f"model id changed: {model_id} != {model}")
            pending = eng.store.vectors.pending_chunks(model_id)
            dim = len(next(iter(real_vecs.values())))
            n_real = n_syn = 0
            for i in range(0, len(pending), 5000):
                part = pending[i : i + 5000]
                vecs = np.empty((len(part), dim), dtype=np.float32)
                for j, (h, _) in enumerate(part):
                    real = real_vecs.get(h)
                    if real is not None:
                        vecs[j] = real
                        n_real += 1
                    else:
                        v = rng.standard_normal(dim).astype(np.float32)
                        vecs[j] = v / np.linalg.norm(v)
                        n_syn += 1
                eng.store.vectors.put_vectors(model_id, [h for h, _ in part], vecs)
            counts = eng.store.counts()
            real_total = survey.chunks_with_vectors(index)
        finally:
            eng.close()
        prev = tiers[-1] if tiers else {"real_vectors": 0, "synthetic_vectors": 0}
        tier = {
            "target": size,
            "root": str(root),
            "index": str(index),
            "chunks": counts["chunks"],
            "files": counts["files"],
            "real_vectors": prev["real_vectors"] + n_real,
            "synthetic_vectors": prev["synthetic_vectors"] + n_syn,
            "build_seconds": round(time.perf_counter() - t0, 1),
            "chunked_this_tier": rep.chunks_written,
        }
        assert real_total == counts["chunks"], "every chunk must have a vector"
        tiers.append(tier)
        log(
            f"  tier ~{size}: {counts['chunks']} chunks in {counts['files']} files"
            f" ({tier['real_vectors']} real vectors, {tier['synthetic_vectors']} synthetic)"
            f" built in {tier['build_seconds']}s"
        )
        prev_index, prev_root = index, root
    return tiers


# -- query latency ------------------------------------------------------------


def worker(root: Path, index: Path, queries: list[str], n: int, n_brute: int) -> dict:
    import psutil

    proc = psutil.Process()
    eng = Engine(root, index_path=index)
    # The embedder caches recent query vectors (an editor resends the same query);
    # every timed query here is embedded afresh, so the cache is emptied before each.
    qcache = getattr(eng.models.embedder, "_query_cache", None)

    def fresh() -> None:
        if qcache is not None:
            qcache.clear()

    eng.models.embedder.load()
    eng.models.embedder.encode_query("warm up")
    rss_model = proc.memory_info().rss
    t0 = time.perf_counter()
    eng.dense_side.sync()
    load = time.perf_counter() - t0
    # As in the server: lexical candidates ranked from memory (index/search/lexical.py)
    # from LEXICAL_IN_MEMORY_MIN chunks, by FTS5 below.
    eng.lexical_side.in_memory = True
    lexical_build = eng.build_lexical()
    chunks = eng.store.counts()["chunks"]
    lexical_from = "memory" if eng.lexical_side.current() else "FTS5"
    qs = (queries * (1 + n // max(1, len(queries))))[:n]
    for q in qs[:5]:
        eng.search(q, limit=10)
    out: dict = {
        "chunks": chunks, "passages": eng.store.counts()["passages"],
        "dense_rows": eng.dense_side.matrix.rows, "matrix_load_seconds": round(load, 3),
        "lexical_build_seconds": round(lexical_build, 2), "lexical_from": lexical_from,
    }  # fmt: skip
    for mode in ("hybrid", "dense", "lexical"):
        times = []
        for q in qs:
            fresh()
            t = time.perf_counter()
            eng.search(q, limit=10, mode=mode)
            times.append(time.perf_counter() - t)
        out[mode] = ms_stats(times)
    # Where a hybrid query's time goes: the query embedding, the lexical side
    # (query terms + BM25 from memory), the dense matrix; and beside them the
    # same lexical query ranked by FTS5's bm25() in SQLite, with the overlap of
    # the two top-10s (the in-memory ranking is FTS5's formula: 10/10 expected).
    emb, lex, fts, den, overlap = [], [], [], [], []
    for q in qs[: min(len(qs), 60)]:
        fresh()
        t = time.perf_counter()
        qv = eng.models.embedder.encode_query(q)
        emb.append(time.perf_counter() - t)
        t = time.perf_counter()
        terms, hits = eng.lexical_side.hits(eng.parse_query(q), eng.searcher.ranking.candidates)
        lex.append(time.perf_counter() - t)
        t = time.perf_counter()
        sql = eng.store.postings.fts_search(
            terms.match(), retrieve.CANDIDATES, eng.lexical_side.fts_weights
        )
        fts.append(time.perf_counter() - t)
        if lexical_from == "memory":
            overlap.append(len({c for c, _ in hits[:10]} & {c for c, _ in sql[:10]}))
        t = time.perf_counter()
        eng.dense_side.matrix.search(qv, retrieve.CANDIDATES)
        den.append(time.perf_counter() - t)
    out["parts"] = {
        "query_embedding": ms_stats(emb), "lexical": ms_stats(lex), "dense_matrix": ms_stats(den),
        "fts5_bm25": ms_stats(fts),
        "top10_overlap_memory_vs_fts5": round(statistics.mean(overlap), 2) if overlap else None,
    }  # fmt: skip
    out["backend"] = eng.models.embedder.backend
    rss_index = proc.memory_info().rss
    # Brute force: embed the query, re-read every vector from SQLite, numpy over all.
    model = eng.models.model_id
    times = []
    for q in qs[:n_brute]:
        fresh()
        t = time.perf_counter()
        qv = eng.models.embedder.encode_query(q)
        ids, mat = eng.store.vectors.chunk_vectors(model)  # every vector re-read from SQLite
        scores = mat @ qv
        k = min(10, len(ids))
        top = np.argpartition(-scores, k - 1)[:k]
        _ = ids[top[np.argsort(-scores[top])]]
        times.append(time.perf_counter() - t)
        del ids, mat
    out["brute_force"] = ms_stats(times)
    out["rss_mb"] = {
        "model_loaded": round(rss_model / 2**20, 1),
        "index_loaded": round(rss_index / 2**20, 1),
        "index_share": round((rss_index - rss_model) / 2**20, 1),
    }
    out["matrix_mb"] = round(eng.dense_side.matrix.mat.nbytes / 2**20, 1)
    eng.close()
    return out


def latency(
    tiers: list[dict], queries: list[str], n: int, n_brute: list[int], work: Path, log: Log
) -> list[dict]:
    qfile = work / "queries.json"
    qfile.write_text(json.dumps(queries))
    out = []
    for tier, nb in zip(tiers, n_brute, strict=True):
        cmd = [
            sys.executable, "-m", "benchmarks.speed", "worker",
            "--root", tier["root"], "--index", tier["index"], "--queries", str(qfile),
            "--n", str(n), "--brute", str(nb),
        ]  # fmt: skip
        t0 = time.perf_counter()
        res = subprocess.run(cmd, cwd=str(REPO), capture_output=True, text=True, timeout=1800)
        if res.returncode != 0:
            raise RuntimeError(f"latency worker failed:\n{res.stderr[-3000:]}")
        r = json.loads(res.stdout.strip().splitlines()[-1])
        r.update({k: tier[k] for k in ("target", "real_vectors", "synthetic_vectors", "files")})
        out.append(r)
        log(
            f"  latency ~{tier['target']}: hybrid median {r['hybrid']['median_ms']} ms p95 {r['hybrid']['p95_ms']} ms;"
            f" brute force median {r['brute_force']['median_ms']} ms; RSS {r['rss_mb']['index_loaded']} MB"
            f" ({time.perf_counter() - t0:.0f}s)"
        )
    return out


def plot(lat: list[dict], dest: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["chunks"] for r in lat]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    series = [
        ("mdseek hybrid, median", [r["hybrid"]["median_ms"] for r in lat], "-o", "C0"),
        ("mdseek hybrid, p95", [r["hybrid"]["p95_ms"] for r in lat], "--o", "C0"),
        ("mdseek dense only, median", [r["dense"]["median_ms"] for r in lat], "-s", "C2"),
        ("mdseek lexical only, median", [r["lexical"]["median_ms"] for r in lat], "-^", "C4"),
        (
            "brute force (SQLite re-read + numpy), median",
            [r["brute_force"]["median_ms"] for r in lat],
            "-x",
            "C3",
        ),
    ]
    for label, y, style, color in series:
        ax.plot(x, y, style, label=label, color=color)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks in the index")
    ax.set_ylabel("query latency, ms (query embedding included)")
    ax.set_title("Query latency vs corpus size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(dest)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.latency_at_scale")
    ap.add_argument("--root", type=Path, default=REPO / "fixtures")
    ap.add_argument("--index", type=Path, required=True, help="an index of --root with vectors")
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="mdseek-lat-"))

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    sizes = [int(s) for s in args.sizes.split(",")]
    tiers = build_tiers(args.root, args.index, work, sizes, log)
    queries = list(load_fixture_queries(("paraphrase", "keyword", "tail"))[1].queries.values())
    out = latency(tiers, queries, args.n, [5] * len(tiers), work, log)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
