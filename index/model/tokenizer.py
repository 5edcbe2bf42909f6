"""The model's tokenizer and window (:func:`load_tokenizer`): counting tokens
exactly as the model does, and each token's span (:class:`TokenSpans`).

The chunker sizes chunks in the model's own tokens, so it needs the model's
tokenizer and window (``max_seq_length``, special tokens included) but not the
weights: for a local sentence-transformers folder both are read from files
(``tokenizer.json``, ``sentence_bert_config.json``) with the fast ``tokenizers``
library, which costs milliseconds, not the seconds of loading torch. For a hub
name that is not a local folder we load the model through sentence-transformers
(the hub cache works offline; a name that is not cached fails with a clear error),
unless an ONNX export of it is cached (:mod:`mdseek.index.model.onnx_export`), whose
folder holds the tokenizer and window too.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from .model import _json, model_cache_dir, model_id
from .torch_loader import load_sentence_transformer

SPAN_SEGMENT = 8192
_LAST_BREAK = re.compile(r".*[\s\W]", re.DOTALL)  # greedy: up to the last break


def _segment_bounds(text: str, segment: int) -> list[tuple[int, int]]:
    """(start, end) pieces of ``text``, each at most about ``segment`` characters,
    cut after a newline, else after whitespace or punctuation within the last
    eighth of the piece, else anywhere."""
    n = len(text)
    out: list[tuple[int, int]] = []
    a = 0
    while a < n:
        if n - a <= segment:
            out.append((a, n))
            break
        limit = a + segment
        cut = text.rfind("\n", a, limit) + 1
        if cut <= a + segment // 2:
            m = _LAST_BREAK.match(text, limit - segment // 8, limit)
            cut = m.end() if m else limit
        out.append((a, cut))
        a = cut
    return out


@dataclass
class ModelTokenizer:
    """Counts tokens exactly as the embedding model does (special tokens included).
    A ``tokenizers`` file is read on first use (a search on an unchanged index
    needs the name and window, not the vocabulary)."""

    name: str
    window: int  # max_seq_length: tokens the model reads, specials included
    _source: Any  # the tokenizer, or (fast only) the path of its tokenizer.json
    _fast: bool
    _loaded: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def _tok(self) -> Any:
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    tok = self._source
                    if isinstance(tok, str):
                        from tokenizers import Tokenizer

                        tok = Tokenizer.from_file(tok)
                        tok.no_truncation()
                        tok.no_padding()
                    self._loaded = tok
        return self._loaded

    def count(self, text: str) -> int:
        if self._fast:
            return len(self._tok.encode(text))
        return len(self._tok(text, add_special_tokens=True, truncation=False)["input_ids"])

    def count_many(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        if self._fast:
            encode = getattr(self._tok, "encode_batch_fast", self._tok.encode_batch)  # no offsets
            out: list[int] = []
            for i in range(0, len(texts), 512):  # all encodings at once cost ~600 MB at 38k texts
                out += [len(e) for e in encode(texts[i : i + 512])]
            return out
        return [self.count(t) for t in texts]

    def special_overhead(self) -> int:
        """Tokens the model adds around any text ([CLS] ... [SEP])."""
        return self.count("")

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of each non-special token of ``text``."""
        if self._fast:
            enc = self._tok.encode(text, add_special_tokens=False)
            return [tuple(o) for o in enc.offsets]
        enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=True)
        return [tuple(o) for o in enc["offset_mapping"]]

    def _encode_spans(self, texts: list[str]) -> list[tuple[list, list]]:
        """(offsets, word ids) of the non-special tokens of each text."""
        if self._fast:
            encs = self._tok.encode_batch(texts, add_special_tokens=False)
            return [(e.offsets, e.word_ids) for e in encs]
        out = []
        for t in texts:
            enc = self._tok(t, add_special_tokens=False, return_offsets_mapping=True)
            try:
                words = enc.word_ids()
            except (AttributeError, ValueError):  # a slow tokenizer knows no words
                words = list(range(len(enc["offset_mapping"])))
            out.append((enc["offset_mapping"], words))
        return out

    def token_spans(self, text: str, segment: int = SPAN_SEGMENT) -> TokenSpans:
        """Character span of every non-special token of ``text`` and whether it
        starts a word (a pre-token: WordPiece's ``##`` pieces do not), from one
        tokenizer pass.

        The text is fed to the tokenizer in pieces of about ``segment`` characters
        cut at line ends (or, inside a longer line, after whitespace or
        punctuation when there is some near the limit), so memory stays
        proportional to the token count and no single call sees megabytes.
        Tokenizers that split words at whitespace and punctuation (WordPiece,
        and most others in practice) give the same tokens as one call over the
        whole text; where a piece boundary falls inside a word the spans there
        are close, not exact (callers verify what they keep with ``count``)."""
        bounds = _segment_bounds(text, segment)
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        heads: list[np.ndarray] = []
        for i in range(0, len(bounds), 8):  # small batches keep the offset lists small
            part = bounds[i : i + 8]
            texts = [text[a:b] for a, b in part]
            for (a, _), (offs, words) in zip(part, self._encode_spans(texts), strict=True):
                if not offs:
                    continue
                n = len(offs)
                flat = np.fromiter(chain.from_iterable(offs), dtype=np.int64, count=2 * n)
                arr = flat.reshape(-1, 2) + a
                starts.append(arr[:, 0])
                ends.append(arr[:, 1])
                w = np.fromiter((-1 if x is None else x for x in words), dtype=np.int64, count=n)
                head = np.ones(n, dtype=bool)
                head[1:] = w[1:] != w[:-1]
                heads.append(head)
        if not starts:
            return TokenSpans.empty()
        s = np.concatenate(starts)
        # Some tokenizers give a zero-width span to a token they invent; keep order.
        return TokenSpans(s, np.maximum(np.concatenate(ends), s), np.concatenate(heads))


