"""Near-duplicate sections: the threshold chosen on labelled pairs, and the cost on save.

    .venv/bin/python -m benchmarks.near_duplicates [--work DIR] [--corpus NAME] [--candidates N]
        [--cost [--cost-file REL]]

The product docs (``../shared/data/rhdh/docs``, read there, copied only into
the run's work folder) are indexed with the default model. Every pair of
sections of at least :data:`mdseek.index.search.neardup.MIN_WORDS` words each,
lengths within the loosest of :data:`RATIOS`, whose vectors' cosine is at
least :data:`FLOOR` is a candidate, with its gap: how far its cosine falls
below the nearest section's (of :data:`MIN_WORDS` words) of either of the
two, and whether both are of one file. The labelled pairs
(``benchmarks/neardup/labels.tsv``: the two sections as ``path:line``, 1-based
heading lines, the label and why; 1 = near-duplicate: most of each section's
text is in the other, what differs is names, values or a minor part, and
both say the same thing) are split in halves by the pair id
(:func:`data.split_of`). The (threshold, length ratio, gap, threshold of two
sections of one file) of :data:`GRID` x :data:`RATIOS` x :data:`GAPS` x
:data:`SAME_FILES` with the highest recall on the dev half among those of
precision at least :data:`TARGET` there is chosen (ties: the higher dev
precision, then the strictest setting); only a setting that flags no
unlabelled candidate of the corpus is tried, so that its precision is
measured on every pair it flags. Precision (with a 95% Wilson interval) and
recall are reported on the held-out half, for it and for what the engine
ships. Recall is over the labelled positives (pairs under the floor are not
labelled: a positive there is missed by every threshold).

``--corpus emanual`` measures the shipped setting, unchanged, on another
corpus labelled the same way (``benchmarks/neardup/emanual.tsv``, the TV
e-manual): nothing was chosen on it, so every labelled pair is held out.

``--candidates N`` prints N unlabelled candidates, stratified by cosine, for
labelling (``--all`` prints every candidate). ``--cost`` times, side by side,
a one-line edit's save -> searchable in the engine (``Engine.index_file``:
parse, write, embed the changed chunk) and the near-duplicate check of the
saved file that follows it (:func:`near_duplicates`), and prints the ratio
(the vector matrix's sync between the two, which the first reader after a
save pays, is timed on its own);
``--cost-file`` edits that file instead of the largest. The check keeps, from one
save to the next, which chunk rows were near which section; ``check_cold`` is
the same check with nothing kept (the first check of a note, or after another
note's), timed in the same loop.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mdseek.index.engine.engine import Engine
from mdseek.index.engine.near import forget_near_rows, near_duplicates
from mdseek.index.search.neardup import (
    GAP,
    LENGTH_RATIO,
    MIN_WORDS,
    SAME_FILE,
    THRESHOLD,
    body_words,
    comparable,
    unit_vector,
)
from mdseek.index.store import survey

from .data import copy_docs, data_home, split_of, where_data_should_be

LABELS = Path(__file__).resolve().parent / "neardup" / "labels.tsv"
FLOOR = 0.80  # candidates: pairs at and above this cosine
GRID = [round(0.80 + 0.005 * i, 3) for i in range(40)]
RATIOS = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9]  # length ratios tried with each threshold
GAPS = [0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 1.0]  # gaps tried with each (1.0: no gap test)
# two sections of one file: flagged as any pair (0.0) or never (None); the wide
# grid adds thresholds of their own, reported beside (the dev half is too small
# for it: the chooser takes a setting at the edge of the dev precision)
SAME_FILES: list[float | None] = [0.0, None]
SAME_FILES_WIDE: list[float | None] = [0.0, 0.95, 0.96, 0.97, 0.98, 0.99, None]
TARGET = 0.9  # precision wanted on the dev half
Cand = tuple[float, float, float, bool]  # a pair's cosine, length ratio, gap, one file
Setting = tuple[float, float, float, float | None]  # threshold, ratio, gap, same file
NOT_CAND: Cand = (0.0, 0.0, 1.0, False)  # a labelled pair under the floor: never flagged
# the setting shipped before the rule of one file (2026-12-07, third session)
BEFORE: Setting = (0.94, 0.9, 0.02, 0.0)


def workspace(work: Path, corpus: str = "rhdh") -> Path:
    home = data_home(corpus)
    if home is None or not (home / corpus / "docs").is_dir():
        sys.exit(f"the docs are missing: looked in {where_data_should_be()}/{corpus}/docs")
    root = work / f"{corpus}-docs"
    if not root.is_dir():
        copy_docs(home / corpus / "docs", root)
    return root


def open_indexed(root: Path, index: Path, passages: bool = True) -> Engine:
    """The docs indexed; without ``passages``, only the chunks embedded (the
    sections' vectors are their chunks'; the passages matter for the cost)."""
    eng = Engine(root, index_path=index)
    eng.models.embedder.load()
    if passages:
        eng.index()
        return eng
    eng.index(embed=False)
    while survey.waiting(index):  # chunks first, shortest first
        eng.embed_next(256)
    return eng


def sections(eng: Engine) -> list[tuple[str, np.ndarray, int, int]]:
    """Every section with a vector as (``path:line`` of its heading, 1-based;
    its unit vector; its words (:func:`body_words`); its end line, 0-based exclusive): a chunk
    that merged sections is one."""
    eng.dense_side.sync()
    out = []
    for rel in sorted(eng.store.documents.all()):
        rows = {s.ordinal: s for s in eng.store.chunks.document_sections(rel)}
        groups: dict[tuple[int, int], list] = {}
        for c in eng.store.chunks.document_chunks(rel):
            groups.setdefault((c.section_first, c.section_last), []).append(c)
        for (first, last), cs in sorted(groups.items()):
            vecs = [eng.dense_side.matrix.vector(c.id) for c in cs]
            if any(v is None for v in vecs) or first not in rows:
                continue
            pid = f"{rel}:{rows[first].start_line + 1}"
            vec = unit_vector(np.stack(vecs))
            words = body_words([c.text for c in cs], cs[0].heading)
            out.append((pid, vec, words, rows[last].end_line if last in rows else 0))
    return out


def candidates(secs: list[tuple[str, np.ndarray, int, int]]) -> dict[tuple[str, str], Cand]:
    """Pairs (ordered by id) at and above :data:`FLOOR` whose lengths are within
    the loosest ratio of :data:`RATIOS`, with their cosine, length ratio and gap
    (the larger of the two sections' nearest cosines, sections of at least
    :data:`MIN_WORDS` words, minus the pair's: 0 when they are each other's
    nearest)."""
    mat = np.stack([v for _, v, _, _ in secs])
    sims = mat @ mat.T
    np.fill_diagonal(sims, -1.0)
    short = np.array([w < MIN_WORDS for _, _, w, _ in secs])
    best = np.where(short[None, :], -1.0, sims).max(axis=1)
    out = {}
    for i, j in zip(*np.nonzero(np.triu(sims, 1) >= FLOOR), strict=True):
        (a, _, wa, _), (b, _, wb, _) = secs[int(i)], secs[int(j)]
        if comparable(wa, wb, min(RATIOS)):
            s = float(sims[i, j])
            gap = max(float(best[i]), float(best[j])) - s
            one = a.rsplit(":", 1)[0] == b.rsplit(":", 1)[0]
            out[(a, b) if a < b else (b, a)] = (s, min(wa, wb) / max(wa, wb), gap, one)
    return out


def read_labels(path: Path = LABELS) -> dict[tuple[str, str], int]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            a, b, label = line.split("\t")[:3]
            out[(a, b)] = int(label)
    return out


def pair_id(p: tuple[str, str]) -> str:
    return f"{p[0]}|{p[1]}"


def flags(c: Cand, setting: Setting) -> bool:
    """Whether ``setting`` flags the candidate ``c``."""
    s, ratio, gap, one = c
    t, r, g, same = setting
    if one and (same is None or s < same):
        return False
    return s >= t and ratio >= r and gap <= g


def scores(pairs: list[tuple[Cand, int]], setting: Setting) -> tuple[float, float, int]:
    """(precision, recall, flagged) of ``setting`` over (candidate, label) pairs."""
    flagged = [lab for c, lab in pairs if flags(c, setting)]
    pos = sum(lab for _, lab in pairs)
    tp = sum(flagged)
    prec = tp / len(flagged) if flagged else 1.0
    return prec, (tp / pos if pos else 0.0), len(flagged)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a proportion of ``k`` in ``n``."""
    if not n:
        return (0.0, 1.0)
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return (round(mid - half, 3), round(mid + half, 3))


