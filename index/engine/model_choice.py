"""Which model serves an index: the embedder whose vectors search reads (its
precision asked for, else remembered in the index, else the model's default),
the precision move's target embedder while an index's vectors move to the
other precision
(:mod:`precision_move`), and the tokenizer and chunker made from the model.

The engine's parts are handed this one :class:`ModelChoice` and read
:attr:`ModelChoice.embedder` when they need it: the move switches it once,
and every part sees the switch at once.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ..model.embed import Embedder
from ..model.model import ModelUnavailable, default_model_path
from ..model.tokenizer import ModelTokenizer, load_tokenizer, minus_prompt
from ..settings import PRECISIONS
from ..store.store import Store
from ..text.chunk import Chunker

log = logging.getLogger(__name__)

PRECISION_KEY = "precision"  # the meta row: the precision last asked for


class ModelChoice:
    """The embedder serving one index, the move's target, the tokenizer and
    the chunker (see the module)."""

    def __init__(
        self,
        model: str | None,
        embedder: Embedder,
        store: Store,
        chunk_budget: int | None = None,
        chunk_floor: int | None = None,
        passage_words: int | None = None,
        passage_split: int | None = None,
    ):
        """``embedder``: the one asked for (``model``, its settings); ``store``:
        the precision it remembers, the vectors it holds."""
        self.embedder = embedder
        self._model = model
        self.mover: Embedder | None = None  # the embedder of the precision moved to
        self._chunk_budget = chunk_budget
        self._chunk_floor = chunk_floor
        self._passage_words = passage_words  # None: passages.PASSAGE_WORDS; 0: no passages
        self._passage_split = passage_split  # None: passages.PASSAGE_SPLIT
        self._chunker: Chunker | None = None
        self._choose_precision(model, store)

    def _choose_precision(self, model: str | None, store: Store) -> None:
        """The precision of the index's vectors: asked for (flag, variable,
        setting: remembered in the index, :data:`PRECISION_KEY`), else the one
        the index remembers, else the model's default. An index holding vectors
        of the other precision is moved (:mod:`precision_move`): ``mover``
        makes the new vectors while the old ones serve."""
        emb = self.embedder
        # What finish_reading records: only a precision asked for now.
        self.precision_asked = emb.precision if emb.precision_asked else None
        if not emb.precision_asked:
            raw = store.get_meta(PRECISION_KEY)  # the store is ours here (adopt.open_index)
            if raw is not None and raw not in PRECISIONS:
                log.warning(
                    "this index remembers an unknown precision (%r); using the default", raw[:20]
                )
            elif raw is not None and raw != emb.precision:
                emb = self.embedder = Embedder(model, settings=replace(emb.settings, precision=raw))
        other = "fp32" if emb.precision == "int8" else "int8"
        if store.vectors.has_vectors(emb.id_for(other)):
            self.mover = emb
            # int8 vectors are queried on onnx (their only backend), whichever makes the new ones
            backend = "onnx" if other == "int8" else emb.settings.backend
            self.embedder = Embedder(
                model, settings=replace(emb.settings, precision=other, backend=backend)
            )

    def would_follow(self, file_model: str, precision: str, store: Store) -> bool:
        """Whether a team's vectors file of this model at the other precision
        decides the precision of this index (:meth:`follow_file`); changes nothing."""
        emb = self.embedder
        if (
            precision == emb.precision
            or self.precision_asked
            or self.mover is not None
            or emb.id_for(precision) != file_model  # another model, prompts or int8 recipe
            or store.get_meta(PRECISION_KEY) is not None
            or any(store.vectors.has_vectors(emb.id_for(p)) for p in PRECISIONS)
        ):
            return False
        try:
            replace(emb.settings, precision=precision)
        except ValueError:  # int8 on a torch backend asked for: the refusal stands
            return False
        return True

    def follow_file(self, file_model: str, precision: str, store: Store) -> bool:
        """A team's vectors file of this model at the other precision decides
        the precision of an index asked for none (now or before:
        :data:`PRECISION_KEY`) that holds no vectors of this model yet: the
        embedder becomes the file's precision, remembered in the index. Returns
        whether it did (else the file is refused as of another precision)."""
        if not self.would_follow(file_model, precision, store):
            return False
        emb = self.embedder
        settings = replace(emb.settings, precision=precision)
        self.embedder = Embedder(self._model, batch_size=emb.batch_size, settings=settings)
        store.set_meta(PRECISION_KEY, precision)
        return True

    @property
    def model_id(self) -> str:
        """The model id of the vectors search reads."""
        return self.embedder.model_id

    def switch(self) -> None:
        """The move is done: its target serves from now on."""
        if self.mover is not None:
            self.embedder, self.mover = self.mover, None

    def stop_move(self) -> None:
        """No move (its target cannot be used): the serving embedder stays."""
        self.mover = None

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
            if self._passage_split is not None:
                kw["passage_split"] = self._passage_split
            self._chunker = Chunker(self.tokenizer, budget=self._chunk_budget, **kw)
        return self._chunker
