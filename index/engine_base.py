"""What every part of the engine shares: one folder, its index file, its model
(tokenizer and chunker), the lock that serialises writes, the cancel flag,
the ranking settings, and the report of an indexing run.

:class:`engine.Engine` is assembled from one class per job on top of
:class:`EngineBase`; each part sets up its own state in its ``_init_*``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from . import retrieve
from .adopt import open_index
from .chunk import Chunker
from .embed import PRECISIONS, Embedder, EmbedSettings
from .files import FileFilter, relpath
from .location import locate, prepare
from .model import (
    ModelTokenizer,
    ModelUnavailable,
    default_model_path,
    load_tokenizer,
    minus_prompt,
)
from .prune import prune_daily
from .requests import filter_from_spec
from .rerank import Reranker
from .store import Store

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (stage, done, total)
PRECISION_KEY = "precision"  # the meta row: the precision last asked for


@dataclass
class IndexReport:
    files: int = 0  # files in the workspace that are indexed
    indexed: int = 0  # files (re)chunked this run
    unchanged: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    chunks: int = 0  # chunks in the index after the run
    chunks_written: int = 0  # chunks (re)written this run
    embedded: int = 0  # texts embedded this run
    pending: int = 0  # chunks still without a vector
    seconds: float = 0.0
    embed_seconds: float = 0.0
    chunk_seconds: float = 0.0  # parsing and chunking
    write_seconds: float = 0.0  # SQLite writes of documents
    lexical_only_reason: str | None = None
    interrupted: bool = False  # embedding was cancelled; the rest is pending
    lock_wait_seconds: float = 0.0  # waited for another process embedding into this index
    vectors_taken: int = 0  # vectors taken from a team's vectors file (Engine.index(vectors=...))

    def to_dict(self) -> dict:
        return asdict(self)


class EngineBase:
    """One folder, its index file and its model: the state every part reads."""

    def __init__(
        self,
        root: str | Path,
        index_path: str | Path | None = None,
        model: str | None = None,
        file_filter: FileFilter | None = None,
        chunk_budget: int | None = None,
        chunk_floor: int | None = None,
        embed: EmbedSettings | None = None,
        check_index: bool = True,
        passage_words: int | None = None,
    ):
        """``check_index``: SQLite's quick_check on open (see :class:`Store`; ~9 ms
        at 2k chunks, 0.5-1.7 s at 100k). A one-shot search skips it and says
        how to recover if it meets damage (:func:`store.is_damage`)."""
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"{self.root} is not a folder")
        self.location = locate(self.root, index_path)
        prepare(self.location)  # no symlinks; a private folder
        if self.location.kind == "cache":
            prune_daily()  # indexes of long-missing folders, once a day, quietly
        self.index_path = self.location.path
        self.filter = file_filter or FileFilter()
        self.embedder = Embedder(model, settings=embed)
        self.reranker: Reranker | None = None  # an optional second stage (index/rerank.py)
        self._chunk_budget = chunk_budget
        self._chunk_floor = chunk_floor
        self._passage_words = passage_words  # None: chunk.PASSAGE_WORDS; 0: no passages
        self._chunker: Chunker | None = None
        loc = self.location
        # A workspace index made elsewhere is set aside and read again (adopt.py).
        self.store, adopted, self._claim = open_index(
            loc, lambda: Store(self.index_path, recover=loc.owned, check=check_index)
        )
        # What the user should hear about opening the index (a file set aside, a migration).
        self.notices: list[str] = [n for n in (loc.notice, adopted, self.store.notice) if n]
        self.cancelled = threading.Event()  # set by cancel(): embedding stops between batches
        self._write = threading.RLock()
        self.ranking = retrieve.DEFAULT  # fusion and document-context settings
        self._rows = 0
        self._count_version: int | None = None  # data_version the chunk count reflects
        self._choose_precision(model)
        self._init_parts()

    def _choose_precision(self, model: str | None) -> None:
        """The precision of the index's vectors: asked for (flag, variable,
        setting: remembered in the index, :data:`PRECISION_KEY`), else the one
        the index remembers, else the model's default. An index holding vectors
        of the other precision is moved (:mod:`precision_move`): ``mover``
        makes the new vectors while the old ones serve."""
        emb = self.embedder
        self.mover: Embedder | None = None
        # What finish_reading records: only a precision asked for now.
        self.precision_asked = emb.precision if emb.precision_asked else None
        if not emb.precision_asked:
            raw = self.store.get_meta(PRECISION_KEY)  # the store is ours here (adopt.open_index)
            if raw is not None and raw not in PRECISIONS:
                log.warning(
                    "this index remembers an unknown precision (%r); using the default", raw[:20]
                )
            elif raw is not None and raw != emb.precision:
                emb = self.embedder = Embedder(model, settings=replace(emb.settings, precision=raw))
        other = "fp32" if emb.precision == "int8" else "int8"
        if self.store.has_vectors(emb.id_for(other)):
            self.mover = emb
            self.embedder = Embedder(model, settings=replace(emb.settings, precision=other))

    def _init_parts(self) -> None:
        """Each part's own state: a part overrides this, calling ``super()`` first."""

    def stored_filter(self) -> FileFilter | None:
        """The filter the index was last built with (None: never said, or unreadable)."""
        raw = self.store.get_meta("file_filter")
        try:
            return filter_from_spec(json.loads(raw)) if raw else None
        except ValueError:
            return None

    def cancel(self) -> None:
        """Stop embedding at the next batch boundary (for good: the engine is closing)."""
        self.cancelled.set()

    # -- model-dependent parts ----------------------------------------------

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    @property
    def tokenizer(self) -> ModelTokenizer:
        """The model's tokenizer; if the model cannot be loaded, the bundled
        default's (so chunking and lexical search still work), said once."""
        try:
            return minus_prompt(
                load_tokenizer(self.embedder.resolved), self.embedder.prompts.document
            )
        except ModelUnavailable as exc:
            if self.embedder.error is None:
                self.embedder._error = exc
                log.error(
                    "%s; chunking with the bundled default tokenizer, lexical search only", exc
                )
            return load_tokenizer(str(default_model_path()))

    @property
    def chunker(self) -> Chunker:
        if self._chunker is None:
            kw = {} if self._chunk_floor is None else {"floor": self._chunk_floor}
            if self._passage_words is not None:
                kw["passage_words"] = self._passage_words
            self._chunker = Chunker(self.tokenizer, budget=self._chunk_budget, **kw)
        return self._chunker

    def rel(self, path: str | Path) -> str:
        p = Path(path)
        if p.is_absolute():
            return relpath(self.root, p)
        return p.as_posix()

    def _chunk_count(self) -> int:
        """Chunks in the index, recounted after a write (here or by another process)."""
        v = self.store.data_version()
        if self._count_version != v:
            self._rows = self.store.chunk_count()
            self._count_version = v
        return self._rows