def _strict(same: float | None) -> float:
    return 2.0 if same is None else same


def choose(
    dev: list[tuple[Cand, int]],
    unlabelled: Sequence[Cand] = (),
    same_files: Sequence[float | None] = SAME_FILES,
) -> Setting:
    """The setting of the highest recall on ``dev`` among those of precision at
    least :data:`TARGET` that flag none of ``unlabelled`` (ties: the higher
    precision, then the strictest: the higher threshold, ratio and threshold of
    one file, the tighter gap)."""
    ok = []
    for t in GRID:
        for r in RATIOS:
            for g in GAPS:
                for same in same_files:
                    st: Setting = (t, r, g, same)
                    prec, rec, n = scores(dev, st)
                    if not n or prec < TARGET or any(flags(c, st) for c in unlabelled):
                        continue
                    ok.append(((-rec, -prec, -t, -r, g, -_strict(same)), st))
    return min(ok)[1] if ok else (GRID[-1], RATIOS[-1], GAPS[0], None)


def row(ps: list[tuple[Cand, int]], setting: Setting) -> dict:
    prec, rec, n = scores(ps, setting)
    tp = round(prec * n)
    return {
        "pairs": len(ps),
        "positives": sum(lab for _, lab in ps),
        "flagged": n,
        "right": tp,
        "precision": round(prec, 3),
        "precision_95": wilson(tp, n),
        "recall": round(rec, 3),
    }


