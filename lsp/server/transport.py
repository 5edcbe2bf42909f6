"""The wire: LSP over stdio that never leaves the server deaf or a request unanswered.

pygls 2 reads stdin with a strict loop (``pygls.io_.run_async``) and structures
every message in a JSON hook. Three gaps follow, closed here by a subclass of
its protocol and our own read loop (nothing in pygls is patched):

* Framing. A header it cannot parse (``Content-Length: banana``) leaves it
  waiting for a header block that never comes: alive and deaf. :func:`read_loop`
  logs one line and resynchronises on the next ``Content-Length`` header (a
  JSON body holds no raw line break, so the next header ends the next line).
* Invalid params. A request whose params do not fit the method's type fails in
  the JSON hook, before it has an id, so no answer is ever sent and the client
  waits forever. Here it gets ``-32602 Invalid params`` with a one-line message;
  a request that leaves ``params`` out (legal JSON-RPC) is served when the
  method takes none (``shutdown``, ``mdseek/status``) and otherwise gets
  ``-32602`` saying the method needs them;
  a notification like it is logged in one line and dropped; a response from the
  client that does not fit (``workspace/configuration`` answered with ``null``)
  is handed over untyped, so the request waiting for it still finishes.
* Errors. An exception anywhere in dispatching a request (the handler, sync or
  async, or writing its result) is answered with ``-32603`` and a one-line
  message, and the server keeps serving; the traceback goes to the debug log,
  never into the answer's ``data``. A request after ``shutdown`` is answered
  with ``-32600`` (pygls drops it).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import re
import threading
from typing import Any

import attrs
import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcMethodNotFound
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)
from pygls.protocol.json_rpc import RPCMessage

log = logging.getLogger("mdseek.lsp")

# "Content-Length: N" at the end of a line: also after the garbage of a message
# whose own header was unreadable (its body has no line break before the next header).
CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)[ \t]*\r?\n$", re.IGNORECASE)
OTHER_HEADER = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*[ \t]*:.*\r?\n?$")
MAX_MESSAGE = 256 * 1024 * 1024  # bytes: a larger Content-Length is a framing error

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class BadMessage(Exception):
    """A message that cannot be handled; answered with ``code`` if it has an id."""

    def __init__(self, code: int, message: str, msg_id: Any = None, method: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.msg_id = msg_id
        self.method = method


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(exc: Exception) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(exc))
    return f"{type(exc).__name__}: {exc}"


class MdseekProtocol(LanguageServerProtocol):
    """pygls' language server protocol, with structuring that reports what is
    wrong instead of dropping the message, and error answers without tracebacks."""

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """A cancel for a request already answered (or never seen) is normal
        (a client cancels what it no longer waits for, racing the answer):
        logged at debug level, not as pygls' warning on stderr."""
        if msg_id not in self._request_futures:
            log.debug("$/cancelRequest for %r: already answered or unknown", msg_id)
            return
        super()._handle_cancel_notification(msg_id)

    def structure_message(self, data: dict[str, Any]) -> Any:  # type: ignore[override]
        if not isinstance(data, dict) or data.get("jsonrpc") != self.VERSION:
            raise BadMessage(
                INVALID_REQUEST,
                "Invalid request: not a JSON-RPC 2.0 message",
                data.get("id") if isinstance(data, dict) else None,
            )
        msg_id = data.get("id")
        method = data.get("method")
        if not isinstance(msg_id, int | str | None) or isinstance(msg_id, bool):
            raise BadMessage(INVALID_REQUEST, "Invalid request: id must be a number or a string")
        if method is not None and not isinstance(method, str):
            raise BadMessage(INVALID_REQUEST, "Invalid request: method must be a string", msg_id)
        if "method" not in data:
            return self._structure_answer(data, msg_id)
        known = self.get_message_type(method)
        if "params" not in data and "id" in data:
            data = self._without_params(data, known)
        try:
            cls = known or (JsonRPCRequestMessage if "id" in data else JsonRPCNotification)
            return self._converter.structure(data, cls)
        except Exception as exc:
            what = _one_line(_describe(exc))
            raise BadMessage(
                INVALID_PARAMS, f"Invalid params for {method}: {what}", msg_id, method
            ) from None

    @staticmethod
    def _without_params(data: dict[str, Any], known: type | None) -> dict[str, Any]:
        """A request that leaves ``params`` out (JSON-RPC allows it): served when
        the method takes none (LSP's ``shutdown``; mdseek's own requests, whose
        params are all optional), else -32602 saying that the method needs them."""
        if known is None:
            return {**data, "params": None}  # mdseek/*: the handler checks what it needs
        field = attrs.fields_dict(known).get("params") if attrs.has(known) else None
        if field is None or field.default is not attrs.NOTHING:
            return data
        method = data["method"]
        raise BadMessage(
            INVALID_PARAMS,
            f"Invalid params for {method}: the request has no params, and {method} needs them",
            data.get("id"),
            method,
        )

    def _structure_answer(self, data: dict[str, Any], msg_id: Any) -> Any:
        """The client's answer to one of our requests. One that does not fit its
        type (``workspace/configuration`` answered with ``null``) is handed over
        untyped, or as an empty result: the request waiting for it must finish."""
        typed = self._result_types.pop(msg_id, None) or JsonRPCResponseMessage
        try:
            if "error" in data:
                return self._converter.structure(data, types.ResponseErrorMessage)
            return self._converter.structure(data, typed)
        except Exception as exc:
            log.warning(
                "answer %s from the client does not fit: %s", msg_id, _one_line(_describe(exc))
            )
        try:
            return self._converter.structure(data, JsonRPCResponseMessage)
        except Exception:
            return JsonRPCResponseMessage(id=msg_id, result=None, jsonrpc=self.VERSION)

    def handle_body(self, body: bytes) -> None:
        """Parse, structure and dispatch one message body; answer what cannot be handled."""
        try:
            try:
                data = json.loads(body)
            except (ValueError, RecursionError) as exc:  # also invalid UTF-8, absurd nesting
                raise BadMessage(PARSE_ERROR, f"Parse error: {_one_line(str(exc), 120)}") from None
            message = self.structure_message(data)
        except BadMessage as bad:
            self._answer_bad(bad)
            return
        self.handle_message(message)

    def _answer_bad(self, bad: BadMessage) -> None:
        if bad.msg_id is None and bad.method is not None:  # a notification: nobody to answer
            log.warning("ignoring %s", _one_line(bad.message))
            return
        log.warning("answering %s with error %d: %s", bad.msg_id, bad.code, _one_line(bad.message))
        # Written as a dict: lsprotocol would drop an "id" of null, which JSON-RPC requires.
        error = {"code": bad.code, "message": bad.message}
        self._send_data({"jsonrpc": self.VERSION, "id": bad.msg_id, "error": error})

    def _answer_error(self, msg_id: Any, exc: BaseException) -> None:
        """Answer request ``msg_id`` with ``exc`` as a one-line error (-32603 unless
        it is a JSON-RPC error); the traceback goes to the debug log."""
        self._request_futures.pop(msg_id, None)
        if isinstance(exc, JsonRpcException):
            error = types.ResponseError(code=exc.code, message=_one_line(exc.message))
        else:
            what = _describe(exc) if isinstance(exc, Exception) else type(exc).__name__
            error = types.ResponseError(code=INTERNAL_ERROR, message=_one_line(what))
        log.error("request %s failed: %s", msg_id, error.message)
        log.debug("request %s failed", msg_id, exc_info=exc)
        self._send_response(msg_id, error=error)

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        """Dispatch a request; whatever its handler raises (before or after it
        yields) is answered, never only logged."""
        try:
            handler = self._get_handler(method_name)
            self._ctx_msg_id.set(msg_id)
            self._execute_handler(
                msg_id=msg_id,
                handler=handler,
                args=(params,),
                callback=functools.partial(self._send_handler_result, msg_id=msg_id),
            )
        except JsonRpcMethodNotFound as exc:
            log.warning("answering %s: unknown method %s", msg_id, _one_line(method_name, 100))
            self._send_response(msg_id, error=exc.to_response_error())
        except Exception as exc:
            self._answer_error(msg_id, exc)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        """A handler's answer; a failure (of the handler, or of writing its result)
        becomes a one-line error (traceback in the debug log)."""
        if future.cancelled() or future.exception() is None:
            try:
                super()._send_handler_result(future, msg_id=msg_id)
            except Exception as exc:  # a result that cannot be written
                self._answer_error(msg_id, exc)
            return
        self._answer_error(msg_id, future.exception())

    def _send_data(self, data: Any) -> None:
        """Write one message. pygls logs a message it cannot write and sends nothing;
        a result that cannot be written is answered with an error here instead."""
        if not data:
            return
        if self.writer is None:
            log.error("cannot send a message: no transport")
            return
        try:
            body = json.dumps(data, default=self._serialize_message)
        except Exception as exc:
            get = data.get if isinstance(data, dict) else lambda k: getattr(data, k, None)
            if get("method") is None and get("id") is not None and get("error") is None:
                self._answer_error(get("id"), exc)  # a result that is not JSON
            else:
                log.error("cannot write a message: %s", _one_line(_describe(exc)))
            return
        raw = body.encode(self.CHARSET)
        if self._include_headers:
            head = f"Content-Length: {len(raw)}\r\n"
            head += f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            raw = head.encode(self.CHARSET) + raw
        res = self.writer.write(raw)
        if inspect.isawaitable(res):
            asyncio.ensure_future(res)

    def _check_handler_result(self, future: Any) -> None:
        """A notification handler's failure: one log line (no pop-up for the user,
        who did nothing wrong; the traceback goes to the debug log)."""
        if not future.cancelled() and (exc := future.exception()) is not None:
            log.error("handling a notification failed: %s", _one_line(_describe(exc)))
            log.debug("handling a notification failed", exc_info=exc)

    def handle_message(self, message: RPCMessage) -> None:
        method, msg_id = getattr(message, "method", None), getattr(message, "id", None)
        is_request = method is not None and msg_id is not None
        if is_request and self._shutdown and method != "exit":
            # pygls drops it; the LSP asks for an answer (InvalidRequest).
            error = {"code": INVALID_REQUEST, "message": "the server is shutting down"}
            self._send_data({"jsonrpc": self.VERSION, "id": msg_id, "error": error})
            return
        try:
            super().handle_message(message)
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # never let one message stop the read loop
            if is_request:
                self._answer_error(msg_id, exc)
                return
            log.error("cannot handle a message: %s", _one_line(_describe(exc)))
            log.debug("cannot handle a message", exc_info=exc)


