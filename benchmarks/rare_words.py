"""The rare-word check (issues 48 and 39): questions that carry a word found in
few sections of a public corpus, asked through ``Engine.search`` in each mode.

    python -m benchmarks.rare_words candidates DIR [--n 60] [--seed 1]
        words of 5+ letters found in 1-3 heading sections of DIR's markdown,
        a seeded sample, each with its sections and the words around it (how
        the questions of benchmarks/rare/questions.json were picked)
    python -m benchmarks.rare_words run [--questions FILE] [--work DIR] [--set KNOB=VALUE ...]
        each corpus of the questions file (``../shared/data`` or
        $MDSEEK_BENCH_DATA) copied to the work folder and indexed (kept there
        and reused), then every question asked in hybrid, lexical and dense
        mode; prints top-1 / top-3 / top-5 per corpus and mode and each
        question's ranks. ``--set dense_weight_matched=0.4`` runs hybrid with a
        ranking knob changed (:class:`retrieve.Ranking`), beside the default.

A result counts when it is one of the question's expected sections (same file,
same heading as written, same heading line when given); the first expected
section found gives the rank.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import random
import re
import sys
import tempfile
from pathlib import Path

from .data import REPO, where_data_should_be

QUESTIONS = REPO / "benchmarks" / "rare" / "questions.json"
MODES = ("hybrid", "lexical", "dense")
_WORD = re.compile(r"[a-z][a-z0-9]+")


def sections(root: Path) -> list[tuple[str, str, str]]:
    """(path, heading, text) of every heading section (a plain reading: ``#`` lines
    outside fences), for picking words only."""
    out = []
    for f in sorted(root.rglob("*.md")):
        cur: list | None = None
        fence = False
        for line in f.read_text(encoding="utf-8").split("\n"):
            if line.startswith("```"):
                fence = not fence
            m = re.match(r"(#{1,6})\s+(.*)", line)
            if m and not fence:
                cur = [str(f.relative_to(root)), m.group(2).strip(), []]
                out.append(cur)
            elif cur is not None:
                cur[2].append(line)
    return [(p, h, h + "\n" + "\n".join(body)) for p, h, body in out]


def candidates(root: Path, n: int, seed: int) -> str:
    secs = sections(root)
    words = [set(_WORD.findall(t.lower())) for _, _, t in secs]
    df = collections.Counter(w for ws in words for w in ws)
    rare = sorted(w for w, c in df.items() if c <= 3 and len(w) >= 5)
    random.Random(seed).shuffle(rare)
    lines = [f"{len(secs)} sections, {len(rare)} words in 1-3 of them"]
    for w in rare[:n]:
        lines.append(f"== {w} ({df[w]})")
        for (p, h, t), ws in zip(secs, words, strict=True):
            if w in ws:
                k = t.lower().find(w)
                around = " ".join(t[max(0, k - 150) : k + 150].split())
                lines.append(f"   {p} [{h}] ...{around}...")
    return "\n".join(lines)


def _engine(name: str, src: Path, work: Path):
    import shutil

    from mdseek.index.engine.engine import Engine

    root = work / name / "docs"
    if not root.exists():
        shutil.copytree(src, root)
    eng = Engine(root, index_path=work / name / "index.sqlite")
    rep = eng.index()
    print(
        f"{name}: {rep.files} files, {rep.chunks} chunks ({rep.embedded} embedded)", file=sys.stderr
    )
    return eng


def rank_of(results, expected: list[dict]) -> int | None:
    """The 1-based rank of the first expected section (same file and heading, and
    the same 1-based heading line when one is given), None when none is shown."""

    def hit(r) -> bool:
        return any(
            (r.path, r.heading) == (e["path"], e["heading"])
            and e.get("line", r.start_line + 1) == r.start_line + 1
            for e in expected
        )

    return next((i for i, r in enumerate(results, 1) if hit(r)), None)


def run(questions: dict, data: Path, work: Path, knobs: dict, limit: int = 10) -> dict:
    from mdseek.index.search import retrieve

    variants = {"hybrid": None, "lexical": None, "dense": None}
    if knobs:
        variants["hybrid " + ",".join(f"{k}={v}" for k, v in knobs.items())] = knobs
    out: dict = {"questions": [], "summary": {}}
    by_corpus = collections.defaultdict(list)
    for q in questions["questions"]:
        by_corpus[q["corpus"]].append(q)
    for name, qs in by_corpus.items():
        eng = _engine(name, data / questions["corpora"][name]["data"], work)
        try:
            for q in qs:
                row = {"id": q["id"], "corpus": name, "word": q["word"], "question": q["question"]}
                for label, change in variants.items():
                    eng.searcher.ranking = dataclasses.replace(retrieve.DEFAULT, **(change or {}))
                    mode = label.split()[0]
                    res = eng.search(q["question"], limit=limit, mode=mode).results
                    row[label] = rank_of(res, q["expected"])
                eng.searcher.ranking = retrieve.DEFAULT
                out["questions"].append(row)
        finally:
            eng.close()
    for name in [*by_corpus, "all"]:
        rows = [r for r in out["questions"] if name in ("all", r["corpus"])]
        out["summary"][name] = {
            label: {f"top{k}": sum(1 for r in rows if (r[label] or 99) <= k) for k in (1, 3, 5)}
            for label in variants
        } | {"questions": len(rows)}
    return out


def table(res: dict) -> str:
    labels = [k for k in next(iter(res["summary"].values())) if k != "questions"]
    lines = ["| corpus | questions | " + " | ".join(f"{lb} top-1 / 3 / 5" for lb in labels) + " |"]
    lines.append("|---|---|" + "---|" * len(labels))
    for name, s in res["summary"].items():
        cells = [f"{s[lb]['top1']} / {s[lb]['top3']} / {s[lb]['top5']}" for lb in labels]
        lines.append(f"| {name} | {s['questions']} | " + " | ".join(cells) + " |")
    lines += ["", "| id | word | question | " + " | ".join(labels) + " |"]
    lines.append("|---|---|---|" + "---|" * len(labels))
    for r in res["questions"]:
        cells = [str(r[lb] or "-") for lb in labels]
        lines.append(f"| {r['id']} | {r['word']} | {r['question']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.rare_words", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("candidates")
    c.add_argument("root", type=Path)
    c.add_argument("--n", type=int, default=60)
    c.add_argument("--seed", type=int, default=1)
    r = sub.add_parser("run")
    r.add_argument("--questions", type=Path, default=QUESTIONS)
    r.add_argument(
        "--work", type=Path, default=None, help="index folder, kept (default: a temp dir)"
    )
    r.add_argument("--set", action="append", default=[], help="KNOB=VALUE of retrieve.Ranking")
    r.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "candidates":
        print(candidates(args.root, args.n, args.seed))
        return 0
    knobs = {k: _value(v) for k, v in (s.split("=", 1) for s in args.set)}
    work = args.work or Path(tempfile.mkdtemp(prefix="mdseek-rare-"))
    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    res = run(questions, Path(where_data_should_be()), work, knobs)
    res["command"] = "python -m benchmarks.rare_words " + " ".join(argv or sys.argv[1:])
    if args.out:
        args.out.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(table(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