def shipped() -> Setting:
    return (THRESHOLD, LENGTH_RATIO, GAP, SAME_FILE)


def setting_dict(st: Setting) -> dict:
    return {"threshold": st[0], "length_ratio": st[1], "gap": st[2], "same_file": st[3]}


def measure_shipped(cands: dict[tuple[str, str], Cand], labels: dict[tuple[str, str], int]) -> dict:
    """Precision and recall of the shipped setting (and the one before) over
    every labelled pair of a corpus nothing was chosen on (recall over its
    labelled positives); ``unlabelled_flagged``: candidates the shipped setting
    flags that no label covers (their precision unknown)."""
    ps = [(cands.get(p, NOT_CAND), lab) for p, lab in sorted(labels.items())]
    return {
        "labelled": len(labels),
        "candidates": len(cands),
        "shipped": setting_dict(shipped()),
        "all_shipped": row(ps, shipped()),
        "all_before": row(ps, BEFORE),
        "unlabelled_flagged": sorted(
            pair_id(p) for p, c in cands.items() if p not in labels and flags(c, shipped())
        ),
    }


def measure(cands: dict[tuple[str, str], Cand], labels: dict[tuple[str, str], int]) -> dict:
    halves: dict[str, list[tuple[Cand, int]]] = {"dev": [], "test": []}
    missing = []
    for p, lab in sorted(labels.items()):
        c = cands.get(p)
        if c is None:
            missing.append(pair_id(p))
            c = NOT_CAND  # under the floor now: never flagged
        halves[split_of(pair_id(p))].append((c, lab))
    unlabelled = [c for p, c in cands.items() if p not in labels]
    chosen = choose(halves["dev"], unlabelled)
    out: dict = {"labelled": len(labels), "candidates": len(cands), "not_candidates": missing}
    wide = choose(halves["dev"], unlabelled, SAME_FILES_WIDE)
    out["chosen"] = setting_dict(chosen)
    out["chosen_wide"] = setting_dict(wide)
    out["shipped"] = setting_dict(shipped())
    out["before"] = setting_dict(BEFORE)
    settings = {
        "chosen": chosen,
        "chosen_wide": wide,
        "shipped": shipped(),
        "shipped_without_gap": (*shipped()[:2], 1.0, shipped()[3]),
        "before": BEFORE,
    }
    for name, ps in halves.items():
        for which, st in settings.items():
            out[f"{name}_{which}"] = row(ps, st)
    out["unlabelled_flagged"] = sorted(
        pair_id(p) for p, c in cands.items() if p not in labels and flags(c, shipped())
    )
    return out


def agree(eng: Engine, cands: dict[tuple[str, str], Cand]) -> dict:
    """The engine's check (:func:`near_duplicates`, run on every file) against the
    benchmark's rule at the shipped setting: the pairs each flags."""
    bench = {pair_id(p) for p, c in cands.items() if flags(c, shipped())}
    got = set()
    for rel in sorted(eng.store.documents.all()):
        for d in near_duplicates(eng, rel):
            a = f"{d.section.path}:{d.section.start_line + 1}"
            b = f"{d.other.path}:{d.other.start_line + 1}"
            got.add(pair_id((a, b) if a < b else (b, a)))
    return {
        "benchmark": len(bench),
        "engine": len(got),
        "benchmark_only": sorted(bench - got),
        "engine_only": sorted(got - bench),
    }


def show(root: Path, pid: str, end: int, chars: int) -> str:
    """The section's text on one line (its heading included), cut at ``chars``."""
    rel, line = pid.rsplit(":", 1)
    lines = (root / rel).read_text(encoding="utf-8").split("\n")
    return " ".join(" ".join(lines[int(line) - 1 : end]).split())[:chars]


def print_candidates(root: Path, secs, cands, labels, n: int, chars: int) -> None:
    ends = {pid: end for pid, _, _, end in secs}
    todo = sorted((c[0], p) for p, c in cands.items() if p not in labels)
    if n and len(todo) > n:  # stratified by cosine: evenly spaced in rank
        todo = [todo[round(k * (len(todo) - 1) / (n - 1))] for k in range(n)]
    for s, p in todo:
        print(f"== {p[0]}\t{p[1]}\t{s:.3f}")
        print("  A:", show(root, p[0], ends[p[0]], chars))
        print("  B:", show(root, p[1], ends[p[1]], chars))


