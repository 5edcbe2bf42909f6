"""The server's settings: typed, with defaults, validated field by field.

Settings come from ``initializationOptions`` and from the ``mdseek`` section of
``workspace/configuration`` / ``workspace/didChangeConfiguration`` (later
sources override earlier ones, key by key), then, for a setting none of them
sets, from its environment variable (``MDSEEK_MODEL``, ``MDSEEK_RERANK``, ...,
as the command line reads them). Every key, default, bound and choice is the
table's (:mod:`mdseek.index.settings`; docs/settings.md lists them). A value of
the wrong type or out of range falls back to its default; :func:`parse_settings`
returns every such problem so the server can say so once, in one message.
A client's ``threads`` is at most the machine's cores. (Loading pickle weights
is never a setting: a workspace's settings never choose code to run.)

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

from mdseek.index.api import settings as table
from mdseek.index.text.files import DEFAULT_EXCLUDE, FileFilter, check_glob

SECTION = "mdseek"
_D = table.default


@dataclass(frozen=True)
class Settings:
    """The server's settings (None: unset, decided later: see the table's help)."""

    model: str | None = _D("model")
    index_path: str | None = _D("indexPath")
    include: tuple[str, ...] = _D("include")
    exclude: tuple[str, ...] = _D("exclude")
    max_file_size: int = _D("maxFileSize")
    ignore_files: bool = _D("ignoreFiles")
    search_limit: int = _D("searchLimit")
    hover_related: int = _D("hoverRelated")
    related_unlinked: bool = _D("relatedUnlinked")
    related_lens: bool = _D("relatedLens")
    code_lens: str = _D("codeLens")
    document_symbols: bool = _D("documentSymbols")
    backend: str = _D("backend")
    threads: int = _D("threads")
    precision: str | None = _D("precision")
    query_prompt: str | None = _D("queryPrompt")
    document_prompt: str | None = _D("documentPrompt")
    rerank: str | None = _D("rerank")
    rerank_top: int = _D("rerankTop")
    duplicate_headings: str = _D("duplicateHeadings")
    near_duplicates: bool = _D("nearDuplicates")

    def file_filter(self) -> FileFilter:
        exclude = tuple(dict.fromkeys(DEFAULT_EXCLUDE + self.exclude))
        return FileFilter(
            include=self.include,
            exclude=exclude,
            max_file_size=self.max_file_size,
            ignore_files=self.ignore_files,
        )

    def engine_key(self) -> tuple:
        """Settings that need a new Engine when they change."""
        return (self.model, self.index_path, self.include, self.exclude, self.max_file_size,
                self.ignore_files, self.backend, self.threads, self.precision, self.query_prompt,
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


def _checker(s: table.Setting, cores: int | None):
    if s.type == "globs":
        return _globs(s.name, empty_ok=not s.default)
    return lambda v: table.check(s, v, cores=cores)


# protocol key -> (attribute, checker returning (value, error or None)), from the table;
# a client's threads at most the machine's cores
_FIELDS: dict[str, tuple[str, Any]] = {
    s.name: (table.attr(s), _checker(s, os.cpu_count() or 1)) for s in table.SERVER_SETTINGS
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
    for s in table.SERVER_SETTINGS:  # unset by the client: the environment's (no cap)
        attr = table.attr(s)
        if s.env and attr not in values:
            value, err = table.from_env(s)
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
