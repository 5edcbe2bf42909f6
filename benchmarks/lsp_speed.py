"""Language-server speed: mdseek's server beside VS Code's own markdown server.

One harness drives both over stdio (JSON-RPC with Content-Length framing) on
the same copy of the same files:

* time from process start to the first ``workspace/symbol`` answer (and to the
  first non-empty one), mdseek with an existing index; for mdseek also to the
  first ``mdseek/search`` answered in hybrid mode (model loaded);
* ``textDocument/documentSymbol`` latency over every open file (first request
  per file, then warm rounds);
* ``workspace/symbol`` latency over a fixed list of short queries.

VS Code's server (``vscode-markdown-languageserver`` from npm) asks its client
to parse markdown (``markdown/parse``) and to read the workspace
(``markdown/fs/*``, ``markdown/findMarkdownFilesInWorkspace``). The harness
answers from memory: files are read and tokenized with markdown-it-py before
the clock starts, as VS Code's extension host caches parsed documents, so its
numbers are the server's own work plus the protocol round trips.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .cold_cli import byte_compile
from .lsp_client import (
    LspProcess,
    MarkdownClient,
    _capabilities,
    _common_handlers,
    mdseek_server,
    vscode_server,
)
from .timing import ms_stats

Log = Callable[[str], None]

# -- the measurement ------------------------------------------------------------


def _count(result) -> int:
    return len(result) if isinstance(result, list) else 0


def _initialize(srv: LspProcess, root: Path, init_options: dict) -> float:
    """initialize (its round trip's seconds returned), then initialized."""
    init = {
        "processId": os.getpid(),
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        "capabilities": _capabilities(),
        "initializationOptions": init_options,
    }
    _, dt = srv.request("initialize", init, timeout=300)
    srv.notify("initialized", {})
    return dt


def _until_hybrid(srv: LspProcess, query: str, t0: float) -> float | None:
    """Seconds from ``t0`` to the first ``mdseek/search`` answered in hybrid mode
    (polled every 20 ms, for at most 120 s)."""
    deadline = time.perf_counter() + 120
    while time.perf_counter() < deadline:
        res, _ = srv.request("mdseek/search", {"query": query, "limit": 10}, timeout=300)
        if isinstance(res, dict) and res.get("mode") == "hybrid":
            return time.perf_counter() - t0
        time.sleep(0.02)
    return None


def measure(
    name: str,
    cmd: list[str],
    root: Path,
    files: list[Path],
    queries: list[str],
    init_options: dict,
    extra_handlers: dict | None,
    rounds: int,
    log: Log,
) -> dict:
    handlers = _common_handlers(root)
    handlers.update(extra_handlers or {})
    t0 = time.perf_counter()
    srv = LspProcess(cmd, root, handlers)
    try:
        t_init = _initialize(srv, root, init_options)
        first, _ = srv.request("workspace/symbol", {"query": queries[0]}, timeout=300)
        t_first = time.perf_counter() - t0
        # mdseek's own search request says which mode answered
        t_hybrid = _until_hybrid(srv, queries[0], t0) if name == "mdseek" else None
        t_nonempty = t_first if _count(first) else None
        deadline = time.perf_counter() + 120
        while t_nonempty is None and time.perf_counter() < deadline:
            time.sleep(0.1)
            res, _ = srv.request("workspace/symbol", {"query": queries[0]}, timeout=300)
            if _count(res):
                t_nonempty = time.perf_counter() - t0
        for f in files:
            srv.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": f.as_uri(), "languageId": "markdown", "version": 1,
                                  "text": f.read_text(encoding="utf-8")}},
            )  # fmt: skip
        cold, warm, n_sym = [], [], 0
        for r in range(rounds + 1):
            for f in files:
                res, dt = srv.request(
                    "textDocument/documentSymbol", {"textDocument": {"uri": f.as_uri()}}
                )
                (cold if r == 0 else warm).append(dt)
                if r == 0:
                    n_sym += _count(res)
        ws, n_ws = [], []
        for q in queries[1:]:
            res, dt = srv.request("workspace/symbol", {"query": q})
            ws.append(dt)
            n_ws.append(_count(res))
        out = {
            "server": name,
            "initialize_seconds": round(t_init, 3),
            "start_to_first_workspace_symbol_seconds": round(t_first, 3),
            "first_answer_results": _count(first),
            "start_to_first_hybrid_search_seconds": round(t_hybrid, 3) if t_hybrid else None,
            "start_to_first_nonempty_workspace_symbol_seconds": round(t_nonempty, 3)
            if t_nonempty
            else None,
            "document_symbol_first": ms_stats(cold),
            "document_symbol_warm": ms_stats(warm),
            "document_symbols_total": n_sym,
            "workspace_symbol": ms_stats(ws),
            "workspace_symbol_mean_results": round(sum(n_ws) / len(n_ws), 1) if n_ws else 0,
            "rss_mb": srv.rss_mb(),
        }
        out["shutdown_seconds"] = srv.close()
        t = out["shutdown_seconds"]
        out["shutdown_seconds"] = round(t, 3) if t is not None else "killed after 10 s"
        log(
            f"  {name}: first workspace/symbol {t_first:.2f}s after start; documentSymbol median"
            f" {out['document_symbol_warm']['median_ms']} ms; workspace/symbol median {out['workspace_symbol']['median_ms']} ms"
        )
        return out
    finally:
        srv.close()


