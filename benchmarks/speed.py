"""Speed and scale: the index throughput here; every other speed study in its
own file, each run by ``python -m benchmarks`` (the "speed" part) and each
measured in the same run on the same machine against a baseline beside it:

* index throughput (:func:`throughput`) vs the bare encode of the same
  embedded texts by the same backend (the compute limit the model sets);
* torch vs ONNX Runtime side by side, and int8: :mod:`benchmarks.backends`;
* the cold command line: :mod:`benchmarks.cold_cli`;
* a one-line edit reindexed vs re-embedding the whole document:
  :mod:`benchmarks.incremental`;
* query latency and memory at about 1k, 10k and 100k chunks vs brute force:
  :mod:`benchmarks.latency_at_scale`.

``python -m benchmarks.speed worker ...`` is the latency worker: one process
per corpus size, so that its resident memory is that corpus's alone;
``python -m benchmarks.speed backends|cold-cli`` runs that part alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from mdseek.index.engine.engine import Engine
from mdseek.index.store import survey

from .timing import ms_stats, pct  # noqa: F401 (speed.pct, speed.ms_stats)

Log = Callable[[str], None]


# -- index throughput ---------------------------------------------------------


def throughput(root: Path, index: Path, log: Log) -> tuple[dict, Engine]:
    """Full index of ``root`` (model already loaded) vs bare encode of the same texts.
    Always from an empty index, even when the work folder is kept."""
    from mdseek.index.store.location import companions

    for p in (index, *companions(index)):
        p.unlink(missing_ok=True)
    eng = Engine(root, index_path=index)
    st = eng.models.embedder.load()  # the backend's encoder (ONNX Runtime unless told otherwise)
    st.encode(["warm up the model"] * 8, 8)  # both runs below start warm
    rep = eng.index()
    if rep.lexical_only_reason:
        raise RuntimeError(rep.lexical_only_reason)
    texts = survey.embedding_texts(index)
    t0 = time.perf_counter()
    st.encode(texts, eng.models.embedder.batch_size)
    bare = time.perf_counter() - t0
    out = {
        "corpus_files": rep.files,
        "chunks": rep.chunks,
        "embedded": rep.embedded,
        "index_seconds": round(rep.seconds, 2),
        "embed_seconds": round(rep.embed_seconds, 2),
        "parse_chunk_store_seconds": round(rep.seconds - rep.embed_seconds, 2),
        "chunks_per_s": round(rep.chunks / rep.seconds, 2),
        "bare_encode_seconds": round(bare, 2),
        "bare_chunks_per_s": round(len(texts) / bare, 2),
        "overhead_ratio": round(rep.seconds / bare, 3),
        "batch_size": eng.models.embedder.batch_size or eng.models.embedder.load().batch_size,
        "backend": eng.models.embedder.backend,
        "threads": eng.models.embedder.settings.n_threads,
    }
    log(
        f"  throughput: {rep.chunks} chunks in {rep.seconds:.1f}s ({out['chunks_per_s']:.1f}/s);"
        f" bare encode {bare:.1f}s ({out['bare_chunks_per_s']:.1f}/s): ratio {out['overhead_ratio']:.2f}"
    )
    return out, eng


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.speed")
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker", help="query latency and memory of one index (JSON on stdout)")
    w.add_argument("--root", required=True)
    w.add_argument("--index", required=True)
    w.add_argument("--queries", required=True)
    w.add_argument("--n", type=int, default=100)
    w.add_argument("--brute", type=int, default=20)
    for name in ("backends", "cold-cli"):
        b = sub.add_parser(
            name, help=f"the {name} part alone on an indexed folder (JSON on stdout)"
        )
        b.add_argument("--root", required=True)
        b.add_argument("--index", required=True)
        b.add_argument("--work", required=True)
        b.add_argument("--rounds", type=int, default=2)
        b.add_argument("--texts", type=int, default=192)
    args = ap.parse_args(argv)
    if args.cmd == "worker":
        from .latency_at_scale import worker

        queries = json.loads(Path(args.queries).read_text())
        res = worker(Path(args.root), Path(args.index), queries, args.n, args.brute)
    else:
        from .data import DataMissing, data_dir, load_rhdh

        def log(msg: str) -> None:
            print(msg, file=sys.stderr, flush=True)

        root, index, work = Path(args.root), Path(args.index), Path(args.work)
        if args.cmd == "cold-cli":
            from .cold_cli import cold_cli

            res = cold_cli(root, index, "how do I configure the database connection", log)
        else:
            from .backends import backends, int8_study

            qrels = None
            try:
                d = data_dir()
                qrels = load_rhdh(d)[1] if d else None
            except DataMissing:
                pass
            res = backends(root, index, qrels, work, log, rounds=args.rounds, max_texts=args.texts)
            res["int8"] = int8_study(index, work, log)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())


# -- report -------------------------------------------------------------------


def render_backends_and_cli(sp: dict) -> list[str]:
    """Markdown for the backend comparison and the cold command line."""
    L: list[str] = []
    be = sp.get("backends")
    if be:
        th = [str(n) for n in be["threads"]]
        L.append(
            f"### Embedding backends side by side ({be['texts']} chunk texts, {be['queries']} queries,"
            f" median of {be['rounds']} interleaved rounds)"
        )
        L.append("")
        head = ["backend"]
        head += [f"batch texts/s, {n} thread(s)" for n in th]
        head += [f"query ms (median / p95), {n} thread(s)" for n in th]
        head += ["cosine to torch (min / mean)"]
        qual = any("quality" in v for v in be["variants"].values())
        if qual:
            head += ["nDCG@10 dense dev / test", "nDCG@10 hybrid dev / test"]
        rows = []
        for name, v in be["variants"].items():
            row = [name]
            row += [f"{v['throughput_texts_per_s'][n]:.1f}" for n in th]
            row += [
                f"{v['query_ms'][n]['median_ms']:.1f} / {v['query_ms'][n]['p95_ms']:.1f}"
                for n in th
            ]
            row += [f"{v['cosine_vs_torch']['min']:.6f} / {v['cosine_vs_torch']['mean']:.6f}"]
            if qual:
                q = v.get("quality", {})

                def nd(key: str, q=q) -> str:
                    m = q.get(key)
                    return "–" if not m else f"{m['doc_ndcg@10']:.4f}"

                row += [
                    f"{nd('dense/dev')} / {nd('dense/test')}",
                    f"{nd('hybrid/dev')} / {nd('hybrid/test')}",
                ]
            rows.append(row)
        L += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        L += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        L.append("")
        L.append(
            "Same process, same texts, batches of 32 sorted by token count; nDCG@10 (document level) from each"
            " backend's own vectors of every chunk, on the dev and held-out test halves of the product-docs queries."
        )
        pad = be.get("padding_share")
        if pad:
            L.append(
                f"Padding in batches of {pad['batch']} over every chunk: {pad['by_characters']:.1%} of the tokens"
                f" when sorted by characters, {pad['by_tokens']:.1%} when sorted by tokens (what mdseek does)."
            )
        L.append("")
    q8 = sp.get("int8")
    if q8:
        L.append(
            f"### int8 (onnxruntime dynamic quantisation) vs the fp32 export ({q8['texts']} chunk texts)"
        )
        L.append("")
        L += [
            "| variant | MatMuls kept fp32 | cosine to fp32 (min / mean) | speed vs fp32 | size MB |",
            "|---|---|---|---|---|",
        ]
        for r in q8["variants"]:
            L.append(
                f"| {r['variant']} | {r['fp32_matmuls']} of {q8['weight_matmuls']} | {r['cosine_min']:.5f} /"
                f" {r['cosine_mean']:.5f} | {r['speedup_vs_fp32']:.2f}× | {r['size_mb']:.0f} |"
            )
        L.append("")
        L.append(
            f"Cosine ≥ {q8['threshold']} and faster: "
            + ("some variant is." if q8["offered"] else "no variant is.")
            + " Cosine is not what users feel: the first variant is offered as `--precision int8`,"
            " judged on nDCG@10 (`python -m benchmarks.precision`, below)."
        )
        L.append("")
    cli = sp.get("cold_cli")
    if cli:
        L.append(
            f"### Cold command line (fresh process each, median of {cli['runs']} interleaved runs)"
        )
        L.append("")
        L += ["| command | median s | min s |", "|---|---|---|"]
        for k, v in cli.items():
            if isinstance(v, dict):
                L.append(f"| `{k}` | {v['median_s']:.2f} | {v['min_s']:.2f} |")
        L.append("")
        L.append(
            f"Hybrid search on an existing index = {cli['hybrid_vs_python_sqlite']}× a bare Python start plus an"
            f" SQLite open (lexical {cli['lexical_vs_python_sqlite']}×); no daemon, no torch import."
        )
        L.append("")
    return L
