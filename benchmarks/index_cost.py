"""What passage vectors cost an index: texts embedded, seconds, file size.

    .venv/bin/python -m benchmarks.index_cost [--corpora fixtures,rhdh,emanual] [--json]
        [--settings 0,30,1,1/60,int8]

Each corpus is indexed from nothing once per setting, side by side in one run,
with the default model: by default without passages (``passage_words=0``,
mdseek before) and with them (the default,
:data:`mdseek.index.text.passages.PASSAGE_WORDS`). ``--settings`` names others:
``N`` = passages of at least N words (1: every block its own; no block cut),
``N/S`` = also a block of over S words cut into sentence runs
(``passage_split``; the default since retrieval v4: ``1/60``), ``int8`` = the
default passages at int8 precision. ``--count FOLDER...`` only counts vectors
per chunk of each setting (the chunker alone, nothing embedded). The first setting is the reference
of the ratios. The issue's bar: within 2x on every measure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from mdseek.index.engine.engine import Engine
from mdseek.index.store import survey
from mdseek.index.text.passages import PASSAGE_WORDS

from .data import FIXTURES, data_home


def roots() -> dict[str, Path]:
    out = {"fixtures": FIXTURES}
    for name in ("rhdh", "emanual", "covidqa"):
        d = data_home(name)
        if d is not None and (d / name / "docs").is_dir():
            out[name] = d / name / "docs"
    return out


def engine_kwargs(setting: str) -> dict:
    """``N``, ``N/S`` or ``int8`` (see the module) as Engine keyword arguments."""
    if setting == "int8":
        from mdseek.index.model.embed import EmbedSettings

        return {"embed": EmbedSettings(precision="int8")}
    words, _, split = setting.partition("/")
    return {"passage_words": int(words), "passage_split": int(split or 0)}


def measure(root: Path, passage_words: int | str, work: Path) -> dict:
    tag = str(passage_words).replace("/", "s")
    ws = work / f"ws-{tag}"
    shutil.copytree(root, ws, ignore=shutil.ignore_patterns(".mdseek"))
    index = work / f"index-{tag}.sqlite"
    t0 = time.perf_counter()
    eng = Engine(ws, index_path=index, **engine_kwargs(str(passage_words)))
    rep = eng.index()
    seconds = time.perf_counter() - t0
    counts = eng.store.counts()
    eng.close()
    survey.settle(index)  # the write-ahead log folded in: the file's size is the index's
    return {
        "chunks": counts["chunks"],
        "passages": counts["passages"],
        "vectors": rep.embedded,
        "seconds": round(seconds, 1),
        "embed_seconds": round(rep.embed_seconds, 1),
        "mb": round(index.stat().st_size / 1e6, 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.index_cost")
    ap.add_argument("--corpora", default=None, help="comma list (default: every one present)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--settings", default=None, help="comma list: N, N/S or int8 (see above)")
    ap.add_argument("--count", nargs="+", type=Path, metavar="FOLDER",
                    help="only count vectors per chunk of each setting in these folders (no embedding)")  # fmt: skip
    args = ap.parse_args(argv)
    if args.count:
        return count(args.count, (args.settings or "0,30,1,1/100,1/60,1/40").split(","))
    if args.settings:
        return compare_settings(args, roots())
    have = roots()
    names = args.corpora.split(",") if args.corpora else list(have)
    out: dict = {}
    for name in names:
        if name not in have:
            print(f"skipped {name}: not found", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory(prefix="mdseek-cost-") as tmp:
            off = measure(have[name], 0, Path(tmp))
            on = measure(have[name], PASSAGE_WORDS, Path(tmp))
        ratio = {k: round(on[k] / off[k], 2) for k in ("vectors", "seconds", "mb") if off[k]}
        out[name] = {"without": off, "with": on, "ratio": ratio}
        print(f"{name}: {json.dumps(out[name])}", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print("| corpus | chunks | passages | vectors without / with | index seconds without / with"
              " | index MB without / with |")  # fmt: skip
        print("|---|---|---|---|---|---|")
        for name, r in out.items():
            a, b, x = r["without"], r["with"], r["ratio"]
            print(
                f"| {name} | {b['chunks']} | {b['passages']} | {a['vectors']} / {b['vectors']}"
                f" ({x.get('vectors')}x) | {a['seconds']} / {b['seconds']} ({x.get('seconds')}x)"
                f" | {a['mb']} / {b['mb']} ({x.get('mb')}x) |"
            )
    return 0


def count(folders: list[Path], settings: list[str]) -> int:
    """Vectors per chunk (chunks + passages over chunks) of each passage setting,
    from the chunker alone: nothing is embedded."""
    from mdseek.index.model.model import resolve_model
    from mdseek.index.model.tokenizer import load_tokenizer
    from mdseek.index.text.chunk import Chunker
    from mdseek.index.text.files import FileFilter, scan
    from mdseek.index.text.parse import parse_bytes

    tok = load_tokenizer(resolve_model(None))
    print("| folder | " + " | ".join(settings) + " |")
    print("|---|" + "---|" * len(settings))
    for root in folders:
        docs = [parse_bytes(f.path.read_bytes(), f.rel) for f in scan(root, FileFilter())]
        cells = []
        for s in settings:
            kw = engine_kwargs(s)
            chunks = [c for d in docs for c in Chunker(tok, **kw).chunk(d)]
            n, p = len(chunks), sum(len(c.passages) for c in chunks)
            cells.append(f"{(n + p) / max(1, n):.2f} ({n} + {p})")
        print(f"| {root} | " + " | ".join(cells) + " |", flush=True)
    return 0


def compare_settings(args: argparse.Namespace, have: dict[str, Path]) -> int:
    """Every corpus indexed once per setting, side by side; ratios to the first."""
    import os

    settings = args.settings.split(",")
    names = args.corpora.split(",") if args.corpora else list(have)
    out: dict = {"load_average_start": os.getloadavg()[0], "corpora": {}}
    for name in names:
        if name not in have:
            print(f"skipped {name}: not found", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory(prefix="mdseek-cost-") as tmp:
            rows = {s: measure(have[name], s, Path(tmp)) for s in settings}
        out["corpora"][name] = rows
        print(f"{name}: {json.dumps(rows)}", file=sys.stderr, flush=True)
    out["load_average_end"] = os.getloadavg()[0]
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print("| corpus | setting | chunks | passages | vectors per chunk | first index s (x first)"
          " | index MB (x first) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name, rows in out["corpora"].items():
        ref = rows[settings[0]]
        for s, r in rows.items():
            per = (r["chunks"] + r["passages"]) / max(1, r["chunks"])
            print(f"| {name} | {s} | {r['chunks']} | {r['passages']} | {per:.2f} |"
                  f" {r['seconds']} ({r['seconds'] / ref['seconds']:.2f}x) |"
                  f" {r['mb']} ({r['mb'] / ref['mb']:.2f}x) |")  # fmt: skip
    print(f"\nload average {out['load_average_start']:.1f} at the start,"
          f" {out['load_average_end']:.1f} at the end")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
