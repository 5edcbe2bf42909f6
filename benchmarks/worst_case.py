"""Worst-case inputs at the size limit (issue 40): one file of a hostile shape,
as large as the limit allows, through the real language server and through
``mdseek index``.

    python -m benchmarks.worst_case [--size BYTES] [--shapes headings,table,...]
                                    [--timeout S] [--index-timeout S] [--out FILE]

Shapes (each about ``--size`` bytes, default 5 MB, the default size limit):
``headings`` (``# hN`` lines; past the heading limit, so refused),
``headings_at_limit`` (10,000 of them, the most a file may hold), ``table`` (a few rows of as many columns as fit),
``links`` (lines of ten links to headings), ``nesting`` (list items nested 40
deep, over and over), ``paragraph`` (one paragraph of prose lines), ``fence``
(one fenced code block).

For each shape the file is written to a fresh folder beside one small note.
The server (``python -m mdseek serve --stdio``) opens the folder and the file
as an editor would (``didOpen``); each request is timed from sending to its
answer: documentSymbol, foldingRange, documentLink, diagnostic (pull),
completion (after ``](#`` on the last line), hover (on the first line), rename
(the first heading, or a prepareRename where there is none), and
``mdseek/search`` once the folder is indexed. Requests over ``--timeout`` are
reported as such (the server is then restarted for the next one). Then
``mdseek index`` of the folder, in its own process: wall time and peak RSS
(``wait4``), up to ``--index-timeout``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from raw_lsp import RawServer  # noqa: E402

SIZE = 4_999_000  # under the 5 MB limit (headers and the last line included)
SMALL = "# Small\n\nA short note about [the target](target.md).\n"


def _fill(line: Callable[[int], str], size: int) -> str:
    """Lines up to ``size`` characters (never past it: a file over the size
    limit would not be indexed at all)."""
    out, n, i = [], 0, 0
    while True:
        s = line(i)
        if n + len(s) > size:
            return "".join(out)
        out.append(s)
        n += len(s)
        i += 1


def headings(size: int) -> str:
    return _fill(lambda i: f"# h{i}\n", size)


def headings_at_limit(size: int) -> str:
    """As many headings as a file may hold (the size does not matter)."""
    from mdseek.index.text.parse import MAX_HEADINGS

    return "".join(f"# h{i}\n" for i in range(MAX_HEADINGS))


def table(size: int) -> str:
    rows = 7
    cols = size // (rows * 14)
    out = ["|" + "|".join(f" column{i:05d} " for i in range(cols)) + "|\n"]
    out.append("|" + "|".join("-----" for _ in range(cols)) + "|\n")
    out += ["|" + "|".join(f" val{r}x{i:05d} " for i in range(cols)) + "|\n" for r in range(5)]
    return "# Wide\n\n" + "".join(out)


def links(size: int) -> str:
    head = "# Links\n\n" + "".join(f"## Part {i}\n\n" for i in range(50))
    return head + _fill(
        lambda i: " ".join(f"[see {i}.{k}](#part-{(i + k) % 50})" for k in range(10)) + "\n\n",
        size - len(head),
    )


def nesting(size: int) -> str:
    return "# Nested\n\n" + _fill(lambda i: "  " * (i % 40) + f"- item {i}\n", size)


def paragraph(size: int) -> str:
    words = "the quick brown fox jumps over a lazy dog while seven wizards quietly box".split()
    return "# Prose\n\n" + _fill(
        lambda i: " ".join(words[(i + k) % len(words)] for k in range(12)) + f" {i}.\n", size
    )


def fence(size: int) -> str:
    body = _fill(lambda i: f"    value_{i} = compute(value_{i - 1}) + {i}\n", size)
    return "# Code\n\n```python\n" + body + "```\n"


SHAPES: dict[str, Callable[[int], str]] = {
    "headings": headings,
    "headings_at_limit": headings_at_limit,
    "table": table,
    "links": links,
    "nesting": nesting,
    "paragraph": paragraph,
    "fence": fence,
}
REQUESTS = ["documentSymbol", "folding", "links", "diagnostics", "completion", "hover", "rename"]


def _params(kind: str, uri: str, text: str) -> tuple[str, dict]:
    doc = {"uri": uri}
    lines = text.split("\n")
    last = len(lines) - 1
    first_heading = next((n for n, ln in enumerate(lines) if ln.startswith("#")), 0)
    at_head = {"line": first_heading, "character": 2}
    return {
        "documentSymbol": ("textDocument/documentSymbol", {"textDocument": doc}),
        "folding": ("textDocument/foldingRange", {"textDocument": doc}),
        "links": ("textDocument/documentLink", {"textDocument": doc}),
        "diagnostics": ("textDocument/diagnostic", {"textDocument": doc}),
        "completion": (
            "textDocument/completion",
            {"textDocument": doc, "position": {"line": last, "character": 3}},
        ),
        "hover": ("textDocument/hover", {"textDocument": doc, "position": at_head}),
        "rename": (
            "textDocument/rename",
            {"textDocument": doc, "position": at_head, "newName": "Renamed heading"},
        ),
    }[kind]


class Server:
    """The language server on ``folder`` with ``path`` open (restarted after a timeout)."""

    def __init__(self, folder: Path, path: Path, text: str, env: dict[str, str]):
        self.folder, self.path, self.text, self.env = folder, path, text, env
        self.srv: RawServer | None = None

    def start(self) -> RawServer:
        if self.srv is None:
            self.srv = RawServer(self.folder.parent, env=self.env)
            self.srv.initialize(self.folder, timeout=120)
            uri = self.path.resolve().as_uri()
            item = {"uri": uri, "languageId": "markdown", "version": 1, "text": self.text}
            self.srv.notify("textDocument/didOpen", {"textDocument": item})
        return self.srv

    def time(self, method: str, params: dict, timeout: float) -> float | None:
        srv = self.start()
        t = time.perf_counter()
        res = srv.request(method, params, timeout=timeout)
        took = time.perf_counter() - t
        if res is None:
            self.stop()
            return None
        if "error" in res:
            print(f"    {method}: error {res['error'].get('message')}", file=sys.stderr)
        return took

    def stop(self) -> None:
        if self.srv is not None:
            self.srv.close()
            self.srv = None


def index_run(folder: Path, env: dict[str, str], timeout: float) -> tuple[float | None, float]:
    """``mdseek index`` of ``folder``: (seconds or None past ``timeout``, peak RSS in MB)."""
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mdseek", "index", str(folder), "--no-progress"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = t + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            took: float | None = time.perf_counter() - t
            break
        if time.perf_counter() > deadline:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            took = None
            break
        time.sleep(0.2)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if took is not None and proc.returncode != 0:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        print(f"    index failed: {err.strip()[-300:]}", file=sys.stderr)
    return took, usage.ru_maxrss / 1024  # KB on Linux


def run_shape(
    name: str, size: int, tmp: Path, timeout: float, index_timeout: float, search: bool
) -> dict:
    text = SHAPES[name](size)
    folder = tmp / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "small.md").write_text(SMALL)
    (folder / "target.md").write_text("# Target\n\nWhat the target says.\n")
    path = folder / f"{name}.md"
    path.write_text(text)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache" / name)}
    row: dict = {"shape": name, "bytes": len(text.encode()), "lines": text.count("\n")}
    took, rss = index_run(folder, env, index_timeout)
    row["index_s"], row["index_rss_mb"] = took, round(rss)
    print(f"  {name}: index {_fmt(took, index_timeout)}, {rss:.0f} MB", file=sys.stderr)
    server = Server(folder, path, text, env)
    try:
        uri = path.resolve().as_uri()
        for kind in REQUESTS:
            method, params = _params(kind, uri, text)
            row[kind] = server.time(method, params, timeout)
            print(f"  {name}: {kind} {_fmt(row[kind], timeout)}", file=sys.stderr)
        if search and took is not None:
            q = {"query": "value seven wizards part item column", "limit": 10}
            row["search"] = server.time("mdseek/search", q, timeout)
            print(f"  {name}: search {_fmt(row['search'], timeout)}", file=sys.stderr)
    finally:
        server.stop()
    return row


def _fmt(x: float | None, limit: float) -> str:
    return f"> {limit:.0f} s" if x is None else f"{x:.2f} s"


def table_md(rows: list[dict], timeout: float, index_timeout: float) -> str:
    cols = [*REQUESTS, "search"]
    head = "| shape | MB | " + " | ".join(cols) + " | index | index RSS |"
    out = [head, "|" + "---|" * (len(cols) + 4)]
    for r in rows:
        cells = [_fmt(r.get(c), timeout) if c in r else "–" for c in cols]
        out.append(
            f"| {r['shape']} | {r['bytes'] / 1e6:.1f} | "
            + " | ".join(cells)
            + f" | {_fmt(r['index_s'], index_timeout)} | {r['index_rss_mb']} MB |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size", type=int, default=SIZE, help="bytes per file (default 5 MB)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per request (default 60)")
    ap.add_argument("--index-timeout", type=float, default=600, help="seconds per index")
    ap.add_argument("--no-search", action="store_true", help="skip mdseek/search")
    ap.add_argument("--out", type=Path, help="also write the rows as JSON here")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mdseek-worst-"))
    print(f"load before: {os.getloadavg()}", file=sys.stderr)
    rows = []
    try:
        for name in args.shapes.split(","):
            rows.append(
                run_shape(
                    name, args.size, tmp, args.timeout, args.index_timeout, not args.no_search
                )
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load after: {os.getloadavg()}", file=sys.stderr)
    print(table_md(rows, args.timeout, args.index_timeout))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
