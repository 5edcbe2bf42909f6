"""Opening one folder's Engine, for every front end: the options
(:class:`EngineOptions`), one error mapping (:class:`OpenError`, in one line)
and one model fallback (a model that cannot be used: the bundled default, said
in a note).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ..model.embed import EmbedSettings
from ..model.model import ModelUnavailable
from ..model.rerank import Reranker
from ..store.adopt import trusted
from ..store.location import IndexFileError, locate
from ..store.store import read_meta
from ..text.files import FileFilter, filter_from_spec
from .engine import Engine

log = logging.getLogger(__name__)


class OpenError(Exception):
    """The folder's index cannot be opened; ``str()`` is the one-line message."""


@dataclass(frozen=True)
class EngineOptions:
    index_path: str | Path | None = None  # None: the default location (see index.location)
    model: str | None = None  # None: the bundled default
    file_filter: FileFilter | None = None
    embed: EmbedSettings | None = None
    check_index: bool = True  # SQLite's quick_check on open (a one-shot search skips it)
    # A model that cannot be used: the bundled default instead, said in a note
    # (servers, where the model comes from a setting and answers must go on);
    # False: the engine's own fallback, lexical search only (the command line).
    fallback: bool = True
    reranker: Reranker | None = None


def open_engine(root: Path, options: EngineOptions) -> tuple[Engine, list[str]]:
    """The folder's Engine and what the user should hear about opening it (a
    file set aside, a migration, the model fallback); OpenError in one line."""
    try:
        eng = _engine(root, options, options.model)
        note = None
        if options.fallback and options.model:
            problem: Exception | None = None
            try:
                eng.models.chunker  # noqa: B018 - loads the model's tokenizer: proves the model exists
                problem = eng.models.embedder.error  # the engine fell back to the default tokenizer
            except ModelUnavailable as exc:
                problem = exc
            if problem is not None:
                eng.close()
                note = f"model {options.model!r} cannot be used ({problem}); using the bundled default model"
                log.warning("%s", note)
                eng = _engine(root, options, None)
                eng.models.chunker  # noqa: B018
    except IndexFileError as exc:  # says which file and what to do
        raise OpenError(str(exc)) from None
    except (OSError, sqlite3.Error, ModelUnavailable) as exc:
        raise OpenError(f"cannot open the index of {root}: {exc}") from None
    eng.searcher.reranker = options.reranker
    return eng, [*eng.notices, *([note] if note else [])]


def _engine(root: Path, o: EngineOptions, model: str | None) -> Engine:
    return Engine(root, index_path=o.index_path, model=model, file_filter=o.file_filter,
                  embed=o.embed, check_index=o.check_index)  # fmt: skip


def stored_filter(root: Path, index_path: str | Path | None = None) -> FileFilter | None:
    """The file filter a folder's index was last built with, read without
    opening it (None: no index, it never said, or a workspace index not made
    here, which says nothing that counts: it is read again)."""
    loc = locate(root.resolve(), index_path)
    try:
        raw = read_meta(loc.path, "file_filter") if trusted(loc) else None
        return filter_from_spec(json.loads(raw)) if raw else None
    except ValueError:
        return None
