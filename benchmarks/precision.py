"""int8 against fp32, judged on ranking: nDCG@10 on every benchmark half, and speed.

    python -m benchmarks.precision --work DIR [--rounds 5] [--texts 384]

``DIR`` is the quality benchmark's scratch folder (``python -m benchmarks
--work DIR --keep-work`` leaves one; a missing corpus is built there). Every
corpus is indexed twice, each precision in its own index file beside the
other (``index.sqlite`` is the fp32 one the quality benchmark keeps, so fp32
embeds nothing when it is there; ``index-int8.sqlite`` is made here), then
searched through ``Engine.search`` in hybrid (what users get) and dense mode
(the vectors alone): nDCG@10 at the corpus' level (sections where section
qrels exist, else documents) on the dev and test halves.

Speed: the fp32 export and its int8 copy encode the same chunk texts (a
spread of the product docs' chunks, batches of 32 in token order, as mdseek
embeds) at 1 and 2 threads, the four encoders interleaved round after round;
medians of texts/s. On a shared machine read the ratio, not the rate.

int8 would be the default only if hybrid nDCG@10 stays within
:data:`MAX_DROP` of fp32 on every test half and it is faster in the big-vault
benchmark; otherwise it is a choice (``precision: int8``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from . import models
from .quality import run_engine, score_splits

MAX_DROP = 0.005
CORPORA = ("rhdh", "rhdh-long", "scifact", "fixtures", "fixtures-long")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ranking(work: Path, names: set[str]) -> dict:
    """nDCG@10 per corpus, half and mode, for fp32 and int8."""
    from mdseek.index.engine.engine import Engine
    from mdseek.index.model.embed import EmbedSettings

    cs = models.corpora(work, False, names, log)
    out: dict = {}
    for precision, file in (("fp32", "index.sqlite"), ("int8", "index-int8.sqlite")):
        engines: dict[Path, Engine] = {}
        for c in cs:
            eng = engines.get(c.root)
            if eng is None:
                eng = engines[c.root] = Engine(
                    c.root,
                    index_path=c.root.parent / file,
                    embed=EmbedSettings(precision=precision),
                )
                t0 = time.perf_counter()
                rep = eng.index()
                if rep.lexical_only_reason:
                    raise RuntimeError(rep.lexical_only_reason)
                log(f"{precision} {c.label}: {rep.chunks} chunks, {rep.embedded} embedded in"
                    f" {time.perf_counter() - t0:.0f} s ({eng.model_id})")  # fmt: skip
            row = out.setdefault(c.name, {"label": c.label, "level": c.primary})
            row["queries"] = len(c.qrels.queries)
            for mode in ("hybrid", "dense"):
                runs, _ = run_engine(eng, c.qrels, mode)
                sc = score_splits(runs, c.qrels, c.sections)
                row.setdefault(precision, {})[mode] = {
                    half: round(sc[half][c.primary]["ndcg@10"], 4) for half in ("dev", "test")
                }
            r = row[precision]
            log(
                f"  {c.name} {precision}: test nDCG@10 hybrid {r['hybrid']['test']}, dense {r['dense']['test']}"
            )
        for e in engines.values():
            e.close()
    for row in out.values():
        row["delta"] = {
            mode: {
                h: round(row["int8"][mode][h] - row["fp32"][mode][h], 4) for h in ("dev", "test")
            }
            for mode in ("hybrid", "dense")
        }
    return out


def speed(work: Path, rounds: int, n_texts: int) -> dict:
    """texts/s of the fp32 export and its int8 copy at 1 and 2 threads, interleaved."""
    import sqlite3

    from mdseek.index.model.model import model_id, resolve_model
    from mdseek.index.model.onnx_encoder import OnnxEncoder
    from mdseek.index.model.onnx_export import ensure_fp32
    from mdseek.index.model.onnx_int8 import ensure_int8

    resolved = resolve_model(None)
    base = model_id(resolved)
    folders = {"fp32": ensure_fp32(resolved, base), "int8": ensure_int8(resolved, base)}
    db = sqlite3.connect(f"file:{work / 'rhdh' / 'index.sqlite'}?mode=ro", uri=True)
    texts = [
        r[0]
        for r in db.execute("SELECT min(embedding_text) FROM chunks GROUP BY text_hash ORDER BY 1")
    ]
    db.close()
    texts = texts[:: max(1, len(texts) // n_texts)][:n_texts]
    threads = sorted({1, min(2, len(os.sched_getaffinity(0)))})
    encs = {(p, n): OnnxEncoder(f, n) for p, f in folders.items() for n in threads}
    for enc in encs.values():
        enc.encode(texts[:16], 16)  # warm
    rates: dict = {k: [] for k in encs}
    load = [os.getloadavg()[0]]
    for _ in range(rounds):
        for k, enc in encs.items():
            t0 = time.perf_counter()
            enc.encode(texts, 32)
            rates[k].append(len(texts) / (time.perf_counter() - t0))
        load.append(os.getloadavg()[0])
    res: dict = {"texts": len(texts), "rounds": rounds, "threads": threads, "load_average": load}
    for (p, n), r in rates.items():
        res.setdefault(p, {})[str(n)] = round(statistics.median(r), 1)
    for n in threads:
        res.setdefault("int8_vs_fp32", {})[str(n)] = round(
            res["int8"][str(n)] / res["fp32"][str(n)], 2
        )
    log(f"speed: {json.dumps(res)}")
    return res


def render(res: dict) -> str:
    rk = res["ranking"]
    L = [
        "| corpus (level) | queries | hybrid test fp32 / int8 (Δ) | hybrid dev fp32 / int8 (Δ) "
        "| dense test fp32 / int8 (Δ) | dense dev fp32 / int8 (Δ) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rk.values():
        cells = []
        for mode in ("hybrid", "dense"):
            for h in ("test", "dev"):
                a, b, d = row["fp32"][mode][h], row["int8"][mode][h], row["delta"][mode][h]
                cells.append(f"{a:.4f} / {b:.4f} ({d:+.4f})")
        L.append(
            f"| {row['label']} ({row['level']}) | {row['queries']} | " + " | ".join(cells) + " |"
        )
    sp = res.get("speed")
    if sp:
        L += ["", "| threads | fp32 texts/s | int8 texts/s | int8 / fp32 |", "|---|---|---|---|"]
        for n in sp["threads"]:
            n = str(n)
            L.append(f"| {n} | {sp['fp32'][n]} | {sp['int8'][n]} | {sp['int8_vs_fp32'][n]}× |")
    worst = min(row["delta"]["hybrid"]["test"] for row in rk.values())
    L += ["", f"Largest hybrid test-half drop: {worst:+.4f} (the bar: -{MAX_DROP})."]
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.precision", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--work", required=True, type=Path, help="the quality benchmark's work folder")
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma list (default: all)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved speed rounds")
    ap.add_argument("--texts", type=int, default=384, help="chunk texts per speed round")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-ranking", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    res: dict = {"load_average_start": os.getloadavg()[0]}
    if not args.no_ranking:
        res["ranking"] = ranking(args.work.resolve(), set(args.corpora.split(",")))
    if not args.no_speed:
        res["speed"] = speed(args.work.resolve(), args.rounds, args.texts)
    res["load_average_end"] = os.getloadavg()[0]
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    if "ranking" in res:
        print(render(res), end="")
    else:
        print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
