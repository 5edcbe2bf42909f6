"""Loading the torch model through sentence-transformers
(:func:`load_sentence_transformer`: imports torch, seconds, once per process and
model; the reranker's cross-encoder loads the same way, :func:`load_torch_model`),
and the one line that says which extra to install when torch is not there
(:func:`need_torch`). :mod:`mdseek.index.model.embed` imports this
module, never the other way round.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from .model import DEFAULT_MODEL_NAME, TORCH_EXTRA, check_usable, offline_env
from .packaged import ModelUnavailable, packaged_model_id


@lru_cache(maxsize=4)
def load_sentence_transformer(resolved: str, allow_pickle: bool = False) -> Any:
    """The torch model (imports torch: seconds; once per process and model).
    A model :func:`check_usable` refuses is never loaded."""
    if Path(resolved).is_absolute() and not Path(resolved).exists():  # a path, not a hub name
        raise ModelUnavailable(f"cannot load embedding model {resolved!r}: no such folder")
    return load_torch_model("SentenceTransformer", resolved, allow_pickle, "embedding model")


def load_torch_model(kind: str, resolved: str, allow_pickle: bool, what: str) -> Any:
    """A sentence-transformers model of class ``kind`` (``SentenceTransformer``,
    ``CrossEncoder``) on the CPU, offline, with no custom code, and pickle
    weights only if ``allow_pickle``; refused first if :func:`check_usable`
    refuses it or torch is not installed. Any failure: one line naming ``what``."""
    offline_env()
    check_usable(resolved, allow_pickle, what=what)
    need_torch(resolved, what=what)
    try:
        import sentence_transformers

        return getattr(sentence_transformers, kind)(
            resolved,
            device="cpu",
            trust_remote_code=False,
            model_kwargs={} if allow_pickle else {"use_safetensors": True},
        )
    except Exception as exc:  # any failure to load is reported, not raised raw
        raise ModelUnavailable(f"cannot load {what} {resolved!r}: {exc}") from exc


def need_torch(resolved: str, what: str = "embedding model") -> None:
    """Say in one line which extra to install, before anything is announced or
    loaded, if sentence-transformers (and so torch) is not installed."""
    import importlib.util

    try:
        found = importlib.util.find_spec("sentence_transformers") is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return
    name = repr(resolved)
    if packaged_model_id(Path(resolved)):  # the light install's default, asked to run on torch
        name = f"{DEFAULT_MODEL_NAME} on torch (--backend torch)"
    raise ModelUnavailable(
        f"cannot load {what} {name}: it runs on torch, which this install leaves out; {TORCH_EXTRA}"
    )
