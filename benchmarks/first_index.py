"""The first index, old default against new, side by side.

    python -m benchmarks.first_index --work DIR [--files 95] [--rounds 2]

A folder of the big-vault mix (``benchmarks.bigvault.make_vault``; 95 notes
are 1,190 chunks and 1,632 texts, 260 notes 2,808 chunks and 3,740 texts) is indexed from empty by a :class:`Folder` (what the
language server and the MCP server run), once per configuration, each in its
own process (peak RSS is that process's), the configurations alternated:

* ``old``: fp32, one thread, model calls of 32 texts (the default before
  threads by demand and calls of 8);
* ``new``: the default now (the bundled model's int8 copy since issue 41,
  threads by demand, calls of 8, the bulk model work on a low-priority thread);
* ``fp32``: the same with fp32 asked for (the default before issue 41);
* ``int8``: the same with int8 asked for (the model wheel's copy).

While it indexes, a query is asked every ``--every`` seconds through
``Folder.search`` (hybrid once the model is in): its latency during the first
index; then, the index ready, the same queries idle. Reported: seconds to every
chunk vector (search by meaning over every section; passages come after)
and to every vector, texts/s embedding, query p50/p95 during and idle, peak RSS, and the
new/old ratios. Timings are wall-clock on a shared machine: compare runs made
side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from mdseek.index.store import survey

from .output import emit

CONFIGS = {
    "old": {"MDSEEK_PRECISION": "fp32", "MDSEEK_THREADS": "1"},
    "new": {},  # the default: int8 (the bundled model's, issue 41), threads by demand
    "fp32": {"MDSEEK_PRECISION": "fp32"},  # the default before issue 41
    "int8": {"MDSEEK_PRECISION": "int8"},  # asked for, threads by demand
}
BATCH = {"old": 32}  # texts per ONNX call where not the encoder's own (8)
QUERIES = [
    "what do I do when the main database machine dies",
    "how do I configure the plugin registry",
    "does vitamin D reduce fracture risk",
    "install on OpenShift with a Helm chart",
    "rotate the TLS certificate",
]


def _p(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 1) if xs else float("nan")


def _chunks_waiting(index: Path, model: str) -> int | None:
    """Chunks with no vector of ``model`` yet (read-only, beside the writer; None: unreadable)."""
    return survey.waiting(index, model)


def one(vault: Path, index: Path, every: float) -> dict:
    """(In this process.) One first index of ``vault`` into an empty ``index``."""
    from mdseek.index.engine.folder import Folder
    from mdseek.index.engine.opening import EngineOptions
    from mdseek.index.search.requests import SearchRequest

    for p in index.parent.glob(index.name + "*"):
        p.unlink()
    t0 = time.perf_counter()
    f = Folder(vault)
    f.open(EngineOptions(index_path=index))
    eng = f.engine
    assert eng is not None
    done = threading.Event()
    reps: list = []

    def run() -> None:
        reps.append(f.reconcile())
        done.set()

    threading.Thread(target=run, daemon=True).start()
    during: list[float] = []
    chunks_s: float | None = None  # every chunk has its vector: search by meaning over all
    i = 0
    while not done.wait(every):
        if chunks_s is None and f.chunked and _chunks_waiting(index, eng.models.model_id) == 0:
            chunks_s = time.perf_counter() - t0
        if not eng.models.embedder.loaded or not f.chunked:
            continue  # keywords only until then: not the latency asked about
        q = QUERIES[i % len(QUERIES)]
        i += 1
        t = time.perf_counter()
        f.search(SearchRequest.make(q + f" {i}", limit=10))  # a new text: no query cache
        during.append(time.perf_counter() - t)
    total = time.perf_counter() - t0
    rep = reps[0]
    idle: list[float] = []
    for j in range(30):
        t = time.perf_counter()
        f.search(SearchRequest.make(QUERIES[j % len(QUERIES)] + f" idle {j}", limit=10))
        idle.append(time.perf_counter() - t)
    st = f.status()
    out = {
        "model": st.model,
        "chunks": st.chunks,
        "pending": st.pending_embeds,
        "chunk_vectors_s": round(chunks_s if chunks_s is not None else total, 1),
        "all_vectors_s": round(total, 1),
        "embedded": rep.embedded,
        "embed_s": round(rep.embed_seconds, 1),
        "chunks_per_s": round(rep.embedded / rep.embed_seconds, 1) if rep.embed_seconds else None,
        "bulk_batches_by_threads": eng.models.embedder.bulk_threads_used,
        "queries_during": len(during),
        "p50_during_ms": _p(during, 0.5),
        "p95_during_ms": _p(during, 0.95),
        "p50_idle_ms": _p(idle, 0.5),
        "p95_idle_ms": _p(idle, 0.95),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    f.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.first_index", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--work", required=True, type=Path, help="folder for the vault and indexes")
    ap.add_argument("--files", type=int, default=95, help="notes in the vault (95: 1,190 chunks)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--every", type=float, default=0.5, help="seconds between queries")
    ap.add_argument("--configs", default="old,new", help="old, new, fp32, int8 (comma list)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: one config in this process
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    work = args.work.resolve()
    vault = work / f"vault-{args.files}"
    if args.one:
        if args.one in BATCH:
            from mdseek.index.model.onnx_encoder import OnnxEncoder

            OnnxEncoder.batch_size = BATCH[args.one]
        print(json.dumps(one(vault, work / f"index-{args.one}.sqlite", args.every)))
        return 0
    from .bigvault import make_vault
    from .data import data_dir

    data = data_dir()
    if data is None:
        raise SystemExit("benchmark data not found")
    meta = make_vault(data, vault, args.files)
    print(f"vault {vault}: {meta}", file=sys.stderr)
    results: dict[str, list[dict]] = {c: [] for c in args.configs.split(",")}
    for r in range(args.rounds):
        order = list(results) if r % 2 == 0 else list(reversed(results))
        for c in order:
            env = {**os.environ, **CONFIGS[c]}
            for k in ("MDSEEK_PRECISION", "MDSEEK_THREADS"):
                if k not in CONFIGS[c]:
                    env.pop(k, None)
            cmd = [sys.executable, "-m", "benchmarks.first_index", "--work", str(work),
                   "--files", str(args.files), "--every", str(args.every), "--one", c]  # fmt: skip
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            res["load"] = round(os.getloadavg()[0], 1)
            results[c].append(res)
            print(f"round {r + 1} {c}: {res}", file=sys.stderr)
    summary: dict = {"vault": meta, "runs": results}
    if "old" in results and "new" in results:
        med = {c: {k: statistics.median(x[k] for x in rs) for k in
                   ("chunk_vectors_s", "all_vectors_s", "chunks_per_s", "p95_during_ms", "p95_idle_ms", "peak_rss_mb")}
               for c, rs in results.items()}  # fmt: skip
        summary["median"] = med
        summary["ratios"] = {
            "rate_new_over_old": round(med["new"]["chunks_per_s"] / med["old"]["chunks_per_s"], 2),
            "time_new_over_old": round(med["new"]["all_vectors_s"] / med["old"]["all_vectors_s"], 2),
            "chunk_time_new_over_old": round(med["new"]["chunk_vectors_s"] / med["old"]["chunk_vectors_s"], 2),
            "new_p95_during_over_idle": round(med["new"]["p95_during_ms"] / med["new"]["p95_idle_ms"], 2),
            "old_p95_during_over_idle": round(med["old"]["p95_during_ms"] / med["old"]["p95_idle_ms"], 2),
        }  # fmt: skip
    return emit(summary, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
