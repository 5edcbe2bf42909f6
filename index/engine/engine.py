"""The engine: one workspace root, one index file, one model.

``Engine`` is what the command line, the language server and the MCP server
call. It holds its parts as named fields, each constructed once here and
handed what it needs (no part reads another's state):

  store         the index file and its tables (store.py)
  models        the serving embedder, the precision move's target, the
                tokenizer and chunker (model_choice.py)
  dense_side    the vector matrix and the query's vector (dense_side.py)
  lexical_side  query terms and BM25 from FTS5 or in-memory postings (lexical_side.py)
  queue         texts waiting for a vector, embedded in batches or slices,
                one process at a time (embed_queue.py, embed_lock.py)
  move          an index's vectors moved to the other precision while it serves (precision_move.py)
  reconciler    the index kept in line with the files (reconcile.py)
  searcher      search, fusion, snippets, explain, related (searcher.py)

The engine's verbs are its parts' own methods; what a part holds (the
embedder, the ranking, the reranker, the lexical postings ...) is read and set
on that part (``engine.models.embedder``, ``engine.searcher.ranking``), never
through the engine. The parts share only the engine's write lock and its
cancel flag.
"""

from __future__ import annotations

import atexit
import logging
import threading
import weakref
from pathlib import Path

from ..model.embed import Embedder, EmbedSettings
from ..store.adopt import open_index
from ..store.location import locate, prepare
from ..store.prune import prune_daily
from ..store.store import Store
from ..store.vectors_file import (
    ImportReport,
    VectorsRead,
    check_precision,
    read_precision,
    read_vectors,
)
from ..text.files import FileFilter, relpath
from .dense_side import DenseSide
from .embed_queue import EmbedQueue
from .lexical_side import LexicalSide
from .model_choice import ModelChoice
from .precision_move import PrecisionMove
from .reconcile import Reconciler
from .report import IndexReport, Progress
from .searcher import Searcher, SearchResponse, SearchResult
from .status import Status

log = logging.getLogger(__name__)

__all__ = ["Engine", "IndexReport", "Progress", "SearchResponse", "SearchResult"]


# Engines holding a workspace index, closed at exit when their owner did not
# (a CLI command returns without closing): the vouch records the files as the
# last writer left them (adopt.Claim.close), after the connections' checkpoint.
_HOLDING: weakref.WeakSet[Engine] = weakref.WeakSet()


@atexit.register
def _close_holding() -> None:
    for eng in list(_HOLDING):
        try:
            eng.close()
        except Exception as exc:  # at exit: say it, never raise
            log.debug("closing %s at exit: %s", eng.root, exc)


