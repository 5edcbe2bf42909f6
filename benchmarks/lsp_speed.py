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

import importlib.util
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .data import REPO
from .speed import byte_compile, ms_stats

Log = Callable[[str], None]

VSCODE_PACKAGE = "vscode-markdown-languageserver"
VSCODE_VERSION = "0.5.0"
NPM_PREFIX = REPO / "benchmarks" / ".work" / "npm"


class LspError(RuntimeError):
    pass


class LspProcess:
    """A language server over stdio; server->client requests go to ``handlers``."""

    def __init__(
        self, cmd: list[str], cwd: Path, handlers: dict[str, Callable[[Any], Any]], env=None
    ):
        self.t_start = time.perf_counter()
        self.stderr = open(os.environ.get("SRV_ERR", os.devnull), "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            cmd,
            cwd=str(cwd),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
        )
        self.handlers = handlers
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[threading.Event, list]] = {}
        self._wlock = threading.Lock()
        self.notifications: list[tuple[float, str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- wire -----------------------------------------------------------------

    def _send(self, msg: dict) -> None:
        body = json.dumps(msg).encode("utf-8")
        with self._wlock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v)
                if length is None:
                    continue
                msg = json.loads(out.read(length))
                if "method" in msg and "id" in msg:
                    threading.Thread(target=self._answer, args=(msg,), daemon=True).start()
                elif "id" in msg:
                    ev_box = self._pending.pop(msg["id"], None)
                    if ev_box:
                        ev_box[1].append(msg)
                        ev_box[0].set()
                else:
                    self.notifications.append(
                        (time.perf_counter(), msg.get("method", ""), msg.get("params"))
                    )
        except (ValueError, OSError):
            return

    def _answer(self, msg: dict) -> None:
        h = self.handlers.get(msg["method"])
        try:
            result = h(msg.get("params")) if h else None
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        except Exception as exc:  # report to the server, as a client would
            self._send(
                {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32603, "message": str(exc)}}
            )

    # -- API ------------------------------------------------------------------

    def request(self, method: str, params: Any, timeout: float = 120.0) -> tuple[Any, float]:
        rid = next(self._ids)
        ev: threading.Event = threading.Event()
        box: list = []
        self._pending[rid] = (ev, box)
        t0 = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        if not ev.wait(timeout):
            raise LspError(f"{method}: no answer in {timeout:.0f}s")
        dt = time.perf_counter() - t0
        msg = box[0]
        if "error" in msg:
            raise LspError(f"{method}: {msg['error'].get('message')}")
        return msg.get("result"), dt

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def rss_mb(self) -> float | None:
        try:
            import psutil

            return round(psutil.Process(self.proc.pid).memory_info().rss / 2**20, 1)
        except Exception:
            return None

    def close(self) -> float | None:
        """shutdown + exit; returns the seconds until the process ended (None if killed)."""
        t0 = time.perf_counter()
        took: float | None = None
        try:
            if self.proc.poll() is None:
                self.request("shutdown", None, timeout=10)
                self.notify("exit", None)
                self.proc.wait(timeout=10)
            took = time.perf_counter() - t0
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()
        return took


def _common_handlers(root: Path) -> dict[str, Callable[[Any], Any]]:
    uri = root.as_uri()
    return {
        "workspace/configuration": lambda p: [None for _ in (p or {}).get("items", [])],
        "client/registerCapability": lambda p: None,
        "client/unregisterCapability": lambda p: None,
        "window/workDoneProgress/create": lambda p: None,
        "window/showMessageRequest": lambda p: None,
        "workspace/workspaceFolders": lambda p: [{"uri": uri, "name": root.name}],
        "workspace/diagnostic/refresh": lambda p: None,
        "workspace/semanticTokens/refresh": lambda p: None,
        "workspace/codeLens/refresh": lambda p: None,
        "workspace/inlayHint/refresh": lambda p: None,
    }


def _capabilities() -> dict:
    return {
        "workspace": {
            "symbol": {"dynamicRegistration": False},
            "workspaceFolders": True,
            "configuration": True,
        },
        "textDocument": {
            "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
            "synchronization": {"didSave": True},
        },
        "window": {"workDoneProgress": True},
    }


# -- VS Code's markdown server: the client side it needs -----------------------


