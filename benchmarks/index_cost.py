"""What passage vectors cost an index: texts embedded, seconds, file size.

    .venv/bin/python -m benchmarks.index_cost [--corpora fixtures,rhdh,emanual] [--json]

Each corpus is indexed twice from nothing, side by side in one run, with the
default model: without passages (``passage_words=0``, mdseek before) and with
them (the default, :data:`mdseek.index.text.passages.PASSAGE_WORDS`). The issue's bar:
within 2x on every measure.
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
from mdseek.index.text.passages import PASSAGE_WORDS

from .data import FIXTURES, data_dir


def roots() -> dict[str, Path]:
    out = {"fixtures": FIXTURES}
    d = data_dir()
    if d is not None:
        for name in ("rhdh", "emanual"):
            if (d / name / "docs").is_dir():
                out[name] = d / name / "docs"
    return out


def measure(root: Path, passage_words: int, work: Path) -> dict:
    ws = work / f"ws-{passage_words}"
    shutil.copytree(root, ws, ignore=shutil.ignore_patterns(".mdseek"))
    index = work / f"index-{passage_words}.sqlite"
    t0 = time.perf_counter()
    eng = Engine(ws, index_path=index, passage_words=passage_words)
    rep = eng.index()
    seconds = time.perf_counter() - t0
    counts = eng.store.counts()
    eng.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    eng.close()
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
    args = ap.parse_args(argv)
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


if __name__ == "__main__":
    raise SystemExit(main())
