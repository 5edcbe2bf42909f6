"""Threads by demand: bulk embedding on every core while nobody waits, one
thread as soon as a request (a search, a save) is in flight.

ONNX Runtime fixes a session's threads when it opens, so the bulk embedder
keeps two sessions of the same model (one thread, every core) and asks
:meth:`Demand.bulk_threads` before each small batch (:data:`BULK_STEP` texts,
a fraction of a second): a query that arrives mid-index competes with one
bulk thread for at most one batch, and the bulk goes back to every core
:data:`QUIET` seconds after the last request ends. Queries always run on
their own session of :func:`~mdseek.index.model.onnx_encoder.default_threads`
threads. A ``threads`` setting other than 0 fixes the count instead.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

BULK_NICE = 10  # the bulk thread's nice value (Linux: per thread): a request's thread comes first
QUIET = 0.5  # seconds after the last request before bulk embedding takes every core again
BULK_STEP = 8  # texts per bulk model call while threads follow demand (one batch)


def all_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Demand:
    """Requests in flight in this process (one per process: :data:`DEMAND`)."""

    def __init__(self, quiet: float = QUIET) -> None:
        self.quiet = quiet
        self._lock = threading.Lock()
        self._waiting = 0
        self._last = float("-inf")  # when the last request ended (monotonic)

    @contextmanager
    def request(self) -> Iterator[None]:
        """Around a request's work: bulk embedding drops to one thread meanwhile."""
        with self._lock:
            self._waiting += 1
        try:
            yield
        finally:
            with self._lock:
                self._waiting -= 1
                self._last = time.monotonic()

    def touch(self) -> None:
        """A request that did its part at once (a save handed to the writer)."""
        with self._lock:
            self._last = time.monotonic()

    def busy(self) -> bool:
        with self._lock:
            return self._waiting > 0 or time.monotonic() - self._last < self.quiet

    def bulk_threads(self, cores: int | None = None) -> int:
        """Threads for the next bulk batch: every core while idle, else one."""
        return 1 if self.busy() else (cores or all_cores())


DEMAND = Demand()


_lowered = threading.local()


def background_priority() -> bool:
    """Lower the calling thread's CPU priority (nice :data:`BULK_NICE`) once,
    so the OS gives a request's thread the core first; the ONNX worker threads
    of sessions it opens afterwards inherit it. Linux keeps nice per thread;
    elsewhere, or if refused, nothing changes (False). A thread cannot raise
    its priority back: only :func:`in_background`'s thread calls this."""
    if getattr(_lowered, "done", False):
        return True
    try:
        tid = threading.get_native_id()
        now = os.getpriority(os.PRIO_PROCESS, tid)
        if now < BULK_NICE:
            os.setpriority(os.PRIO_PROCESS, tid, BULK_NICE)
    except (AttributeError, OSError):
        return False
    _lowered.done = True
    return True


_bulk: ThreadPoolExecutor | None = None
_bulk_lock = threading.Lock()


def in_background(fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` on the bulk model thread (one per process, of lower
    priority: :func:`background_priority`), waited for. Only the model's work
    goes there: the caller (the index's writer) keeps its own priority, so a
    request waiting for a lock the writer holds is not kept waiting longer."""
    global _bulk
    with _bulk_lock:
        if _bulk is None:
            _bulk = ThreadPoolExecutor(
                1, thread_name_prefix="mdseek-bulk-model", initializer=background_priority
            )
        pool = _bulk
    return pool.submit(fn, *args).result()
