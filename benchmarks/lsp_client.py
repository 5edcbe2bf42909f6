"""The language-server harness of the speed studies: a server process driven over
stdio (JSON-RPC with Content-Length framing, :class:`LspProcess`), the client
side VS Code's markdown server needs (``markdown/parse``, ``markdown/fs/*``:
:class:`MarkdownClient`), and the commands that start each server. Used by
:mod:`benchmarks.lsp_speed` and :mod:`benchmarks.bigvault`."""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .data import REPO

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