class Engine:
    """One folder, its index file and its model: reconcile with the files,
    embed, search, related, status. Open it with ``Engine(root)``."""

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
        passage_split: int | None = None,
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
        asked = Embedder(model, settings=embed)
        loc = self.location
        # A workspace index made elsewhere is set aside and read again (adopt.py).
        self.store, adopted, self._claim = open_index(
            loc, lambda: Store(self.index_path, recover=loc.owned, check=check_index)
        )
        self._closed = False
        if self._claim is not None:  # its vouch is recorded when it closes (adopt.Claim)
            _HOLDING.add(self)
        # What the user should hear about opening the index (a file set aside, a migration).
        self.notices: list[str] = [n for n in (loc.notice, adopted, self.store.notice) if n]
        self.cancelled = threading.Event()  # set by cancel(): embedding stops between batches
        write = threading.RLock()  # one write at a time (reconcile, vectors, the matrix)
        store = self.store
        self.models = ModelChoice(
            model, asked, store, chunk_budget, chunk_floor, passage_words, passage_split
        )
        self.dense_side = DenseSide(store.vectors, store.data_version, self.models)
        self.lexical_side = LexicalSide(store)
        self.queue = EmbedQueue(
            store, self.models, self.dense_side, self.index_path, self.cancelled, write
        )
        self.move = PrecisionMove(
            store.vectors, self.models, self.queue, self.dense_side, self.cancelled, write
        )
        self.reconciler = Reconciler(
            self.root,
            self.filter,
            store,
            self.models,
            (self.queue, self.move, self.dense_side, self.lexical_side),
            (self.read_vectors_file, self.seed_vectors),
            self.cancelled,
            write,
        )
        self.searcher = Searcher(
            self.root, store.chunks, self.models, self.dense_side, self.lexical_side
        )

        # The engine's verbs are its parts' own methods, bound here: one signature
        # each, in the part that owns the work (see the module's list of parts).
        self.cancel = self.cancelled.set
        self.index = self.reconciler.index
        self.start_reading = self.reconciler.start_reading
        self.read_next = self.reconciler.read_next
        self.finish_reading = self.reconciler.finish_reading
        self.index_file = self.reconciler.index_file
        self.embed_pending = self.queue.embed_pending
        self.embed_next = self.queue.embed_next
        self.embed_files = self.queue.embed_files
        self.export_vectors = self.queue.export_vectors
        self.move_next = self.move.next
        self.move_pending = self.move.pending
        self.kept_models = self.move.kept_models
        self.search = self.searcher.search
        self.related = self.searcher.related
        self.parse_query = self.searcher.parse_query
        self.candidates = self.searcher.candidates
        self.warm_up = self.searcher.warm_up
        self.query_vector = self.searcher.query_vector
        self.lexical_terms = self.lexical_side.terms
        self.build_lexical = self.lexical_side.build

    # -- the folder, the model --------------------------------------------------

    def rel(self, path: str | Path) -> str:
        p = Path(path)
        if p.is_absolute():
            return relpath(self.root, p)
        return p.as_posix()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.cancel()
        self.searcher.close()
        self.store.close()
        if self._claim is not None:
            self._claim.close()  # records the vouch; another process may adopt it now

    # -- vectors (embed_queue.py, precision_move.py) -------------------------------

    def read_vectors_file(self, path: str | Path) -> VectorsRead:
        """A team's vectors file read and checked against this index's
        precision, nothing changed: :meth:`index` reads it before any file, so
        a refused file leaves no trace (no chunk written, no precision
        remembered). Raises VectorsFileError (one line) for a file that is not
        one (before the model loads) or is refused."""
        p = Path(path)
        read = VectorsRead(p, read_vectors(p), read_precision(p))
        if not self.models.would_follow(read.data[0], read.precision, self.store):
            self._check_precision(read)
        return read

    def _check_precision(self, read: VectorsRead) -> None:
        """The same precision as the index (during a move, the target's), or one line naming both."""
        target = self.models.mover or self.models.embedder
        check_precision(read.path, read.data[0], read.precision, target.model_id)

    def seed_vectors(self, path: str | Path | VectorsRead) -> ImportReport:
        """Take the vectors of a file made by ``export_vectors`` (see
        :mod:`vectors_file`; ``path``, or the file :meth:`read_vectors_file`
        read) for the chunks still waiting for one: same model id, same
        dimension, finite, unit length; never any text. A file of the other
        precision decides an index's that was asked none and holds no vectors
        (``precision_followed``), else it is refused. Raises VectorsFileError
        (one line) for a file that is not one or is refused."""
        read = path if isinstance(path, VectorsRead) else self.read_vectors_file(path)
        # An index asked for no precision and holding no vectors takes the file's
        # (ModelChoice.follow_file); else the same precision as the index.
        followed = self.models.follow_file(read.data[0], read.precision, self.store)
        if followed:
            self.dense_side.reload()
        self._check_precision(read)
        if (
            self.models.mover is not None
        ):  # vectors for the move's target: the texts it still waits for
            return self.move.take_vectors(read.data)
        rep = self.queue.take_vectors(read.path, read.data)
        rep.precision_followed = read.precision if followed else None
        return rep

    # -- status --------------------------------------------------------------------

    def status(self) -> Status:
        """What the index holds and where it is (the folder's fields are
        :meth:`Folder.status`'s)."""
        counts = self.store.counts()
        emb = self.models.embedder
        err = emb.error
        ignored = self.reconciler.ignored()
        return Status(
            root=str(self.root),
            index_path=str(self.index_path),
            index_location=self.location.kind,
            model=self.models.model_id,
            model_loaded=emb.loaded,
            model_backend=emb.backend,
            model_backend_note=emb.fallback_reason,
            model_error=str(err) if err else None,
            window=self.models.tokenizer.window,
            pending_embeds=self.store.vectors.pending_count(self.models.model_id),
            precision=emb.precision,
            moving_vectors=self.move.pending(),
            reranker=self.searcher.reranker.stats() if self.searcher.reranker is not None else None,
            files=counts["files"],
            chunks=counts["chunks"],
            sections=counts["sections"],
            passages=counts["passages"],
            ignored_files=ignored["files"],
            ignored_by=ignored["by"],
            skipped=[{"path": p, "why": w} for p, w in sorted(self.reconciler.not_text().items())],
        )
