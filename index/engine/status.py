"""A folder's state (:class:`FolderState`), several folders' one state
(:func:`overall_state`) and what every front end reports of an index
(:class:`Status`): the words and the fields every front end shows, in one place.

State of one folder: ``starting`` → ``indexing`` → ``ready`` (hybrid) or
``lexical-only`` (the model cannot be used), or ``error`` (the index cannot be
opened, or indexing failed); see :mod:`.folder`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


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


# The fields of :class:`Status` the VS Code client reads (its ``StatusResponse``
# in vscode-client/src/extension.ts; tests/test_status.py holds the two together).
CLIENT_FIELDS = (
    "state",
    "files",
    "chunks",
    "window_fit",
    "model",
    "pending_embeds",
    "message",
    "index_path",
)

# What a folder adds to its index's status (:meth:`Folder.status`); an index's
# own status (:meth:`Engine.status`) leaves them None and out of its JSON.
FOLDER_FIELDS = ("window_fit", "embedded_total", "state", "message")


@dataclass
class Status:
    """What an index holds and where it is, as every front end reports it:
    :meth:`Engine.status` fills the index's fields, :meth:`Folder.status` adds
    the folder's (:data:`FOLDER_FIELDS`), :func:`.folders.summary` sums several
    folders' into one. :meth:`as_json` is what the command line prints and the
    servers serialise from; the VS Code client reads :data:`CLIENT_FIELDS`."""

    root: str
    index_path: str
    index_location: str | None = None  # "cache", "workspace" or "explicit"
    model: str = ""
    model_loaded: bool = False
    model_backend: str | None = None
    model_backend_note: str | None = None  # why not the backend asked for
    model_error: str | None = None
    window: int = 0  # the model's window, in tokens
    pending_embeds: int = 0  # texts (chunks, passages) waiting for a vector
    precision: str | None = None
    moving_vectors: int = 0  # texts waiting for the new precision (0: no move)
    reranker: dict[str, Any] | None = None  # :meth:`Reranker.stats`
    files: int = 0
    chunks: int = 0
    sections: int = 0
    passages: int = 0
    # files the include globs want that .gitignore, .ignore or .mdseekignore leave out
    ignored_files: int = 0
    ignored_by: dict[str, int] = field(default_factory=dict)
    # files found but not indexed: not text (binary, or mostly invalid UTF-8): {path, why}
    skipped: list[dict[str, str]] = field(default_factory=list)
    # the folder's (:data:`FOLDER_FIELDS`)
    window_fit: float | None = None  # share of chunks whose text fits the model's window
    embedded_total: int | None = None  # texts this process embedded
    state: FolderState | None = None
    message: str | None = None  # why not ready (an error, lexical only)

    def as_json(self) -> dict[str, Any]:
        """The fields by name (the folder's only in a folder's status)."""
        out = dataclasses.asdict(self)
        if self.state is None:
            for name in FOLDER_FIELDS:
                del out[name]
        return out
