"""Texts per ONNX call against peak memory and rate.

    python -m benchmarks.batch_memory [--batches 32,16,8,4] [--texts 384] [--rounds 2]

The same chunk texts (the fixtures' sections, cut at ~1,200 characters so most
fill the model's window) are embedded by the bundled model's fp32 export on one
thread and its int8 copy on two, once per batch size, each in a fresh process
(peak RSS is that process's: the model, ONNX Runtime's arena, the batch's
activations), the sizes alternated round after round. Reported: texts/s and peak
RSS per (precision, batch), and the tokenizer's share of the time (the same
texts tokenized again alone), medians of the rounds. mdseek calls the model with
``OnnxEncoder.batch_size`` texts at a time.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .output import emit

ROOT = Path(__file__).resolve().parent.parent


def _texts(n: int) -> list[str]:
    out: list[str] = []
    for f in sorted((ROOT / "fixtures").rglob("*.md")):
        t = f.read_text(encoding="utf-8", errors="replace")
        out += [t[i : i + 1200] for i in range(0, len(t), 600)]
    while len(out) < n:
        out += out
    return out[:n]


def one(precision: str, batch: int, n: int) -> dict:
    """(In this process.) Embed ``n`` texts ``batch`` at a time."""
    from mdseek.index.model.onnx_encoder import OnnxEncoder
    from mdseek.index.model.packaged import installed

    folder = installed()[0]
    if folder is None:
        raise SystemExit("the model wheel is not installed (bash .ci/setup installs it)")
    enc = OnnxEncoder(
        folder / "int8" if precision == "int8" else folder, 2 if precision == "int8" else 1
    )
    texts = _texts(n)
    loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    enc.encode(texts, batch)
    dt = time.perf_counter() - t0
    t0 = time.perf_counter()
    enc.tok.encode_batch(texts)  # the tokenizer's part of the above, alone
    tok = time.perf_counter() - t0
    return {
        "texts_per_s": round(n / dt, 1),
        "tokenizer_share": round(tok / dt, 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "after_load_mb": round(loaded),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.batch_memory", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--batches", default="32,16,8,4")
    ap.add_argument("--precisions", default="fp32,int8")
    ap.add_argument("--texts", type=int, default=384)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)  # internal: precision batch
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args.texts)))
        return 0
    configs = [(p, int(b)) for p in args.precisions.split(",") for b in args.batches.split(",")]
    runs: dict[str, list[dict]] = {f"{p} {b}": [] for p, b in configs}
    for r in range(args.rounds):
        for p, b in configs if r % 2 == 0 else list(reversed(configs)):
            cmd = [sys.executable, "-m", "benchmarks.batch_memory", "--texts", str(args.texts),
                   "--one", p, str(b)]  # fmt: skip
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            runs[f"{p} {b}"].append(res)
            print(f"round {r + 1} {p} batch {b}: {res}", file=sys.stderr)
    median = {
        k: {
            m: statistics.median(x[m] for x in rs)
            for m in ("texts_per_s", "tokenizer_share", "peak_rss_mb")
        }
        for k, rs in runs.items()
    }
    summary = {"texts": args.texts, "runs": runs, "median": median}
    return emit(summary, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
