"""Every user setting of mdseek, once: its name, type, default, bounds, where
it applies, its command-line flag, its environment variable and a line of help.

Pure data (it imports nothing of mdseek), read by the front ends and checked
against what is written by hand elsewhere:

- the language server's settings parser (``lsp/server/config.py``) takes its keys,
  defaults, bounds and choices from :data:`SETTINGS`;
- the command line adds a command's options from it (``lsp/cli/options.py``:
  each command shows only the settings whose :attr:`Setting.commands` name it);
- the MCP server's limits (``MAX_LIMIT``) and the reranker's (:data:`TOP_N`)
  are read from it, and every front end's search mode by default
  (:data:`DEFAULT_MODE`, a :class:`Mode`: the modes' words are written here
  only);
- docs/settings.md's table is made from it (``scripts/settings_doc.py``), and
  vscode-client/package.json's ``contributes.configuration`` is checked against
  it (``scripts/settings_doc.py --write`` updates it);
  tests/test_settings_table.py fails when any of them disagrees.

Precedence, the same in every front end: what the user gave that front end (a
flag of the command line or of ``mdseek mcp``, a client's setting) wins, then
the environment variable, then the default below (:func:`from_env` reads a
variable with the same checks).

Settings from a workspace are data from a stranger (docs/security.md):
:attr:`Setting.restricted` marks those a workspace may not choose (VS Code's
``restrictedConfigurations``), and the bounds hold for every source.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

# The command-line commands by what they need of the settings.
TOKENIZE = ("chunks", "coverage")  # the model's tokenizer, no embedding
EMBED = ("index", "search", "related", "status", "mcp")  # an index and its model
SEARCH = ("search", "mcp")  # queries answered


class Mode(StrEnum):
    """How a search ranks (a ``str``: the value is what JSON and people read);
    the ``mode`` setting's choices, here so that the table names them once."""

    HYBRID = "hybrid"  # keywords and meaning, fused
    LEXICAL = "lexical"  # keywords only (BM25)
    DENSE = "dense"  # meaning only (the model's vectors)


ABSENT = object()  # as vscode_default: not in VS Code's package.json
SAME = object()  # as vscode_default: the default


@dataclass(frozen=True)
class Setting:
    """One user setting (or an environment variable or a flag that is none)."""

    name: str  # camelCase, as the language server and VS Code (mdseek.NAME) know it
    type: str  # string, prompt (verbatim), integer, boolean, choice, globs, list, object
    default: Any  # with nothing set (None: decided later, see shown_default)
    help: str  # one line
    minimum: int | None = None
    maximum: int | None = None
    choices: tuple[str, ...] = ()
    server: bool = True  # the language server reads it (section "mdseek")
    commands: tuple[str, ...] = ()  # the command-line commands that take its flag
    flag: str | None = None
    metavar: str | None = None
    env: str | None = None
    shown_default: str | None = None  # the default in words, where the value says too little
    at_most_cores: bool = False  # a client's value is capped at the machine's cores
    restricted: bool = False  # a workspace may not choose it (user settings only)
    vscode_default: Any = ABSENT  # package.json's: SAME, or "" / None (= unset); ABSENT: not there
    vscode_scope: str | None = None  # package.json's scope


