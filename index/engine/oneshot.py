"""The command line's one-shot work on a folder, behind :class:`~.folder.Folder`'s
verbs (:meth:`~.folder.Folder.open_now`, :meth:`~.folder.Folder.index_now`,
:meth:`~.folder.Folder.export_vectors`, :meth:`~.folder.Folder.where_ranked`):
a command opens the folder's index, brings it up to date in one go on its own
thread with its own progress bar, answers, and exits. No writer or reader
thread is involved: a Ctrl-C stops the command where it is, and the index
stays consistent (a write is all or nothing).

Owns: the order of that one go (files, then a team's vectors file, then the
vectors, then, when asked, the move to the other precision).
"""

from __future__ import annotations

from pathlib import Path

from .engine import Engine, IndexReport
from .slicing import Progress

MOVE_SLICE = 256  # texts per step of a precision move made in one go


def index_now(
    eng: Engine,
    progress: Progress | None = None,
    vectors: str | Path | None = None,
    move: bool = False,
) -> IndexReport:
    """Every file read and every missing vector made, on this thread
    (``vectors``: a team's vectors file taken first, VectorsFileError if it
    cannot be); ``move``: an index holding vectors of the other precision has
    them remade now, reported as ``embed`` progress."""
    rep = eng.index(progress=progress, vectors=vectors)
    if move and eng.models.mover is not None and not rep.lexical_only_reason:
        total = eng.move_pending()
        while left := eng.move_next(MOVE_SLICE, rep):
            if progress is not None:
                progress("embed", total - left, total)
    return rep
