"""A documented sample of SciFact for a loaded machine (issue "Retrieval v4").

    python -m benchmarks.make_scifact --out DIR [--distractors N] [--seed S]

SciFact in full (BEIR layout, in ``$MDSEEK_BENCH_DATA``'s ``scifact/``: 5,183
abstracts, about 10,400 chunks, about 30,000 vectors with retrieval v4's
passages) takes hours to embed on a machine shared by several jobs. The sample
keeps **every abstract judged relevant to a test claim** (all 300 claims of
``qrels/test.tsv`` stay, with their judgements) and adds ``N`` other abstracts
drawn with a fixed seed from the rest (the distractors), so a claim's evidence
competes with a random slice of the corpus instead of all of it: scores run
higher than on the full corpus, and a difference between two variants is
measured on the same sample.

Written to ``DIR/scifact/`` (never into the repository): ``corpus.jsonl``,
``queries.jsonl``, ``qrels/test.tsv`` (the same files as the source, the corpus
cut) and ``README.md`` (this command and the counts). Point the judge at it
with ``MDSEEK_BENCH_DATA=DIR:...`` (the first folder holding ``scifact`` wins).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from pathlib import Path

from . import data as D

DISTRACTORS = 1000
SEED = 39


def sample(corpus: list[dict], judged: set[str], distractors: int, seed: int) -> list[dict]:
    """Every judged abstract and ``distractors`` others (seeded), in corpus order."""
    others = sorted(d["_id"] for d in corpus if d["_id"] not in judged)
    drawn = set(random.Random(seed).sample(others, min(distractors, len(others))))
    return [d for d in corpus if d["_id"] in judged or d["_id"] in drawn]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.make_scifact",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    ap.add_argument("--out", type=Path, required=True, help="writes OUT/scifact/")
    ap.add_argument("--distractors", type=int, default=DISTRACTORS)
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args(argv)
    home = D.data_home("scifact")
    if home is None:
        print(f"no data folder ({D.where_data_should_be()})", file=sys.stderr)
        return 2
    src = D.scifact_dir(home)
    corpus, qrels = D.load_scifact(home)
    judged = {d for docs in qrels.docs.values() for d in docs}
    kept = sample(corpus, judged, args.distractors, args.seed)
    dest = args.out / "scifact"
    if dest.resolve() == src.resolve():
        print("--out must not be the source folder", file=sys.stderr)
        return 2
    (dest / "qrels").mkdir(parents=True, exist_ok=True)
    with (dest / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for d in kept:
            fh.write(json.dumps(d) + "\n")
    shutil.copy2(src / "queries.jsonl", dest / "queries.jsonl")
    shutil.copy2(src / "qrels" / "test.tsv", dest / "qrels" / "test.tsv")
    facts = {"source": str(src), "abstracts": len(corpus), "claims": len(qrels.queries),
             "judged": len(judged), "distractors": len(kept) - len(judged),
             "kept": len(kept), "seed": args.seed}  # fmt: skip
    (dest / "README.md").write_text(
        "# SciFact, sampled (python -m benchmarks.make_scifact)\n\n"
        f"`python -m benchmarks.make_scifact --out {args.out} --distractors {args.distractors}"
        f" --seed {args.seed}`: every abstract judged relevant to a test claim, and"
        " distractors drawn with the seed from the rest.\n\n" + json.dumps(facts) + "\n",
        encoding="utf-8",
    )
    print(json.dumps(facts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
