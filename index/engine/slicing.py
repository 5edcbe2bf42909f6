"""What a folder's sliced indexing (:class:`~.folder.Folder`) shares with no
one else: the model loaded once for several folders, in the background while
the files are read, and a slice's progress told as the folder's.

Owns: the one lock around loading a model, and the progress arithmetic.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from .engine import Engine, IndexReport

Progress = Callable[[str, int, int], None]

_MODEL_LOAD = threading.Lock()  # several folders share one model: load it once


def load_model(eng: Engine) -> bool:
    with _MODEL_LOAD:
        return eng.models.embedder.available()


def preload(eng: Engine | None) -> None:
    """Start loading the model in the background, while the files are read."""
    if eng is not None and not eng.models.embedder.loaded and eng.models.embedder.error is None:
        threading.Thread(
            target=load_model, args=(eng,), name="mdseek-model-load", daemon=True
        ).start()


def ensure_model(eng: Engine, progress: Progress | None) -> None:
    """The model loaded now (said as the ``model`` stage), unless it is or cannot be."""
    if not eng.models.embedder.loaded and eng.models.embedder.error is None:
        if progress:
            progress("model", 0, 1)
        load_model(eng)


def read_all(
    eng: Engine,
    own: Callable[..., Any],
    first: list[str],
    size: int,
    between: Callable[[IndexReport], None],
    progress: Progress | None,
) -> IndexReport:
    """Every file read, chunked and written, ``size`` files per job run by ``own``
    (the folder's writer; the files in ``first`` first), ``between`` called after
    each slice; the report, timed."""
    t0 = time.perf_counter()
    rep = IndexReport()
    reading = own(eng.start_reading, rep, first)
    while own(eng.read_next, reading, size, rep, progress):
        between(rep)
    own(eng.finish_reading, rep)
    rep.seconds = time.perf_counter() - t0
    return rep


def folder_progress(progress: Progress | None, total: int, rep: IndexReport) -> Progress:
    """A slice's progress (:meth:`Engine.embed_next`'s) as the folder's: one count
    of texts, ``total`` of them, from ``rep.embedded`` as it is now."""
    start = rep.embedded
    chunks = [0]  # chunks of the slice being embedded (they come before its passages)

    def overall(stage: str, done: int, n: int) -> None:
        if progress is None:
            return
        if stage == "embed":
            chunks[0] = n
            progress(stage, min(total, rep.embedded - start + done), total)
        elif stage == "tokens":
            return  # the slice's, not the folder's
        elif stage == "passages":  # one count of texts for the folder
            if done:
                progress("embed", min(total, rep.embedded - start + chunks[0] + done), total)
        else:
            progress(stage, done, n)

    return overall