def _token_dict(tok) -> dict:
    attrs = [[k, v] for k, v in tok.attrs.items()] if tok.attrs else None
    return {
        "type": tok.type,
        "tag": tok.tag,
        "attrs": attrs,
        "map": list(tok.map) if tok.map else None,
        "nesting": tok.nesting,
        "level": tok.level,
        "children": [_token_dict(c) for c in tok.children] if tok.children else None,
        "content": tok.content,
        "markup": tok.markup,
        "info": tok.info,
        "meta": None,
        "block": tok.block,
        "hidden": tok.hidden,
    }


class MarkdownClient:
    """Answers VS Code's markdown server's custom requests from an in-memory copy."""

    def __init__(self, root: Path, files: list[Path]):
        from markdown_it import MarkdownIt

        self.md = MarkdownIt("js-default")
        self.root = root
        self.bytes = {f.as_uri(): f.read_bytes() for f in files}
        self.tokens = {u: self._tokens(b.decode("utf-8")) for u, b in self.bytes.items()}
        self.parse_requests = 0

    def _tokens(self, text: str) -> list[dict]:
        return [_token_dict(t) for t in self.md.parse(text)]

    @staticmethod
    def _path(uri: str) -> Path:
        from urllib.parse import unquote, urlparse

        return Path(unquote(urlparse(uri).path))

    def parse(self, p):
        self.parse_requests += 1
        if p.get("text") is not None:
            return self._tokens(p["text"])
        toks = self.tokens.get(p["uri"])
        return toks if toks is not None else self._tokens(self._path(p["uri"]).read_text())

    def read_file(self, p):
        data = self.bytes.get(p["uri"])
        return list(data if data is not None else self._path(p["uri"]).read_bytes())

    def stat(self, p):
        path = self._path(p["uri"])
        return {"isDirectory": path.is_dir()} if path.exists() else None

    def read_dir(self, p):
        path = self._path(p["uri"])
        return [[c.name, {"isDirectory": c.is_dir()}] for c in sorted(path.iterdir())]

    def handlers(self) -> dict[str, Callable[[Any], Any]]:
        return {
            "markdown/parse": self.parse,
            "markdown/fs/readFile": self.read_file,
            "markdown/fs/stat": self.stat,
            "markdown/fs/readDirectory": self.read_dir,
            "markdown/findMarkdownFilesInWorkspace": lambda p: list(self.bytes),
            "markdown/fs/watcher/create": lambda p: None,
            "markdown/fs/watcher/delete": lambda p: None,
        }


def vscode_server(log: Log, install: bool = True) -> tuple[list[str] | None, str]:
    """The command that runs VS Code's markdown server (installed with npm under
    benchmarks/.work/npm on first use), or None and why not."""
    main = NPM_PREFIX / "node_modules" / VSCODE_PACKAGE / "dist" / "node" / "workerMain.js"
    node = shutil.which("node")
    if node is None:
        return None, "skipped: node is not installed"
    if not main.is_file():
        npm = shutil.which("npm")
        if npm is None or not install:
            return (
                None,
                "skipped: vscode-markdown-languageserver is not installed and npm is unavailable",
            )
        NPM_PREFIX.mkdir(parents=True, exist_ok=True)
        log(f"  installing {VSCODE_PACKAGE}@{VSCODE_VERSION} with npm into {NPM_PREFIX}")
        res = subprocess.run(
            [npm, "install", "--prefix", str(NPM_PREFIX), "--no-audit", "--no-fund", "--no-save",
             f"{VSCODE_PACKAGE}@{VSCODE_VERSION}"],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if res.returncode != 0 or not main.is_file():
            return (
                None,
                f"skipped: npm install {VSCODE_PACKAGE} failed: {res.stderr.strip()[-300:]}",
            )
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    return [node, str(main), "--stdio"], f"{VSCODE_PACKAGE} {VSCODE_VERSION} on node {version}"


def mdseek_server() -> tuple[list[str] | None, str]:
    if importlib.util.find_spec("mdseek.lsp.server.app") is None:
        return None, "skipped: server not available (mdseek.lsp.server.app does not exist yet)"
    return [sys.executable, "-m", "mdseek", "serve"], "python -m mdseek serve"


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
