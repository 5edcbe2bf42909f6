"""Talking to the client beyond answers: messages the user sees, what the
client says it supports, and the server's own background tasks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

log = logging.getLogger("mdseek.lsp")


def supports(server: LanguageServer, *attrs: str) -> bool:
    """Whether the client's capabilities have ``attrs`` (a path) set and truthy."""
    obj: Any = server.client_capabilities
    for a in attrs:
        obj = getattr(obj, a, None)
        if obj is None:
            return False
    return bool(obj)


def tell(
    server: LanguageServer, message: str, kind: types.MessageType = types.MessageType.Warning
) -> None:
    """One message the user sees (window/showMessage) and that is logged."""
    log.warning("%s", message)
    server.window_show_message(types.ShowMessageParams(type=kind, message=message))


class Tasks:
    """Background tasks kept alive until done; a failure is logged, never lost."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(self._log_error)
        return task

    @staticmethod
    def _log_error(task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())
