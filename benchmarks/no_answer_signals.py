"""``python -m benchmarks.no_answer_signals [--work DIR]``: how well each candidate
signal of the "no section matches well" note tells the questions a folder
cannot answer from those it can (issue 42), on the questions of
:mod:`benchmarks.no_answer` (the short forms).

For each signal, corpus and half: the area under the ROC curve (the chance
that an unanswerable question's value is lower than an answerable one's; 0.5
is chance, 1 a perfect split). Signals, from one search each (hybrid, the
product path) and the folder's vectors:

* ``cosine``: the best raw cosine (``retrieve.evidence``); minus the folder's
  typical cosine it orders the questions of one folder the same way;
* ``keyword``: the best keyword candidate's BM25 over its bound;
* ``present``: 1 - the IDF-weighted share of the query's words no chunk holds;
* ``margin``: the best cosine minus the second;
* ``over mean``, ``over p90``, ``z``: the best chunk cosine minus the mean (the
  90th percentile) of the query's cosines to every chunk, or over their spread;
* ``hubness``: the best of (cosine - the chunk's own mean cosine to the others);
* ``agree``: chunks shared by the dense and keyword top tens.

Prints a markdown table; writes nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from .no_answer import DIRS, _engine, question_sets

SIGNALS = (
    "cosine",
    "keyword",
    "present",
    "margin",
    "over mean",
    "over p90",
    "z",
    "hubness",
    "agree",
)


def signals(eng, text: str, own: np.ndarray, hub: np.ndarray) -> dict[str, float]:
    """One question's signals (see the module)."""
    from mdseek.index.search.dense import cosines
    from mdseek.index.settings import Mode

    ev = eng.search(text, limit=10, mode="hybrid").evidence or {}
    q = eng.parse_query(text)
    q = q.with_vector(eng.query_vector(q))
    lists, _, q = eng.candidates(q, Mode.HYBRID)
    sims = cosines(own, q.vector)
    idf = q.terms.idf if q.terms is not None else {}
    df = q.terms.df if q.terms is not None else {}
    absent = sum(v for w, v in idf.items() if df.get(w, 0) == 0) / (sum(idf.values()) or 1.0)
    dense = {c for c, _ in lists.get("dense", [])[:10]}
    lexical = {c for c, _ in lists.get("lexical", [])[:10]}
    cos = ev.get("cosine") or 0.0
    return {
        "cosine": cos,
        "keyword": ev.get("keyword") or 0.0,
        "present": 1.0 - absent,
        "margin": cos - (ev.get("cosine_2") or 0.0),
        "over mean": float(sims.max() - sims.mean()),
        "over p90": float(sims.max() - np.percentile(sims, 90)),
        "z": float((sims.max() - sims.mean()) / (sims.std() or 1.0)),
        "hubness": float((sims - hub).max()),
        "agree": float(len(dense & lexical)),
    }


def auc(unanswerable: list[float], answerable: list[float]) -> float:
    """P(an unanswerable question's value < an answerable one's), ties half."""
    u, a = np.asarray(unanswerable)[:, None], np.asarray(answerable)[None, :]
    return float(((u < a) + 0.5 * (u == a)).mean())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.no_answer_signals", description=__doc__)
    ap.add_argument("--work", type=Path, default=None, help="index folder, kept (default: temp)")
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    from .data import data_dir

    work = args.work or Path(tempfile.mkdtemp(prefix="mdseek-no-answer-"))
    lines = [
        "| corpus | half | answerable | unanswerable | " + " | ".join(SIGNALS) + " |",
        "|---|---|---|---|" + "---|" * len(SIGNALS),
    ]
    for name, c in question_sets(data_dir()).items():
        if c.get("check"):
            continue
        eng = _engine(DIRS[name], c["src"], work, log)
        eng.searcher._dense.sync()
        m = eng.searcher._dense.matrix
        own = m.mat[m.alive & (m.keys >= 0)]
        n = len(own)
        hub = (own @ own.sum(axis=0) - 1.0) / max(1, n - 1)  # each chunk's mean cosine to the rest
        for split in ("dev", "test"):
            got = {
                s: [signals(eng, t, own, hub) for _, t in c["sets"][s][split]]
                for s in ("answerable", "unanswerable")
            }
            cells = [
                f"{auc([x[k] for x in got['unanswerable']], [x[k] for x in got['answerable']]):.2f}"
                for k in SIGNALS
            ]
            lines.append(
                f"| {name} | {split} | {len(got['answerable'])} | {len(got['unanswerable'])} | "
                + " | ".join(cells)
                + " |"
            )
        eng.close()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