def start_times(
    cmd: list[str], root: Path, init_options: dict, queries: list[str], n: int, after: float = 2.0
) -> list[dict]:
    """``n`` more starts: process start -> initialize answered -> first
    ``mdseek/search`` answered in hybrid mode (polled every 20 ms); then
    ``mdseek/search`` back to back for ``after`` seconds, as a user who starts
    typing at once sees it (anything still settling in the background shows here)."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        srv = LspProcess(cmd, root, _common_handlers(root))
        try:
            _initialize(srv, root, init_options)
            t_init = time.perf_counter() - t0
            t_hybrid = _until_hybrid(srv, queries[0], t0)
            after_ready: list[float] = []
            end = time.perf_counter() + (after if t_hybrid else 0)
            for q in itertools.cycle(queries[1:] or queries):
                if time.perf_counter() >= end:
                    break
                _, dt = srv.request("mdseek/search", {"query": q, "limit": 10}, timeout=300)
                after_ready.append(dt)
            out.append({"initialize_seconds": round(t_init, 3),
                        "first_hybrid_seconds": round(t_hybrid, 3) if t_hybrid else None,
                        "after_ready": after_ready})  # fmt: skip
        finally:
            srv.close()
    return out


def symbol_queries(files: list[Path], n: int) -> list[str]:
    """Short queries such as a person types into "Go to symbol in workspace": the first
    two words of headings spread over the files."""
    heads = []
    for f in files:
        for ln in f.read_text(encoding="utf-8").split("\n"):
            if ln.startswith("#"):
                words = ln.lstrip("#").strip().split()
                if len(words) >= 2:
                    heads.append(" ".join(words[:2]).lower())
    if not heads:
        return ["install"] * n
    step = max(1, len(heads) // n)
    return (heads[::step] * n)[:n]


def run(
    root: Path,
    index: Path,
    log: Log,
    rounds: int = 5,
    n_queries: int = 40,
    install: bool = True,
    starts: int = 7,
) -> dict:
    """Both servers on the same folder ``root`` (a scratch copy); mdseek reuses ``index``."""
    files = sorted(root.rglob("*.md"))
    queries = symbol_queries(files, n_queries + 1)
    out: dict = {"files": len(files), "queries": len(queries) - 1, "rounds": rounds}
    cmd, why = mdseek_server()
    if cmd is None:
        out["mdseek"] = {"skipped": why}
        log(f"  mdseek server {why}")
    else:
        try:
            out["bytecode"] = byte_compile()
            out["mdseek"] = measure(
                "mdseek", cmd, root, files, queries, {"indexPath": str(index)}, None, rounds, log
            )
            # One start is noise on a shared machine: the median of several.
            more = start_times(cmd, root, {"indexPath": str(index)}, queries, starts - 1)
            m = out["mdseek"]
            inits = [m["initialize_seconds"]] + [r["initialize_seconds"] for r in more]
            hybrids = [m["start_to_first_hybrid_search_seconds"]] + [
                r["first_hybrid_seconds"] for r in more
            ]
            hybrids = [h for h in hybrids if h is not None]
            m["starts"] = len(inits)
            m["initialize_seconds_median"] = round(statistics.median(inits), 3)
            m["first_hybrid_seconds_all"] = hybrids
            m["first_hybrid_seconds_median"] = (
                round(statistics.median(hybrids), 3) if hybrids else None
            )
            after = [dt for r in more for dt in r["after_ready"]]
            if after:  # every search in the first 2 s after each start's first hybrid answer
                m["search_after_ready"] = ms_stats(after) | {"max_ms": round(max(after) * 1000, 1)}
            log(
                f"  mdseek: {len(inits)} starts, first hybrid answer median {m['first_hybrid_seconds_median']} s"
            )
        except Exception as exc:
            out["mdseek"] = {"skipped": f"failed: {type(exc).__name__}: {exc}"}
            log(f"  mdseek server failed: {exc}")
    cmd, why = vscode_server(log, install=install)
    out["vscode_version"] = why
    if cmd is None:
        out["vscode"] = {"skipped": why}
        log(f"  VS Code markdown server {why}")
    else:
        try:
            client = MarkdownClient(root, files)
            out["vscode"] = measure(
                "vscode-markdown-languageserver", cmd, root, files, queries,
                {"markdownFileExtensions": ["md"]}, client.handlers(), rounds, log,
            )  # fmt: skip
            out["vscode"]["parse_requests"] = client.parse_requests
        except Exception as exc:
            out["vscode"] = {"skipped": f"failed: {type(exc).__name__}: {exc}"}
            log(f"  VS Code markdown server failed: {exc}")
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.lsp_speed --root DIR --index FILE [--starts N]``:
    mdseek's server started N times on an indexed folder; per start, the first
    hybrid answer and the searches of the 2 s after it (what the full run's
    language-server table reports)."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--root", required=True, type=Path)
    ap.add_argument("--index", required=True, type=Path)
    ap.add_argument("--starts", type=int, default=5)
    args = ap.parse_args(argv)
    cmd, why = mdseek_server()
    if cmd is None:
        print(why, file=sys.stderr)
        return 1
    byte_compile()
    root = args.root.resolve()
    queries = symbol_queries(sorted(root.rglob("*.md")), 41)
    runs = start_times(cmd, root, {"indexPath": str(args.index.resolve())}, queries, args.starts)
    for r in runs:
        a = r["after_ready"]
        print(f"first hybrid answer {r['first_hybrid_seconds']} s; {len(a)} searches after it:"
              f" median {statistics.median(a) * 1000:.1f} ms, max {max(a) * 1000:.1f} ms" if a else "no hybrid answer")  # fmt: skip
    after = [dt for r in runs for dt in r["after_ready"]]
    hybrid = [r["first_hybrid_seconds"] for r in runs if r["first_hybrid_seconds"]]
    print(json.dumps({"first_hybrid_seconds_median": statistics.median(hybrid) if hybrid else None,
                      "search_after_ready": ms_stats(after) | {"max_ms": round(max(after) * 1000, 1) if after else None}}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
