"""A folder's state (:class:`FolderState`) and several folders' one state
(:func:`overall_state`): the words every front end shows, in one place.

State of one folder: ``starting`` → ``indexing`` → ``ready`` (hybrid) or
``lexical-only`` (the model cannot be used), or ``error`` (the index cannot be
opened, or indexing failed); see :mod:`.folder`.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class FolderState(StrEnum):
    """Where a folder's index is in its life (a ``str``: JSON and the VS Code
    client read the value)."""

    STARTING = "starting"
    INDEXING = "indexing"
    READY = "ready"
    LEXICAL_ONLY = "lexical-only"
    ERROR = "error"
    NO_FOLDER = "no folder"  # several folders' state when there are none served (never ready)

    @property
    def busy(self) -> bool:
        """Still opening or reading: answers may miss files."""
        return self in (FolderState.STARTING, FolderState.INDEXING)


def overall_state(states: Iterable[FolderState]) -> FolderState:
    """One state for several folders: ``indexing`` while any is, ``ready`` when
    all are (or there are none), ``error`` when every one failed, else
    ``lexical-only`` (some answer by keywords only)."""
    s = {FolderState(x) for x in states}
    if any(x.busy for x in s):
        return FolderState.INDEXING
    if s <= {FolderState.READY}:
        return FolderState.READY
    if s == {FolderState.ERROR}:
        return FolderState.ERROR
    return FolderState.LEXICAL_ONLY
