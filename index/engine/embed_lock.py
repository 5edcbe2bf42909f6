"""One process embeds into an index at a time: a lock file beside the index.
A second process waits (checking for cancellation), then embeds only what is
still missing; on a file system without locks, each embeds anyway."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..store.location import FILE_MODE
from .report import Progress

log = logging.getLogger(__name__)

LOCK_POLL = 0.2  # seconds between checks for cancellation while waiting for the embed lock


class EmbedLock:
    """The embed lock of one index: the file ``<index>.lock``."""

    def __init__(self, index_path: Path):
        self.index_path = index_path
        self._file_lock: Any = None  # see file
        self._file_lock_guard = threading.Lock()

    @property
    def file(self) -> Any:
        """One embedder per index across processes: a second one waits, then
        finds the vectors made (pending is re-read under the lock). Made on
        first use: a search that embeds nothing does not import filelock."""
        with self._file_lock_guard:
            if self._file_lock is None:
                from filelock import FileLock

                self._file_lock = FileLock(
                    str(self.index_path) + ".lock", mode=FILE_MODE, thread_local=False
                )
            return self._file_lock

    @contextmanager
    def turn(
        self,
        cancelled: threading.Event,
        progress: Progress | None,
        waited_for: Callable[[float], None],
    ) -> Iterator[bool]:
        """Hold the index's embed lock (waiting for another process if needed,
        ``waited_for`` told the seconds so far); yields False if ``cancelled``
        while waiting."""
        from filelock import Timeout

        t0 = time.perf_counter()
        locked = waited = False
        try:
            while not cancelled.is_set():
                try:
                    self.file.acquire(timeout=LOCK_POLL if waited else 0)
                    locked = True
                    break
                except Timeout:
                    if not waited:
                        waited = True
                        log.info("another process is embedding into %s; waiting", self.index_path)
                        if progress:
                            progress("wait", 0, 1)
                    waited_for(time.perf_counter() - t0)
                except OSError as exc:  # a file system without locks: embed anyway
                    log.warning(
                        "cannot lock %s (%s); embedding without it", self.file.lock_file, exc
                    )
                    break
            else:
                yield False
                return
            yield True
        finally:
            if locked:
                self.file.release()
