"""Chunking time on hostile inputs vs ordinary prose of the same size.

    .venv/bin/python -m benchmarks.chunk_hostile [--size 1000000] [--timeout 120]
                                                 [--only prose,backticks] [--json]

Each input is generated here (nothing is read from the repository except the
product docs in ../shared/data for the prose, when present), written to a temp
file and chunked by ``mdseek chunks FILE --json``'s code path (parse + chunk, the
bundled model's tokenizer) in a child process, so one case that runs away is
stopped at ``--timeout`` and reported as such. Reported per case: parse and
chunk seconds, chunks, the ratio of the total to the prose case, and peak RSS.

Cases (each ``--size`` bytes of UTF-8):
  prose        product docs (or generated sentences) as paragraphs under headings
  prose_1sec   the same words as one section of paragraphs (no headings)
  backticks    one line of backticks
  base64       one line of base64 (a pasted blob)
  huge_word    one word of letters
  nul          NUL bytes
  brackets     ``[`` and ``]`` alternating in runs
  cjk          Japanese/Chinese text without spaces
  long_lines   a minified JSON line in a fence
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .data import data_dir

CASES = (
    "prose",
    "prose_1sec",
    "backticks",
    "base64",
    "huge_word",
    "nul",
    "brackets",
    "cjk",
    "long_lines",
)


def _prose_words() -> list[str]:
    d = data_dir()
    if d is not None and (d / "rhdh" / "docs").is_dir():
        text = " ".join(
            p.read_text(errors="replace") for p in sorted((d / "rhdh" / "docs").glob("*.md"))
        )
        words = [w for w in text.split() if w.isalpha() or w.rstrip(".,;:").isalpha()]
        if len(words) > 1000:
            return words
    rng = random.Random(1)
    vocab = "the replica database failover queue backlog certificate rotation pager deploy".split()
    return [rng.choice(vocab) + ("." if rng.random() < 0.07 else "") for _ in range(20000)]


def make(case: str, size: int) -> bytes:
    rng = random.Random(7)
    if case in ("prose", "prose_1sec"):
        words = _prose_words()
        out: list[str] = []
        n = 0
        i = 0
        sec = 0
        while n < size:
            if case == "prose" and i % 400 == 0:
                sec += 1
                h = f"\n## Section {sec}\n\n"
                out.append(h)
                n += len(h)
            w = words[i % len(words)]
            i += 1
            sep = "\n\n" if i % 90 == 0 else " "
            out.append(w + sep)
            n += len(w) + len(sep)
        return ("# Prose\n\n" + "".join(out)).encode()[:size]
    head = b"# Blob\n\n"
    n = size - len(head)
    if case == "backticks":
        return head + b"`" * n
    if case == "base64":
        return head + base64.b64encode(rng.randbytes(n))[:n]
    if case == "huge_word":
        return head + bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(n))
    if case == "nul":
        return head + b"\0" * n
    if case == "brackets":
        out_b = bytearray()
        while len(out_b) < n:
            out_b += (b"[" * rng.randint(1, 50)) + (b"]" * rng.randint(1, 50))
        return head + bytes(out_b[:n])
    if case == "cjk":
        chars = "東京都の天気は晴れです日本語の文章には空白がありません数据库故障转移队列证书轮换"
        s = "".join(rng.choice(chars) for _ in range(n // 3))
        return head + s.encode()
    if case == "long_lines":
        obj = json.dumps(
            [{"k": i, "v": "x" * (i % 7)} for i in range(n // 20)], separators=(",", ":")
        )
        body = ("```json\n" + obj[: n - 20] + "\n```\n").encode()
        return head + body
    raise ValueError(case)


def _child(path: str) -> None:
    """Parse + chunk one file, print timings as JSON (run in a child process)."""
    from mdseek.index.model.model import resolve_model
    from mdseek.index.model.tokenizer import load_tokenizer
    from mdseek.index.text.chunk import Chunker
    from mdseek.index.text.parse import parse_bytes

    tok = load_tokenizer(resolve_model(None))
    chunker = Chunker(tok)
    data = Path(path).read_bytes()
    t0 = time.perf_counter()
    doc = parse_bytes(data, "x.md")
    t1 = time.perf_counter()
    chunks = chunker.chunk(doc)
    t2 = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tiny = sum(1 for c in chunks if len(c.text.strip()) <= 1)
    print(
        json.dumps(
            {
                "parse_s": t1 - t0,
                "chunk_s": t2 - t1,
                "total_s": t2 - t0,
                "chunks": len(chunks),
                "max_tokens": max((c.tokens for c in chunks), default=0),
                "window": tok.window,
                "one_char_chunks": tiny,
                "rss_mb": round(rss),
            }
        )
    )


def run_case(case: str, size: int, timeout: float, tmp: Path) -> dict:
    f = tmp / f"{case}.md"
    f.write_bytes(make(case, size))
    t0 = time.perf_counter()
    try:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.chunk_hostile", "--child", str(f)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return {"case": case, "bytes": f.stat().st_size, "timeout_s": timeout}
    except subprocess.CalledProcessError as exc:
        return {
            "case": case,
            "bytes": f.stat().st_size,
            "error": exc.stderr.strip().splitlines()[-1:],
        }
    res = json.loads(out.stdout)
    res.update(case=case, bytes=f.stat().st_size, wall_s=time.perf_counter() - t0)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--repeats", type=int, default=1, help="runs per case (median reported)")
    ap.add_argument("--only", default=",".join(CASES))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        _child(args.child)
        return
    cases = [c for c in args.only.split(",") if c]
    if "prose" not in cases:
        cases.insert(0, "prose")
    rows = []
    with tempfile.TemporaryDirectory(prefix="mdseek-hostile-") as td:
        for case in cases:
            runs = [run_case(case, args.size, args.timeout, Path(td)) for _ in range(args.repeats)]
            ok = [r for r in runs if "total_s" in r]
            if ok:
                r = dict(ok[0])
                for k in ("parse_s", "chunk_s", "total_s"):
                    r[k] = statistics.median(x[k] for x in ok)
            else:
                r = runs[0]
            rows.append(r)
            print(f"  {case}: {r}", file=sys.stderr, flush=True)
    base = next((r["total_s"] for r in rows if r["case"] == "prose" and "total_s" in r), None)
    for r in rows:
        if base and "total_s" in r:
            r["vs_prose"] = round(r["total_s"] / base, 2)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"{'case':12} {'bytes':>9} {'parse s':>8} {'chunk s':>8} {'total s':>8} {'x prose':>8} {'chunks':>7} {'1-char':>6} {'RSS MB':>7}"
    )
    for r in rows:
        if "total_s" not in r:
            why = (
                f"> {r['timeout_s']:.0f} s (timeout)"
                if "timeout_s" in r
                else f"error {r.get('error')}"
            )
            print(f"{r['case']:12} {r['bytes']:>9} {why}")
            continue
        print(
            f"{r['case']:12} {r['bytes']:>9} {r['parse_s']:8.2f} {r['chunk_s']:8.2f} {r['total_s']:8.2f} "
            f"{r.get('vs_prose', 0):8.2f} {r['chunks']:>7} {r['one_char_chunks']:>6} {r['rss_mb']:>7}"
        )


if __name__ == "__main__":
    main()