async def read_loop(reader: Any, protocol: MdseekProtocol, stop: threading.Event) -> None:
    """Read framed messages until EOF (or ``stop``): resynchronising after a bad
    header, and handing each body to :meth:`MdseekProtocol.handle_body`."""
    length: int | None = None
    junk = False  # inside a stretch of unreadable bytes (logged once per stretch)
    while not stop.is_set():
        line = await reader.readline()
        if not line:
            return
        m = CONTENT_LENGTH.search(line)
        if m:
            if junk or m.start() > 0:
                log.info("resynchronised on a Content-Length header")
            junk = False
            n = int(m.group(1))
            if n > MAX_MESSAGE:
                log.warning(
                    "framing error: Content-Length %d is too large; skipping to the next header", n
                )
                junk, length = True, None
            else:
                length = n
            continue
        if line.strip() == b"":
            if length is None:
                if not junk:
                    log.warning(
                        "framing error: a header block without a valid Content-Length; "
                        "skipping to the next header"
                    )
                    junk = True
                continue
            body = await reader.readexactly(length)
            if len(body) < length:
                return  # EOF inside a body
            length = None
            protocol.handle_body(body)
            continue
        if OTHER_HEADER.match(line) and not junk:
            continue  # Content-Type and the like
        if not junk:
            log.warning(
                "framing error: unreadable header %r; skipping to the next header",
                _one_line(line[:80].decode("utf-8", "replace"), 100),
            )
            junk, length = True, None


class StdinReader:
    """Blocking reads of binary stdin in a worker thread, lines capped in length
    (a megabyte of garbage without a line break is read in pieces, not at once)."""

    MAX_LINE = 64 * 1024

    def __init__(self, stdin: Any, executor: Any):
        self.stdin = stdin
        self.executor = executor

    def readline(self) -> Any:
        return asyncio.get_running_loop().run_in_executor(
            self.executor, self.stdin.readline, self.MAX_LINE
        )

    def readexactly(self, n: int) -> Any:
        return asyncio.get_running_loop().run_in_executor(self.executor, self.stdin.read, n)


def serve_stdio(server: Any, stdin: Any, stdout: Any) -> None:
    """Run ``server`` (a pygls LanguageServer using :class:`MdseekProtocol`) on
    binary stdin/stdout until EOF or ``exit``."""
    from pygls.io_ import StdoutWriter

    server._stop_event = stop = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(read_loop(StdinReader(stdin, server.thread_pool), server.protocol, stop))
    except BrokenPipeError:
        log.error("the connection to the client is lost")
    except (KeyboardInterrupt, SystemExit):
        pass
