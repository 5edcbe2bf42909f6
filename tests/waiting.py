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
