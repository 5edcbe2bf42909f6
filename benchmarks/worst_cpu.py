"""Worst-case files at the size limit, request by request, as CPU time
(issue 40): the shapes of :mod:`benchmarks.worst_case`, each request's feature
function called in-process on one workspace with the file open as an editor
buffer, in the order the server benchmark sends them (the first request pays
the parse, as in the server). Timed as wall time and as the calling thread's
CPU time (``time.thread_time``): on a loaded machine wall time is mostly
waiting for a core, CPU time is what the request costs.

    python -m benchmarks.worst_cpu [--before DIR] [--shapes links,...] [--size BYTES]
                                   [--timeout S] [--out FILE]

``--before DIR``: a checkout of other code (``git worktree add`` or ``git
archive | tar -x``) measured shape by shape beside this one, alternately in one
run, so both see the same load. Each shape runs in its own process, stopped
after ``--timeout`` seconds (a request not answered by then shows ``> T``).
Indexing and search are not measured here (see ``worst_case``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.worst_case import REQUESTS, SHAPES, SIZE, SMALL

REPO = Path(__file__).resolve().parent.parent


def child(shape: str, size: int, folder: Path) -> None:
    """(Own process.) One JSON line per request: wall and thread CPU seconds."""
    from lsprotocol import types

    from mdseek.lsp.server import diagnostics, document_links, folding, navigation, rename
    from mdseek.lsp.server.roots import Root
    from mdseek.lsp.server.workspace import Workspace

    text = SHAPES[shape](size)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "small.md").write_text(SMALL)
    (folder / "target.md").write_text("# Target\n\nWhat the target says.\n")
    path = folder / f"{shape}.md"
    path.write_text(text)
    path = path.resolve()
    loop = asyncio.new_event_loop()
    ws = Workspace()
    ws.roots.append(Root(folder.resolve(), ws.settings, 1, loop))
    uri = path.as_uri()
    ws.docs.set_buffer(path, uri, 1, text)
    lines = text.split("\n")
    first = next((n for n, ln in enumerate(lines) if ln.startswith("#")), 0)
    at = types.Position(line=first, character=2)
    end = types.Position(line=len(lines) - 1, character=3)
    calls = {
        "documentSymbol": lambda: navigation.outline(ws, uri),
        "folding": lambda: folding.folding_for(ws, uri),
        "links": lambda: document_links.document_links_sync(ws, uri),
        "diagnostics": lambda: diagnostics.link_diagnostics(ws, path),
        "completion": lambda: navigation.anchor_completion_sync(ws, uri, end),
        "hover": lambda: navigation.hover_sync(ws, uri, at),
        "rename": lambda: rename.rename_sync(
            ws, uri, at, "Renamed heading", types.ClientCapabilities()
        ),
    }
    for kind in REQUESTS:
        note = None
        w, c = time.perf_counter(), time.thread_time()
        try:
            calls[kind]()
        except Exception as exc:  # a refused rename answers with an error: still timed
            note = f"{type(exc).__name__}: {exc}"[:160]
        w, c = time.perf_counter() - w, time.thread_time() - c
        print(json.dumps({"kind": kind, "wall": w, "cpu": c, "note": note}), flush=True)


def _layout(code: Path, into: Path) -> Path:
    """A ``mdseek`` package of the checkout ``code`` (as pyproject's package-dir
    maps it), to put first on PYTHONPATH."""
    pkg = into / "mdseek"
    pkg.mkdir(parents=True)
    for f in (code / "lsp" / "_package").iterdir():
        if f.suffix == ".py":
            shutil.copy(f, pkg / f.name)
    (pkg / "index").symlink_to(code.resolve() / "index")
    (pkg / "lsp").symlink_to(code.resolve() / "lsp")
    return into


def measure(shape: str, size: int, timeout: float, tmp: Path, path: Path | None) -> dict:
    """The shape's requests in a fresh process (``path``: PYTHONPATH for other code)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp / "cache")}
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), str(REPO)])
    folder = tmp / f"{shape}-{'before' if path else 'now'}"
    cmd = [sys.executable, "-m", "benchmarks.worst_cpu", "--child", shape, "--size", str(size)]
    row: dict = {"shape": shape, "code": "before" if path else "now"}
    proc = subprocess.Popen(
        [*cmd, "--folder", str(folder)], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    for line in out.splitlines():
        r = json.loads(line)
        row[r["kind"]] = (r["wall"], r["cpu"])
        if r["note"]:
            print(f"  {shape} {row['code']}: {r['kind']}: {r['note']}", file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)
    print(f"  {shape} {row['code']}: {_cells(row, timeout)}", file=sys.stderr)
    return row


def _cells(row: dict, timeout: float) -> list[str]:
    return [
        f"{row[k][1]:.2f} / {row[k][0]:.2f}" if k in row else f"> {timeout:.0f}" for k in REQUESTS
    ]


def table_md(rows: list[dict], timeout: float) -> str:
    out = [
        "| shape | code | " + " | ".join(REQUESTS) + " |",
        "|" + "---|" * (len(REQUESTS) + 2),
    ]
    for r in rows:
        out.append(f"| {r['shape']} | {r['code']} | " + " | ".join(_cells(r, timeout)) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size", type=int, default=SIZE, help="bytes per file (default 5 MB)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per shape and code")
    ap.add_argument("--before", type=Path, help="a checkout of other code, measured beside")
    ap.add_argument("--out", type=Path, help="also write the rows as JSON here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.size, args.folder)
        return
    tmp = Path(tempfile.mkdtemp(prefix="mdseek-worst-cpu-"))
    print(f"load before: {os.getloadavg()}", file=sys.stderr)
    rows = []
    try:
        before = _layout(args.before, tmp / "before-code") if args.before else None
        for shape in args.shapes.split(","):
            if before is not None:
                rows.append(measure(shape, args.size, args.timeout, tmp, before))
            rows.append(measure(shape, args.size, args.timeout, tmp, None))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load after: {os.getloadavg()}", file=sys.stderr)
    print(table_md(rows, args.timeout))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
