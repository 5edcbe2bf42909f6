"""``python -m benchmarks.trial QUESTIONS.json DIR --db FILE``: a small trial as a
user runs it, through the command line.

The questions file (e.g. ``benchmarks/trials/rustbook-questions.json``) holds
questions written before the corpus was ever searched, each with the sections
(file + heading as written) that answer it. Every question is asked with
``mdseek search DIR "question" --json --limit 5`` in each mode, one process
per search as a user would; a result counts when it is one of the expected
sections (same file, same heading; the JSON's ``heading`` is as written). The
first expected section's rank gives top-1 / top-3 / top-5.

Besides the ranks it records what a user would see go wrong: errors (a non-zero
exit, anything on stderr besides notes), notes, empty snippets, results whose
``start_line`` is not the line of their heading in the file, and the top
score of each answer. ``mdseek index DIR --db FILE`` runs first (timed).
Writes ``--out`` (JSON) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

MODES = ("hybrid", "lexical", "dense")


def _mdseek(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mdseek", *args],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def _line_ok(root: Path, r: dict) -> bool:
    """Whether the result's 1-based start line is its heading's line in the file."""
    try:
        lines = (root / r["path"]).read_text(encoding="utf-8").split("\n")
    except OSError:
        return False
    n = r["start_line"]
    if not 1 <= n <= len(lines):
        return False
    line = lines[n - 1]
    if line.lstrip().startswith("#"):
        return r["heading"] in line
    return n < len(lines) and r["heading"] in line  # setext: text, then underline


def run(questions: dict, root: Path, db: Path, limit: int = 5) -> dict:
    t0 = time.perf_counter()
    idx = _mdseek("index", str(root), "--db", str(db), "--no-progress", "--json")
    out: dict = {
        "index": {
            "exit": idx.returncode,
            "seconds": round(time.perf_counter() - t0, 1),
            "report": json.loads(idx.stdout) if idx.returncode == 0 else idx.stderr.strip(),
        },
        "questions": [],
    }
    for q in questions["questions"]:
        want = {(e["path"], e["heading"]) for e in q["expected"]}
        row: dict = {"id": q["id"], "question": q["question"], "modes": {}}
        for mode in MODES:
            t1 = time.perf_counter()
            res = _mdseek(
                "search", str(root), q["question"], "--db", str(db), "--json",
                "--limit", str(limit), "--mode", mode, "--no-progress",
            )  # fmt: skip
            secs = time.perf_counter() - t1
            rec: dict = {"exit": res.returncode, "seconds": round(secs, 2)}
            rec["stderr"] = [ln for ln in res.stderr.splitlines() if ln.strip()]
            if res.returncode == 0:
                ans = json.loads(res.stdout)
                results = ans["results"]
                rec["note"] = ans.get("note")
                rec["complete"] = ans.get("complete")
                rec["rank"] = next(
                    (i for i, r in enumerate(results, 1) if (r["path"], r["heading"]) in want),
                    None,
                )
                rec["top"] = [
                    {"path": r["path"], "heading": r["heading"], "score": r["score"]}
                    for r in results
                ]
                rec["empty_snippets"] = sum(1 for r in results if not r["snippet"].strip())
                rec["bad_lines"] = [
                    (r["path"], r["start_line"]) for r in results if not _line_ok(root, r)
                ]
            row["modes"][mode] = rec
        out["questions"].append(row)
    out["summary"] = {
        mode: {
            f"top{k}": sum(1 for q in out["questions"] if (q["modes"][mode].get("rank") or 99) <= k)
            for k in (1, 3, 5)
        }
        for mode in MODES
    }
    return out


def table(res: dict) -> str:
    n = len(res["questions"])
    lines = [
        "| mode | top-1 | top-3 | top-5 |",
        "|---|---|---|---|",
    ]
    for mode, s in res["summary"].items():
        lines.append(f"| {mode} | {s['top1']}/{n} | {s['top3']}/{n} | {s['top5']}/{n} |")
    lines += ["", "| question | " + " | ".join(MODES) + " |", "|---|---|---|---|"]
    for q in res["questions"]:
        cells = []
        for mode in MODES:
            m = q["modes"][mode]
            cells.append("error" if m["exit"] else str(m.get("rank") or "-"))
        lines.append(f"| {q['id']} {q['question']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.trial", description=__doc__)
    ap.add_argument("questions", type=Path)
    ap.add_argument("root", type=Path)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--limit", type=int, default=5)
    args = ap.parse_args(argv)
    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    res = run(questions, args.root, args.db, args.limit)
    res["command"] = "python -m benchmarks.trial " + " ".join(argv or sys.argv[1:])
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(table(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
