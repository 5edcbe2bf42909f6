"""Query latency at scale alone: ``speed.build_tiers`` + ``speed.latency`` on one
indexed folder, for a quick before/after of a ranking change.

    .venv/bin/python -m benchmarks.latency_at_scale --root DIR --index FILE
        [--sizes 100000] [--n 150] [--work DIR] [--passage-words N]

The real folder keeps its real vectors; the generated sections (made from its
paragraphs) get synthetic unit vectors (see :mod:`benchmarks.speed`). With
passages (the default chunker) the generated sections' passages get vectors too.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from . import speed
from .data import REPO, load_fixture_queries


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
    tiers = speed.build_tiers(args.root, args.index, work, sizes, log)
    queries = list(load_fixture_queries(("paraphrase", "keyword", "tail"))[1].queries.values())
    out = speed.latency(tiers, queries, args.n, [5] * len(tiers), work, log)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