_UNSET_TEXT = "unset: the environment variable, else "

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "model", "string", None,
        "a sentence-transformers model folder or a name in the local Hugging Face cache",
        commands=TOKENIZE + EMBED, flag="--model", metavar="NAME_OR_PATH", env="MDSEEK_MODEL",
        shown_default="the bundled all-MiniLM-L6-v2", restricted=True, vscode_default="",
        vscode_scope="machine-overridable",
    ),
    Setting(
        "indexPath", "string", None,
        "the index file; a relative one is relative to each workspace folder; with several "
        "folders, an absolute one gets each folder's hash in its name",
        commands=EMBED, flag="--db", metavar="FILE", env="MDSEEK_INDEX",
        shown_default="the user cache, or DIR/.mdseek/index.sqlite if that file exists",
        restricted=True, vscode_default="", vscode_scope="machine-overridable",
    ),
    Setting(
        "include", "globs", ("**/*.md", "**/*.markdown"), "globs of the files to index",
        commands=EMBED, flag="--include", metavar="GLOB", vscode_default=SAME,
    ),
    Setting(
        "exclude", "globs", (),
        "globs never indexed, added to the built-in .git, node_modules, .mdseek, .venv",
        commands=EMBED, flag="--exclude", metavar="GLOB", vscode_default=SAME,
    ),
    Setting(
        "ignoreFiles", "boolean", True,
        "leave out what .gitignore, .ignore and .mdseekignore files ignore (nested, with "
        "negation); off: only include and exclude decide",
        commands=EMBED, flag="--no-ignore-files", env="MDSEEK_IGNORE_FILES", vscode_default=SAME,
    ),
    Setting(
        "maxFileSize", "integer", 5_000_000, "bytes; larger files are skipped", minimum=1,
        commands=EMBED + ("coverage",), flag="--max-file-size", metavar="BYTES", restricted=True,
        vscode_default=SAME,
    ),
    Setting(
        "searchLimit", "integer", 20, "results of workspace/symbol and mdseek/search",
        minimum=1, maximum=200, restricted=True, vscode_default=SAME,
    ),
    Setting(
        "hoverRelated", "integer", 5, "related sections listed in a heading's hover (0 = none)",
        minimum=0, restricted=True, vscode_default=SAME,
    ),
    Setting(
        "relatedUnlinked", "boolean", False,
        "a heading's hover and \"Link to related section\" leave out the sections the section "
        "already links to or is linked from",
        vscode_default=SAME,
    ),
    Setting(
        "relatedLens", "boolean", False,
        '"N related, unlinked" above headings: of the hoverRelated most related sections, those '
        "the section is not linked with",
        vscode_default=SAME,
    ),
    Setting(
        "documentSymbols", "boolean", True,
        "answer textDocument/documentSymbol (VS Code sends false while its own markdown "
        "outline is on: the outline setting)",
    ),
    Setting(
        "duplicateHeadings", "choice", "auto",
        "warn about a heading whose text another heading of the file has (auto: not in an "
        "Obsidian vault)",
        choices=("auto", "on", "off"), vscode_default=SAME,
    ),
    Setting(
        "nearDuplicates", "boolean", True,
        "hint at a section of an open file that says what another section says (its vector "
        "matches), with quick fixes to replace it by a link or an embed",
        vscode_default=SAME,
    ),
    Setting(
        "backend", "choice", "onnx", "run the model on ONNX Runtime or torch",
        choices=("onnx", "torch"), commands=EMBED, flag="--backend", env="MDSEEK_BACKEND",
        restricted=True, vscode_default="", vscode_scope="machine-overridable",
    ),
    Setting(
        "threads", "integer", 0,
        "threads per model call; 0 = by demand (every core while no request waits)",
        minimum=0, commands=EMBED, flag="--threads", metavar="N", env="MDSEEK_THREADS",
        at_most_cores=True, restricted=True, vscode_default=None,
        vscode_scope="machine-overridable",
    ),
    Setting(
        "precision", "choice", None,
        "fp32 or int8 (int8: faster bulk embedding, on onnx only); its own vectors, moved in "
        "the background on a change",
        choices=("fp32", "int8"), commands=EMBED, flag="--precision", env="MDSEEK_PRECISION",
        shown_default="what the index remembers, else int8 (the bundled model; other models fp32)",
        restricted=True,
        vscode_default="", vscode_scope="machine-overridable",
    ),
    Setting(
        "queryPrompt", "prompt", None,
        'text put before every query in place of the model\'s own prompt ("" = none)',
        commands=EMBED, flag="--query-prompt", metavar="TEXT", env="MDSEEK_QUERY_PROMPT",
        shown_default="the model's own", restricted=True, vscode_default=None,
        vscode_scope="machine-overridable",
    ),
    Setting(
        "documentPrompt", "prompt", None,
        'the same for every embedded section ("" = none); a change re-embeds',
        commands=EMBED + TOKENIZE, flag="--document-prompt", metavar="TEXT",
        env="MDSEEK_DOCUMENT_PROMPT", shown_default="the model's own", restricted=True,
        vscode_default=None, vscode_scope="machine-overridable",
    ),
    Setting(
        "rerank", "string", None,
        "a sentence-transformers CrossEncoder (name or folder) that re-orders the best sections",
        commands=SEARCH, flag="--rerank", metavar="NAME_OR_PATH", env="MDSEEK_RERANK",
        shown_default="off", restricted=True, vscode_default="",
        vscode_scope="machine-overridable",
    ),
    Setting(
        "rerankTop", "integer", 10, "sections the reranker re-scores per query",
        minimum=1, maximum=100, commands=SEARCH, flag="--rerank-top", metavar="N",
        restricted=True, vscode_default=SAME, vscode_scope="machine-overridable",
    ),
    # Never a setting: a workspace's settings never choose code to run.
    Setting(
        "allowPickle", "boolean", False,
        "load model weights from pickle files (.bin, .pt): pickle can run code",
        server=False, commands=TOKENIZE + EMBED, flag="--allow-pickle",
        env="MDSEEK_ALLOW_PICKLE",
    ),
    Setting(
        "cacheDir", "string", None,
        "where ONNX exports, the code cache and the vouched records go (not the indexes)",
        server=False, env="MDSEEK_CACHE_DIR",
        shown_default="$XDG_CACHE_HOME/mdseek, else ~/.cache/mdseek",
    ),
    # The VS Code client's own.
    Setting(
        "server.command", "list", ("mdseek", "serve"),
        "the program and arguments that start the language server (user settings only)",
        server=False, minimum=1, restricted=True, vscode_default=SAME,
        vscode_scope="application",
    ),
    Setting(
        "server.env", "object", {},
        "extra environment variables of the server process (user settings only)",
        server=False, restricted=True, vscode_default=SAME, vscode_scope="application",
    ),
    Setting(
        "outline", "choice", "auto",
        "mdseek's outline (documentSymbols): auto = only while VS Code's own is off",
        server=False, choices=("auto", "always", "never"), vscode_default=SAME,
    ),
    Setting(
        "codeLens", "choice", "nonzero",
        '"N references" above headings: nonzero = only where links point, all = every heading '
        "(0 references too), off = none",
        choices=("nonzero", "all", "off"), vscode_default=SAME,
    ),
    Setting(
        "suggestLinksWhileTyping", "boolean", True,
        "open link suggestions when ]( or [[ is typed", server=False, vscode_default=SAME,
    ),
)  # fmt: skip

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
SERVER_SETTINGS: tuple[Setting, ...] = tuple(s for s in SETTINGS if s.server)


