"""int8 against fp32, judged on ranking: nDCG@10 on every benchmark half, and speed.

    python -m benchmarks.precision --work DIR [--rounds 5] [--texts 384] [--batch 32]
        [--int8-folder FOLDER]

``DIR`` is the quality benchmark's scratch folder (``python -m benchmarks
--work DIR --keep-work`` leaves one; a missing corpus is built there). Every
corpus is indexed twice, each precision in its own index file beside the
other (``index.sqlite`` is the fp32 one the quality benchmark keeps, so fp32
embeds nothing when it is there; ``index-int8.sqlite`` is made here), then
searched through ``Engine.search`` in hybrid (what users get) and dense mode
(the vectors alone): nDCG@10 at the corpus' level (sections where section
qrels exist, else documents) on the dev and test halves, and a label-free
fidelity: how many of fp32's top 10 results int8 also returns (mean over every
query, dev half and all).

``--int8-folder`` judges another int8 recipe in place of the product's copy:
an ONNX folder as :mod:`mdseek.index.model.onnx_int8` writes one (``model.onnx``,
``tokenizer.json``, ``sentence_bert_config.json``, ``manifest.json``), served
under the int8 model id; its index file is ``index-int8-<sha256 of its
model.onnx, 12 hex>.sqlite``, so recipes never share vectors.

Speed: the fp32 export and its int8 copy encode the same chunk texts (a
spread of the product docs' chunks, batches of ``--batch`` in token order, as mdseek
embeds) at 1 and 2 threads, the four encoders interleaved round after round;
medians of texts/s. On a shared machine read the ratio, not the rate.

int8 would be the default only if hybrid nDCG@10 stays within
:data:`MAX_DROP` of fp32 on every test half and it is faster in the big-vault
benchmark; otherwise it is a choice (``precision: int8``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
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


def int8_file(folder: Path | None) -> str:
    """The int8 index file: the product's copy's, or one per recipe folder."""
    if folder is None:
        return "index-int8.sqlite"
    digest = hashlib.sha256((folder / "model.onnx").read_bytes()).hexdigest()[:12]
    return f"index-int8-{digest}.sqlite"


@contextlib.contextmanager
def serving(folder: Path | None):
    """int8 served from ``folder`` (when given) in place of the product's copy."""
    from mdseek.index.model import onnx_int8

    real = onnx_int8.ensure_int8
    if folder is not None:
        onnx_int8.ensure_int8 = lambda *a, **k: folder  # type: ignore[assignment]
    try:
        yield
    finally:
        onnx_int8.ensure_int8 = real  # type: ignore[assignment]


def overlap(a: dict, b: dict, qids: list[str]) -> float:
    """Mean share of ``a``'s top 10 that ``b`` also has, over ``qids``."""
    shares = [len(set(a[q][:10]) & set(b[q][:10])) / max(1, len(a[q][:10])) for q in qids]
    return round(sum(shares) / max(1, len(shares)), 4)


def ranking(work: Path, names: set[str], folder: Path | None = None) -> dict:
    """nDCG@10 per corpus, half and mode, for fp32 and int8 (``folder``'s when
    given), and int8's top-10 overlap with fp32's."""
    from mdseek.index.engine.engine import Engine
    from mdseek.index.model.embed import EmbedSettings

    from .data import split_qids

    cs = models.corpora(work, False, names, log)
    out: dict = {}
    tops: dict = {}
    for precision, file in (("fp32", "index.sqlite"), ("int8", int8_file(folder))):
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
                    f" {time.perf_counter() - t0:.0f} s ({eng.models.model_id})")  # fmt: skip
            row = out.setdefault(c.name, {"label": c.label, "level": c.primary})
            row["queries"] = len(c.qrels.queries)
            for mode in ("hybrid", "dense"):
                runs, _ = run_engine(eng, c.qrels, mode)
                tops[(precision, c.name, mode)] = runs
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
    for name, row in out.items():
        row["delta"] = {
            mode: {
                h: round(row["int8"][mode][h] - row["fp32"][mode][h], 4) for h in ("dev", "test")
            }
            for mode in ("hybrid", "dense")
        }
        c = next(c for c in cs if c.name == name)
        qids = {"dev": split_qids(list(c.qrels.queries), "dev", c.qrels.groups)}
        qids["all"] = list(c.qrels.queries)
        row["top10_overlap"] = {
            mode: {
                part: overlap(tops[("fp32", name, mode)], tops[("int8", name, mode)], q)
                for part, q in qids.items()
            }
            for mode in ("hybrid", "dense")
        }
    return out


def speed(
    work: Path, rounds: int, n_texts: int, batch: int = 32, folder: Path | None = None
) -> dict:
    """texts/s of the fp32 export and its int8 copy (``folder`` when given) at 1
    and 2 threads, interleaved."""
    from mdseek.index.model.model import model_id, resolve_model
    from mdseek.index.model.onnx_encoder import OnnxEncoder
    from mdseek.index.model.onnx_export import ensure_fp32
    from mdseek.index.model.onnx_int8 import ensure_int8

    resolved = resolve_model(None)
    base = model_id(resolved)
    folders = {
        "fp32": ensure_fp32(resolved, base),
        "int8": folder or ensure_int8(resolved, base),
    }
    from mdseek.index.store import survey

    texts = survey.embedding_texts(work / "rhdh" / "index.sqlite")
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
            enc.encode(texts, batch)
            rates[k].append(len(texts) / (time.perf_counter() - t0))
        load.append(os.getloadavg()[0])
    res: dict = {
        "texts": len(texts),
        "batch": batch,
        "rounds": rounds,
        "threads": threads,
        "load_average": load,
    }
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
    L += [
        "",
        "| corpus | fp32's top 10 int8 also returns: hybrid dev / all | dense dev / all |",
        "|---|---|---|",
    ]
    for row in rk.values():
        ov = row["top10_overlap"]
        L.append(
            f"| {row['label']} | {ov['hybrid']['dev']:.3f} / {ov['hybrid']['all']:.3f} "
            f"| {ov['dense']['dev']:.3f} / {ov['dense']['all']:.3f} |"
        )
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
    ap.add_argument("--batch", type=int, default=32, help="texts per model call in speed")
    ap.add_argument(
        "--int8-folder", type=Path, help="an int8 ONNX folder to judge in place of the product's"
    )
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--no-ranking", action="store_true")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    res: dict = {"load_average_start": os.getloadavg()[0]}
    folder = args.int8_folder.resolve() if args.int8_folder else None
    if folder is not None:
        res["int8_folder"] = {"path": str(folder), "file": int8_file(folder)}
    if not args.no_ranking:
        with serving(folder):  # for the whole run: the model may load in another thread
            res["ranking"] = ranking(args.work.resolve(), set(args.corpora.split(",")), folder)
    if not args.no_speed:
        res["speed"] = speed(args.work.resolve(), args.rounds, args.texts, args.batch, folder)
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
