"""``mdseek mcp`` latency, as an agent sees it: the SDK's client over stdio on a
copy of the fixture handbook, plus the cost of the mtime scan that keeps the
index fresh before every tool call, on a synthetic folder of many files.

    python -m benchmarks.mcp_latency [--files 2000] [--rounds 20]

Prints JSON: seconds to initialize, the first search (model load included),
medians of search / get_section / outline / status, and the scan's median per
folder size. Timings are noisy on a shared machine: compare medians side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def scan_seconds(folder: Path, rounds: int) -> float:
    from mdseek.index.engine import facade
    from mdseek.index.engine.engine import Engine

    eng = Engine(folder)
    eng.index(embed=False)  # chunks only: the scan compares files with the index
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        assert not facade.stale(eng)
        times.append(time.perf_counter() - t0)
    eng.close()
    return statistics.median(times)


def synthetic(folder: Path, n: int) -> Path:
    for i in range(n):
        d = folder / f"d{i % 40:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"note-{i:05d}.md").write_text(
            f"# Note {i}\n\n## Part\n\nText of note {i} about topic {i % 97}.\n"
        )
    return folder


async def over_stdio(ws: Path, rounds: int) -> dict:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    queries = [
        q["query"] for q in json.loads((REPO / "tests/fixture_queries.json").read_text())["queries"]
    ]
    params = StdioServerParameters(command=sys.executable, args=["-m", "mdseek", "mcp", str(ws)])
    out: dict = {}
    t0 = time.perf_counter()
    async with Client(params, read_timeout_seconds=300) as c:
        out["initialize_s"] = round(time.perf_counter() - t0, 3)
        while (await c.call_tool("status", {})).structured_content["state"] != "ready":
            await asyncio.sleep(0.1)
        t = time.perf_counter()
        first = await c.call_tool("search", {"query": queries[0], "limit": 5})
        out["first_search_s"] = round(time.perf_counter() - t, 3)
        top = first.structured_content["results"][0]

        async def median(tool: str, args_for) -> float:
            ts = []
            for i in range(rounds):
                t = time.perf_counter()
                res = await c.call_tool(tool, args_for(i))
                ts.append(time.perf_counter() - t)
                assert not res.is_error, res.content
            return round(statistics.median(ts) * 1000, 1)

        out["search_ms"] = await median(
            "search", lambda i: {"query": queries[(i + 1) % len(queries)], "limit": 10}
        )
        out["get_section_ms"] = await median(
            "get_section", lambda i: {"path": top["path"], "anchor": top["anchor"]}
        )
        out["outline_ms"] = await median("outline", lambda i: {"path": top["path"]})
        out["status_ms"] = await median("status", lambda i: {})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--files", type=int, default=2000, help="synthetic folder size for the scan timing"
    )
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        shutil.copytree(REPO / "fixtures", ws, ignore=shutil.ignore_patterns(".mdseek"))
        res = {"fixture_files": len(list(ws.rglob("*.md")))}
        res["scan_fixture_ms"] = round(scan_seconds(ws, args.rounds) * 1000, 2)
        res.update(asyncio.run(over_stdio(ws, args.rounds)))
        big = synthetic(Path(tmp) / "big", args.files)
        res[f"scan_{args.files}_files_ms"] = round(
            scan_seconds(big, max(3, args.rounds // 4)) * 1000, 1
        )
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