def cost(eng: Engine, root: Path, edits: int, rel: str | None = None) -> dict:
    """Side by side, ``edits`` times: a one-line edit's save -> searchable, then
    the saved file's near-duplicate check, then the check without the gap test
    (``rel``: the file edited, else the largest)."""
    if rel is None:
        rel = max(eng.store.documents.all(), key=lambda r: (root / r).stat().st_size)
    path = root / rel
    original = path.read_bytes()
    lines = original.decode("utf-8").split("\n")
    prose = [i for i, ln in enumerate(lines) if len(ln) > 40 and ln[:1].isalpha()]
    save, sync, check, plain, cold, found = [], [], [], [], [], 0
    for k in range(edits):
        i = prose[(k * 7919) % len(prose)]
        lines[i] = lines[i].rstrip() + f" Edit number {k} by the benchmark."
        path.write_text("\n".join(lines), encoding="utf-8")
        t0 = time.perf_counter()
        eng.index_file(path, passages=False)
        t1 = time.perf_counter()
        # the vector matrix brought up to date: the first reader after a save
        # pays it (a search or the check), timed on its own
        eng.dense_side.sync()
        ts = time.perf_counter()
        found = len(near_duplicates(eng, rel))
        t2 = time.perf_counter()
        near_duplicates(eng, rel, gap=None)  # the rule before the gap test, for comparison
        t3 = time.perf_counter()
        forget_near_rows(eng)  # the check with nothing kept from the one before
        t4 = time.perf_counter()
        near_duplicates(eng, rel)  # (what it keeps serves the next edit's check)
        cold.append(time.perf_counter() - t4)
        save.append(t1 - t0)
        sync.append(ts - t1)
        check.append(t2 - ts)
        plain.append(t3 - t2)
    path.write_bytes(original)
    eng.index_file(path)
    chunks = eng.dense_side.matrix.rows
    return {
        "file": rel,
        "edits": edits,
        "matrix_rows": chunks,
        "near_duplicates_in_file": found,
        "save_median_ms": round(1000 * statistics.median(save), 1),
        "sync_median_ms": round(1000 * statistics.median(sync), 1),
        "sync_total_ms": round(1000 * sum(sync), 1),
        "check_median_ms": round(1000 * statistics.median(check), 1),
        "check_without_gap_median_ms": round(1000 * statistics.median(plain), 1),
        "check_cold_median_ms": round(1000 * statistics.median(cold), 1),
        "ratio_cold_of_medians": round(statistics.median(cold) / statistics.median(save), 3),
        "ratio_of_medians": round(statistics.median(check) / statistics.median(save), 3),
        "ratio_of_totals": round(sum(check) / sum(save), 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks.near_duplicates")
    ap.add_argument("--work", type=Path, help="keep the docs' copy and index here")
    ap.add_argument(
        "--corpus",
        default="rhdh",
        help="the data folder's corpus: rhdh (the setting chosen on it) or another "
        "labelled in benchmarks/neardup/CORPUS.tsv (only measured: emanual)",
    )
    ap.add_argument("--labels", type=Path, help="another labels file (default: the corpus's)")
    ap.add_argument("--candidates", type=int, default=-1, metavar="N")
    ap.add_argument("--all", action="store_true", help="with --candidates: every one")
    ap.add_argument("--chars", type=int, default=360)
    ap.add_argument("--agree", action="store_true", help="the engine's pairs against the rule's")
    ap.add_argument("--cost", action="store_true")
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument("--cost-file", help="with --cost: the file edited (default: the largest)")
    args = ap.parse_args(argv)
    tmp = None
    work = args.work
    if work is None:
        tmp = tempfile.mkdtemp(prefix="neardup-")
        work = Path(tmp)
    work.mkdir(parents=True, exist_ok=True)
    try:
        root = workspace(work, args.corpus)
        index = work / ("index.sqlite" if args.corpus == "rhdh" else f"{args.corpus}.sqlite")
        eng = open_indexed(root, index, passages=args.cost)
        try:
            secs = sections(eng)
            cands = candidates(secs)
            path = LABELS if args.corpus == "rhdh" else LABELS.with_name(f"{args.corpus}.tsv")
            path = args.labels or path
            labels = read_labels(path) if path.exists() else {}
            if args.candidates >= 0:
                n = 0 if args.all else args.candidates
                print_candidates(root, secs, cands, labels, n, args.chars)
                return 0
            out = (
                measure(cands, labels) if args.corpus == "rhdh" else measure_shipped(cands, labels)
            )
            if args.agree:
                out["agree"] = agree(eng, cands)
            if args.cost:
                out["cost"] = cost(eng, root, args.edits, args.cost_file)
            print(json.dumps(out, indent=2))
        finally:
            eng.close()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
