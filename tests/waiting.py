"""Waiting on state with a deadline, never on a sleep: poll ``probe`` until
``done(value)`` holds, and fail with the last value seen when time runs out."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    probe: Callable[[], T],
    done: Callable[[T], object] = bool,
    timeout: float = 30.0,
    every: float = 0.05,
    what: str = "",
) -> T:
    """The first value of ``probe()`` for which ``done`` is true (sync code)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if done(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what or 'state'} not reached after {timeout}s: {value!r}")
        time.sleep(every)


async def until(
    probe: Callable[[], Awaitable[T]],
    done: Callable[[T], object] = bool,
    timeout: float = 30.0,
    every: float = 0.05,
    what: str = "",
) -> T:
    """The first value of ``await probe()`` for which ``done`` is true (async tests)."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if done(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what or 'state'} not reached after {timeout}s: {value!r}")
        await asyncio.sleep(every)


async def mcp_ready(client, timeout: float = 120.0) -> dict:
    """An MCP client's server once its first reading is done (until then a
    search may answer by keywords only, and says so): its status."""
    st = await until(
        lambda: client.call_tool("status", {}),
        lambda st: (st.structured_content or {}).get("state") == "ready",
        timeout=timeout,
        what="the MCP server ready",
    )
    return st.structured_content
