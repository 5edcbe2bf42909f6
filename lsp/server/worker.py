"""Work whose cost grows with a document, off the event loop and cancellable.

:func:`off_loop` runs a function in a worker thread (asyncio's default
executor) so one huge file never holds up another file's request; when the
client cancels the request (``$/cancelRequest``, which cancels the handler's
task), the request's :class:`CancelToken` is set and the work stops at its next
:func:`checkpoint` (pygls then answers RequestCancelled). The token travels in a
context variable, so the functions in between need no extra argument.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from mdseek.index.api import Cancelled, CancelToken

T = TypeVar("T")

_TOKEN: contextvars.ContextVar[CancelToken | None] = contextvars.ContextVar(
    "mdseek_request_token", default=None
)


class Counts(Protocol):
    cancelled: int  # requests dropped because the client cancelled them


def checkpoint() -> None:
    """In work started by :func:`off_loop`: raise :class:`Cancelled` if its
    request was cancelled (elsewhere: nothing)."""
    token = _TOKEN.get()
    if token is not None:
        token.check()


async def off_loop(ws: Counts, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread, stopped at a :func:`checkpoint` once
    the request is cancelled (counted in ``ws.cancelled``)."""
    token = CancelToken()

    def run() -> T:
        _TOKEN.set(token)  # the thread runs in a copy of the caller's context
        return fn(*args)

    try:
        return await asyncio.to_thread(run)
    except (asyncio.CancelledError, Cancelled):
        token.cancelled = True
        ws.cancelled += 1
        raise asyncio.CancelledError() from None
