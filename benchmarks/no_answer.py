"""``python -m benchmarks.no_answer [--work DIR]``: the "no section matches well"
note (issue 42), calibrated on questions each corpus cannot answer against the
human questions it can.

Two corpora: the bundled fixture handbook and the E-Manual (``../shared/data``
or $MDSEEK_BENCH_DATA). Unanswerable: the hand-written questions of
``benchmarks/no_answer/questions.json`` (each checked against its corpus by
grep and reading; odd numbers dev, even test). Answerable: the questions the
benchmarks already use, people's own words: the E-Manual's expert questions
(673, split dev/test by judged section) and the rare-word questions written on
it (benchmarks/rare), the fixture paraphrases (tests/fixture_queries.json, its
split). The long forms (a scenario paragraph, then the question) are
reported beside them, not used to choose. A third folder is never used to
choose, only to count false alarms: the RHDH product docs, with their 501
questions and the 19 rare-word ones written on them (benchmarks/rare).

Each question is asked through ``Engine.search`` (hybrid, the product path);
its :func:`retrieve.evidence` (best and second raw cosine before the floor, the
folder's typical cosine between two of its sections, the best keyword match,
whether a keyword candidate holds every word) is kept. Three rule families,
each a grid, each with the every-word exemption:

* ``cosine``: best cosine < C (the rule before this one: raw, one scale for
  every folder);
* ``over typical``: best cosine - the folder's typical cosine < M;
* ``over typical+keyword``: that, and best keyword match < K
  (:func:`retrieve.weak_match`, as shipped).

A rule is *allowed* on a half when, on every corpus, it shows the note on at
most ``--false-alarms`` (5%) of the answerable questions of that half; each
family's allowed rule that shows it on the most unanswerable questions (mean
over the corpora) is fitted on the dev halves and measured on the held-out
test halves, and the other way round. Shipped: the shipped family's rule
with each threshold the lower of its two fits (it shows the note on a subset
of what either fit shows it on, so within 5% false alarms on both halves by
construction; its figures are then not held out: the folds' rows are).
Writes ``<out>/no_answer.json`` and ``no_answer.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .data import (
    REPO,
    data_home,
    load_emanual,
    load_fixture_queries,
    load_rhdh,
    long_form,
    split_qids,
)

QUESTIONS = REPO / "benchmarks" / "no_answer" / "questions.json"
RARE = REPO / "benchmarks" / "rare" / "questions.json"
COSINES = tuple(round(0.15 + 0.01 * i, 2) for i in range(36))  # 0.15 .. 0.50
MARGINS = tuple(round(0.005 * i, 3) for i in range(1, 61))  # 0.005 .. 0.30
KEYWORDS = tuple(round(0.15 + 0.025 * i, 3) for i in range(15)) + (0.6, 0.8, 1.0)
SHIPPED = "over typical+keyword"
# each corpus's folder in the work folder: the quality benchmark's, so that the
# indexes of a kept run (``python -m benchmarks --work DIR --keep-work``) are reused
DIRS = {"handbook": "fixtures-quality", "emanual": "emanual", "rhdh": "rhdh"}


def _engine(name: str, src: Path, work: Path, log):
    from mdseek.index.engine.engine import Engine

    root = work / name / "docs"
    if not root.exists():
        shutil.copytree(src, root, ignore=shutil.ignore_patterns(".mdseek"))
    eng = Engine(root, index_path=work / name / "index.sqlite")
    rep = eng.index()
    log(f"{name}: {rep.files} files, {rep.chunks} chunks ({rep.embedded} embedded)")
    return eng


def question_sets(data: Path | None) -> dict[str, dict]:
    """corpus -> {"src": docs folder, "sets": {set name -> {split -> [(id, text)]}}}."""
    spec = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    out: dict[str, dict] = {}
    fx_src, fx = load_fixture_queries()
    fx_sets: dict = {"answerable": {}, "answerable, long form": {}}
    for split in ("dev", "test"):
        ids = split_qids(fx.queries, split, fx.groups)
        fx_sets["answerable"][split] = [(q, fx.queries[q]) for q in ids]
        fx_sets["answerable, long form"][split] = [(q, long_form(q, fx.queries[q])) for q in ids]
    out["handbook"] = {"src": fx_src, "sets": fx_sets}
    home = data_home("emanual") if data is not None else None
    if home is not None:
        em_src, em = load_emanual(home)
        rare = [
            q for q in json.loads(RARE.read_text(encoding="utf-8"))["questions"]
            if q["corpus"] == "emanual"
        ]  # fmt: skip
        sets: dict = {"answerable": {}, "answerable, long form": {}}
        for split in ("dev", "test"):
            ids = split_qids(em.queries, split, em.groups)
            extra = [
                (q["id"], q["question"]) for i, q in enumerate(rare) if i % 2 == (split == "test")
            ]
            sets["answerable"][split] = [(q, em.queries[q]) for q in ids] + extra
            sets["answerable, long form"][split] = [(q, long_form(q, em.queries[q])) for q in ids]
        out["emanual"] = {"src": em_src, "sets": sets}
    home = data_home("rhdh") if data is not None else None
    if home is not None and (home / "rhdh").is_dir():
        # a third folder, never used to choose: false alarms only (no question
        # was written that it cannot answer); its questions and its rare-word ones
        rh_src, rh = load_rhdh(home)
        rare = [
            (q["id"], q["question"])
            for q in json.loads(RARE.read_text(encoding="utf-8"))["questions"]
            if q["corpus"] == "rhdh"
        ]
        out["rhdh"] = {
            "src": rh_src,
            "check": True,
            "sets": {
                "answerable": {
                    split: [(q, rh.queries[q]) for q in split_qids(rh.queries, split, rh.groups)]
                    + [x for i, x in enumerate(rare) if i % 2 == (split == "test")]
                    for split in ("dev", "test")
                }
            },
        }
    for name, c in out.items():
        if c.get("check"):
            continue
        qs = [q for q in spec["questions"] if q["corpus"] == name]
        c["sets"]["unanswerable"] = {
            split: [(q["id"], q["question"]) for i, q in enumerate(qs) if i % 2 == (split == "test")]
            for split in ("dev", "test")
        }  # fmt: skip
    return out


def measure(corpora: dict[str, dict], work: Path, log) -> dict:
    """corpus -> set -> split -> [{id, text, evidence}] through ``Engine.search``."""
    out: dict = {}
    for name, c in corpora.items():
        eng = _engine(DIRS[name], c["src"], work, log)
        out[name] = {}
        for set_name, halves in c["sets"].items():
            out[name][set_name] = {}
            for split, qs in halves.items():
                rows = []
                for qid, text in qs:
                    resp = eng.search(text, limit=10, mode="hybrid")
                    rows.append({"id": qid, "text": text, "evidence": resp.evidence or {}})
                out[name][set_name][split] = rows
            log(f"{name} {set_name}: {sum(len(v) for v in halves.values())} questions asked")
        eng.close()
    return out


def fires(rule: tuple, ev: dict) -> bool:
    """Whether ``rule`` shows the note for a query's evidence; the shipped
    family is :func:`retrieve.weak_match` itself, as the engine asks it."""
    from mdseek.index.search import retrieve

    kind, a, b = rule
    if kind == "cosine":  # the raw cosine: the folder's typical cosine taken as 0
        return retrieve.weak_match({**ev, "typical": 0.0}, a, 2.0)
    if kind == "over typical":
        return retrieve.weak_match(ev, a, 2.0)
    if kind == SHIPPED:
        return retrieve.weak_match(ev, a, b)
    raise ValueError(kind)


def rates(rule: tuple, rows: dict, split: str) -> dict:
    """corpus -> set -> (shown, asked)."""
    out: dict = {}
    for name, sets in rows.items():
        out[name] = {}
        for set_name, halves in sets.items():
            qs = halves[split]
            out[name][set_name] = (sum(fires(rule, q["evidence"]) for q in qs), len(qs))
    return out


def rules() -> dict[str, list[tuple]]:
    return {
        "cosine": [("cosine", c, None) for c in COSINES],
        "over typical": [("over typical", m, None) for m in MARGINS],
        SHIPPED: [(SHIPPED, m, k) for m in MARGINS for k in KEYWORDS],
    }


def fit(rows: dict, split: str, false_alarms: float, family: list[tuple]) -> tuple | None:
    """The rule of ``family`` that shows the note on the most unanswerable
    questions of ``split`` (mean over the corpora) while it shows it on at most
    ``false_alarms`` of every corpus's answerable ones there (None: no rule does);
    on a tie the one that shows it least often (the first of the grid). A
    corpus with no unanswerable questions (a check: RHDH) has no say."""
    best: tuple | None = None
    best_hit = -1.0
    chosen_by = {n: v for n, v in rows.items() if "unanswerable" in v}  # not the checks
    for rule in family:
        r = rates(rule, chosen_by, split)
        if any(c["answerable"][0] > false_alarms * c["answerable"][1] for c in r.values()):
            continue
        hit = sum(c["unanswerable"][0] / max(1, c["unanswerable"][1]) for c in r.values()) / len(r)
        if hit > best_hit + 1e-12:
            best, best_hit = rule, hit
    return best


def choose(rows: dict, false_alarms: float) -> dict:
    """Each family's rule fitted on the dev halves (held out: test) and, the other
    way round, on the test halves (held out: dev). Shipped: :data:`SHIPPED`'s
    rule with each threshold the lower of its two fits, which keeps the false
    alarms within ``false_alarms`` on both halves by construction (each lower
    threshold shows the note on fewer questions); the other families are
    reported beside it."""
    folds: dict = {}
    for kind, family in rules().items():
        folds[kind] = {split: fit(rows, split, false_alarms, family) for split in ("dev", "test")}
    got = [r for r in folds[SHIPPED].values() if r is not None]
    shipped = (SHIPPED, min(r[1] for r in got), min(r[2] for r in got)) if got else None
    return {
        "folds": {k: {s: (list(r) if r else None) for s, r in v.items()} for k, v in folds.items()},
        "shipped": list(shipped) if shipped else None,
    }


def describe(rule) -> str:
    kind, a, b = rule
    if kind == "cosine":
        return f"best cosine < {a:g}"
    if kind == "over typical":
        return f"best cosine - typical < {a:g}"
    return f"best cosine - typical < {a:g} and keyword match < {b:g}"


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (95%) of a rate of ``k`` in ``n``."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, mid - half), min(1.0, mid + half)


def _cell(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} ({k / max(1, n):.0%}, {lo:.0%}-{hi:.0%})"


def _cells(rule: tuple, res: dict, split: str) -> str:
    r = rates(rule, res["rows"], split)
    return " | ".join(
        _cell(s, n) for name in res["rows"] for s, n in [r[name][x] for x in res["sets"][name]]
    )


def table(res: dict) -> str:
    names = list(res["rows"])
    head = " | ".join(f"{n}: {s}" for n in names for s in res["sets"][n])
    cols = sum(len(res["sets"][n]) for n in names)
    shipped = res["shipped"]
    lines = [
        "Each rule family fitted on one half (the note on at most"
        f" {res['false_alarms']:.0%} of every corpus's answerable questions there, on the"
        " most unanswerable ones) and measured on the other, held-out half. Cells:"
        " questions the note shows on / questions asked (the share, its 95% Wilson"
        " interval).",
        "",
        f"| rule (family: fitted) | fitted on | measured on | {head} |",
        "|---|---|---|" + "---|" * cols,
    ]
    for kind, by in res["folds"].items():
        for split, rule in by.items():
            other = "test" if split == "dev" else "dev"
            if rule is None:
                lines.append(f"| {kind}: no rule allowed | {split} | - |" + " - |" * cols)
                continue
            lines.append(
                f"| {kind}: {describe(rule)} | {split} | {other} (held out) |"
                f" {_cells(tuple(rule), res, other)} |"
            )
    if shipped:
        lines += [
            "",
            f"Shipped (`Ranking.weak_margin`, `weak_keyword`): **{describe(shipped)}**,"
            " each threshold the lower of its two fits, on both halves (not held out:"
            " chosen with both):",
            "",
            f"| half | {head} |",
            "|---|" + "---|" * cols,
        ]
        for split in ("dev", "test"):
            lines.append(f"| {split} | {_cells(tuple(shipped), res, split)} |")
    return "\n".join(lines) + "\n"


ROW = ["id", "cosine", "cosine_2", "typical", "keyword", "every_word", "in_parts"]


def saved(res: dict) -> dict:
    """``res`` as written: each question a row of :data:`ROW` (its text is in the
    questions file or the corpus)."""
    rows = {
        c: {
            s: {sp: [[q["id"]] + [q["evidence"].get(k) for k in ROW[1:]] for q in qs]
                for sp, qs in halves.items()}
            for s, halves in sets.items()
        }
        for c, sets in res["rows"].items()
    }  # fmt: skip
    return {**res, "row": ROW, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.no_answer", description=__doc__)
    ap.add_argument("--work", type=Path, default=None, help="index folder, kept (default: temp)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "no_answer")
    ap.add_argument("--false-alarms", type=float, default=0.05)
    args = ap.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    from .data import data_dir

    t0 = time.perf_counter()
    work = args.work or Path(tempfile.mkdtemp(prefix="mdseek-no-answer-"))
    corpora = question_sets(data_dir())
    if "emanual" not in corpora:
        log("E-Manual not found: the handbook alone")
    rows = measure(corpora, work, log)
    res = {
        "rows": rows,
        "sets": {n: list(c["sets"]) for n, c in corpora.items()},
        "false_alarms": args.false_alarms,
        **choose(rows, args.false_alarms),
    }
    res["command"] = "python -m benchmarks.no_answer " + " ".join(argv or sys.argv[1:])
    res["seconds"] = round(time.perf_counter() - t0)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "no_answer.json").write_text(json.dumps(saved(res)) + "\n", encoding="utf-8")
    (args.out / "no_answer.md").write_text(table(res), encoding="utf-8")
    print(table(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