def minus_prompt(tok: ModelTokenizer, prompt: str) -> ModelTokenizer:
    """``tok`` with its window shrunk by the tokens ``prompt`` adds before
    every text (chunks are sized so that prompt + chunk fits the window)."""
    if not prompt:
        return tok
    n = tok.count(prompt) - tok.special_overhead()
    return ModelTokenizer(tok.name, max(1, tok.window - n), tok._source, tok._fast, tok._loaded)


@dataclass(frozen=True)
class TokenSpans:
    """Tokens of a text from one pass: ``starts[i]:ends[i]`` is token i's
    character span; ``word_start[i]`` is False for a token that continues the
    previous token's word."""

    starts: np.ndarray  # int64
    ends: np.ndarray  # int64
    word_start: np.ndarray  # bool

    def __len__(self) -> int:
        return len(self.starts)

    @staticmethod
    def empty() -> TokenSpans:
        return TokenSpans(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, bool))

    def shifted(self, by: int) -> TokenSpans:
        return TokenSpans(self.starts + by, self.ends + by, self.word_start)

    @staticmethod
    def concat(parts: list[TokenSpans]) -> TokenSpans:
        if not parts:
            return TokenSpans.empty()
        return TokenSpans(
            np.concatenate([p.starts for p in parts]),
            np.concatenate([p.ends for p in parts]),
            np.concatenate([p.word_start for p in parts]),
        )


def _window_from_files(p: Path) -> int | None:
    """``max_seq_length`` as sentence-transformers reads it: from
    ``sentence_bert_config.json``, or (folders saved by sentence-transformers 6,
    which keep it there no more) the tokenizer's ``model_max_length``."""
    cfg = p / "sentence_bert_config.json"
    if cfg.exists():
        data = json.loads(cfg.read_text())
        if isinstance(data.get("max_seq_length"), int):
            return int(data["max_seq_length"])
        tok = _json(p / "tokenizer_config.json")
        n = tok.get("model_max_length") if isinstance(tok, dict) else None
        if isinstance(n, int) and 0 < n < 1_000_000 and "transformer_task" in data:
            return n
    return None


@lru_cache(maxsize=8)
def load_tokenizer(resolved: str) -> ModelTokenizer:
    p = Path(resolved)
    if not (p.is_dir() and (p / "tokenizer.json").exists()):
        # A hub name: its ONNX export (if cached) carries the tokenizer and window.
        p = model_cache_dir(model_id(resolved))
    if (p / "tokenizer.json").exists():
        window = _window_from_files(p)
        if window is not None:
            return ModelTokenizer(resolved, window, str(p / "tokenizer.json"), True)
    # Anything else: let sentence-transformers tell us the truth.
    st = load_sentence_transformer(resolved)
    window = int(st.max_seq_length)
    return ModelTokenizer(resolved, window, st.tokenizer, False)