def default(name: str) -> Any:
    return BY_NAME[name].default


# The figures other modules read (one definition: the table's).
DEFAULT_INCLUDE: tuple[str, ...] = default("include")
DEFAULT_MAX_FILE_SIZE: int = default("maxFileSize")
MAX_LIMIT: int = BY_NAME["searchLimit"].maximum or 0  # results one search returns at most
DEFAULT_MODE = Mode.HYBRID  # a search's mode when none is asked for (CLI, MCP, the server)
TOP_N: int = default("rerankTop")  # sections the reranker re-scores per query
MAX_TOP_N: int = BY_NAME["rerankTop"].maximum or 0
BACKENDS: tuple[str, ...] = BY_NAME["backend"].choices
PRECISIONS: tuple[str, ...] = BY_NAME["precision"].choices


def vscode_default(setting: Setting) -> Any:
    """The default VS Code's package.json shows (JSON: lists for tuples)."""
    d = setting.default if setting.vscode_default is SAME else setting.vscode_default
    return list(d) if isinstance(d, tuple) else d


def for_command(command: str) -> list[Setting]:
    """The settings whose flag a command-line command takes, in table order."""
    return [s for s in SETTINGS if command in s.commands]


def attr(setting: Setting) -> str:
    """The Python name (``maxFileSize`` -> ``max_file_size``)."""
    return "".join("_" + c.lower() if c.isupper() else c for c in setting.name)


def check(setting: Setting, value: Any, label: str | None = None, cores: int | None = None):
    """(clean value, problem or None) of a scalar setting's raw JSON value: the
    type, bounds and choices of the table. None or "" = unset (None) except for
    a prompt, where "" means none. ``cores``: cap an :attr:`~Setting.at_most_cores`
    setting. Globs are checked by the caller (their syntax is the text layer's)."""
    name = label or setting.name
    t = setting.type
    if t == "prompt":
        if isinstance(value, str):
            return value, None
        return None, f"{name} must be a string (got {value!r})"
    if t in ("string", "choice") and (value is None or value == ""):
        return None, None
    if t == "string":
        if isinstance(value, str):
            return value.strip() or None, None
        return None, f"{name} must be a string (got {value!r})"
    if t == "choice":
        if isinstance(value, str) and value.strip() in setting.choices:
            return value.strip(), None
        return None, f"{name} must be one of {', '.join(setting.choices)} (got {value!r})"
    if t == "boolean":
        if isinstance(value, bool):
            return value, None
        return None, f"{name} must be true or false (got {value!r})"
    if t == "integer":
        low = setting.minimum if setting.minimum is not None else 0
        high = setting.maximum
        if setting.at_most_cores and cores is not None:
            high = cores if high is None else min(high, cores)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or value != int(value)
            or value < low
        ):
            return None, f"{name} must be an integer >= {low} (got {value!r})"
        if high is not None and value > high:
            return None, f"{name} must be an integer <= {high} (got {value!r})"
        return int(value), None
    raise ValueError(f"{name}: no check for type {t}")


def from_env(setting: Setting, environ: Mapping[str, str] | None = None):
    """(value, problem or None) of a setting's environment variable, checked as
    the setting is (the text of an integer read as one; "" = unset, but a
    prompt's "" = none); (None, None) when the variable is not set."""
    env = os.environ if environ is None else environ
    if setting.env is None or setting.env not in env:
        return None, None
    raw: Any = env[setting.env]
    if setting.type == "integer" and raw.strip():
        try:
            raw = int(raw)
        except ValueError:
            return None, f"{setting.env} must be an integer (got {raw!r})"
    elif setting.type == "integer":
        return None, None
    elif setting.type == "boolean":
        return raw.strip().lower() in ("1", "true", "yes"), None
    return check(setting, raw, label=setting.env)
