"""A raw JSON-RPC client for the language server over stdio: the test writes the
bytes itself (bad framing, invalid params, odd strings) and reads framed
answers with timeouts. Requests from the server (configuration, registration,
progress) are answered with null so the server never waits on the test."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from sandbox import server_env

SERVER_CMD = [sys.executable, "-m", "mdseek", "serve", "--stdio"]


def frame(obj: Any) -> bytes:
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _log_beside() -> Path:
    fd, name = tempfile.mkstemp(prefix="mdseek-server-stderr-", suffix=".log")
    os.close(fd)
    return Path(name)


class RawServer:
    def __init__(
        self, cwd: Path, env: dict[str, str] | None = None, stderr_path: Path | None = None
    ):
        # Beside the served folder, never in it: the log is not the workspace's data.
        self.stderr_path = stderr_path or _log_beside()
        self._err = open(
            self.stderr_path, "wb"
        )  # a file: a chatty server never blocks on a full pipe
        full_env = server_env(**(env or {}))
        self.proc = subprocess.Popen(
            SERVER_CMD,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            cwd=cwd,
            env=full_env,
        )
        self.messages: queue.Queue[dict] = queue.Queue()
        self.notifications: list[dict] = []
        self.responses: dict[Any, dict] = {}
        self._cond = threading.Condition()
        self._next_id = 1000
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- wire ---------------------------------------------------------------------

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj: Any) -> None:
        self.send_raw(frame(obj))

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    with self._cond:
                        self._cond.notify_all()
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            body = out.read(length or 0)
            msg = json.loads(body)
            if "method" in msg and "id" in msg:  # a request from the server
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": self.answer(msg)})
            with self._cond:
                if "method" in msg:
                    self.notifications.append(msg)
                else:
                    self.responses[msg.get("id")] = msg
                self._cond.notify_all()

    def answer(self, msg: dict) -> Any:
        """The result sent back for a request from the server."""
        if msg["method"] == "workspace/configuration":
            return [None for _ in (msg.get("params") or {}).get("items", [])]
        return None

    # -- requests -----------------------------------------------------------------

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(
        self, method: str, params: Any = None, timeout: float = 10.0, **extra: Any
    ) -> dict | None:
        """Send a request; its response message, or None if none came within ``timeout``."""
        mid = self.next_id()
        msg = {"jsonrpc": "2.0", "id": mid, "method": method, **extra}
        if params is not None or "params" not in extra:
            msg["params"] = params
        self.send(msg)
        return self.wait_response(mid, timeout)

    def wait_response(self, mid: Any, timeout: float = 10.0) -> dict | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while mid not in self.responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None and not self._reader.is_alive():
                    return None
                self._cond.wait(min(left, 0.2))
            return self.responses.pop(mid)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_notification(
        self, method: str, timeout: float = 10.0, pred=lambda m: True
    ) -> dict | None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for m in self.notifications:
                    if m["method"] == method and pred(m):
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(min(left, 0.2))

    def initialize(self, root: Path, options: Any = None, timeout: float = 30.0) -> dict:
        res = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.resolve().as_uri(),
                "workspaceFolders": [{"uri": root.resolve().as_uri(), "name": root.name}],
                "capabilities": {
                    "window": {"showMessage": {}},
                    "workspace": {"configuration": True},
                },
                "initializationOptions": options,
            },
            timeout=timeout,
        )
        assert res is not None and "result" in res, res
        self.notify("initialized", {})
        return res["result"]

    def status(self, timeout: float = 10.0) -> dict:
        res = self.request("mdseek/status", {}, timeout=timeout)
        assert res is not None and "result" in res, res
        return res["result"]

    def wait_state(
        self, states: tuple[str, ...], timeout: float = 120.0, pred=lambda st: True
    ) -> dict:
        deadline = time.monotonic() + timeout
        st: dict = {}
        while time.monotonic() < deadline:
            st = self.status()
            if st["state"] in states and pred(st):
                return st
            time.sleep(0.05)
        raise AssertionError(f"state not in {states} after {timeout}s: {st}")

    # -- ending -------------------------------------------------------------------

    def wait_exit(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stderr(self) -> str:
        self._err.flush()
        return self.stderr_path.read_text(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()  # type: ignore[union-attr]
            except OSError:
                pass
        self._err.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
