"""What the commands share: opening a folder's index from the command line's
options (folder, file filter, model settings, reranker), the model check, the
one-line error (:class:`CliError`) and paths as the user can open them.

Owns: turning options into engine objects, and the words of those errors.
Imports no other module of the CLI.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mdseek.index.api import ModelUnavailable, load_tokenizer, resolve_model
from mdseek.index.text.files import (
    DEFAULT_EXCLUDE,
    DEFAULT_MAX_FILE_SIZE,
    FileFilter,
    check_glob,
    display_path,
    filter_spec,
    scan,
)


class CliError(Exception):
    """A mistake the user can mend: ``main`` prints it as one line
    (``mdseek: error: ...``) and exits with 1."""


class UsageError(CliError):
    """A flag or argument the command cannot take (``--mode fuzzy``, ``--limit 0``,
    ``--path '[bad'``): one line, exit 2, as argparse's own usage errors."""


def shapes_index(args: argparse.Namespace) -> bool:
    """Whether the command line gave any option that shapes what the index holds."""
    return bool(
        getattr(args, "include", None)
        or getattr(args, "exclude", None)
        or getattr(args, "max_file_size", None) is not None
        or getattr(args, "ignore_files", None) is not None
    )


def load_reranker(args: argparse.Namespace):
    """The --rerank cross-encoder, loaded now so that a bad one fails in one line."""
    if not args.rerank:
        return None
    from mdseek.index.api import Reranker

    try:
        r = Reranker(args.rerank, args.rerank_top, bool(embed_settings(args).allow_pickle))
        r.load()
    except (ValueError, ModelUnavailable) as exc:
        raise CliError(str(exc)) from exc
    return r


def file_filter(args: argparse.Namespace) -> FileFilter:
    size = getattr(args, "max_file_size", None)
    kw: dict = {"max_file_size": DEFAULT_MAX_FILE_SIZE if size is None else size}
    if getattr(args, "ignore_files", None) is not None:
        kw["ignore_files"] = bool(args.ignore_files)
    if getattr(args, "include", None):
        kw["include"] = tuple(args.include)
    if getattr(args, "exclude", None):
        kw["exclude"] = FileFilter().exclude + tuple(args.exclude)
    for glob in kw.get("include", ()) + kw.get("exclude", ()):
        if why := check_glob(glob):
            raise CliError(f"--include/--exclude: {why}")
    return FileFilter(**kw)


def folder_arg(arg: str) -> Path:
    root = Path(arg).expanduser()
    if root.is_dir():
        return root
    if root.is_file():
        hint = f"the folder that holds it ({shown(root.resolve().parent)})"
        if root.suffix.lower() in (".md", ".markdown"):
            hint += f", or `mdseek chunks {arg}` to see how this file is chunked"
        raise CliError(f"{arg} is a file, not a folder: give {hint}")
    raise CliError(f"{arg}: no such folder")


def has_markdown(root: Path, flt: FileFilter) -> bool:
    return next(iter(scan(root, flt)), None) is not None


def index_filter(args: argparse.Namespace, root: Path) -> FileFilter:
    """The filter a command that does not shape the index (search, status) uses:
    the one the index was built with. Options that would change it stop the
    command with one line saying so (search never rewrites what the index holds)."""
    from mdseek.index.api import stored_filter

    flt = file_filter(args)
    stored = stored_filter(root, args.db)
    if stored is None:
        return flt
    if not shapes_index(args):
        return stored
    why = filter_differs(filter_spec(stored), filter_spec(flt))
    if why:
        raise CliError(f"{why} (e.g. `mdseek index {args.dir} ...`)")
    return flt


def filter_differs(stored: dict | None, wanted: dict) -> str | None:
    """The one-line message when a search asks for an index shaped otherwise
    than the one it has (``stored`` None: the index never said; anything goes)."""
    if stored is None or stored == wanted:
        return None
    parts = []
    for key, label in (("include", "--include"), ("exclude", "--exclude")):
        if stored.get(key) != wanted.get(key):
            own = [g for g in stored.get(key) or [] if g not in DEFAULT_EXCLUDE]
            parts.append(f"{label} {' '.join(own) or '(default)'}")
    if stored.get("max_file_size") != wanted.get("max_file_size"):
        parts.append(f"--max-file-size {stored.get('max_file_size')}")
    if stored.get("ignore_files", True) != wanted.get("ignore_files", True):
        parts.append(
            "--no-ignore-files"
            if not stored.get("ignore_files", True)
            else "its ignore files (.gitignore, .ignore, .mdseekignore)"
        )
    return (
        "the index holds files chosen by "
        + ", ".join(parts)
        + "; search does not change what the index holds: filter results with --path GLOB,"
        " or run `mdseek index` with the options you want"
    )


def embed_settings(args: argparse.Namespace):
    from mdseek.index.api import EmbedSettings

    try:
        return EmbedSettings.from_env(  # a command without a flag: its variable, else the default
            *(getattr(args, name, None) for name in
              ("backend", "threads", "query_prompt", "document_prompt", "allow_pickle", "precision")),
        )  # fmt: skip
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def window_tokenizer(args: argparse.Namespace):
    """The model's tokenizer with the window the index uses (room left for the document prompt)."""
    from mdseek.index.api import minus_prompt

    resolved = resolve_model(args.model)
    prompt = embed_settings(args).prompts_for(resolved).document
    return minus_prompt(load_tokenizer(resolved), prompt)


def folder_for(
    args: argparse.Namespace,
    need_files: bool = True,
    check_index: bool = True,
    shapes: bool = True,
):
    """The folder named by the command line, its index open (:meth:`Folder.open_now`).
    ``shapes``: the command's options decide what the index holds (``index``);
    otherwise the index's own filter is kept (see index_filter)."""
    from mdseek.index.api import EngineOptions, Folder, OpenError

    root = folder_arg(args.dir)
    flt = file_filter(args) if shapes else index_filter(args, root)
    if need_files and not has_markdown(root, flt):
        globs = ", ".join(flt.include)
        raise CliError(
            f"no markdown files in {shown(root)} (looked for {globs}, up to {flt.max_file_size} bytes, "
            "skipping .git, node_modules and hidden folders); nothing to index. "
            "Give the folder that holds your notes, or other globs with --include"
        )
    # A model named on the command line is used or refused, never swapped for the default.
    options = EngineOptions(
        args.db, args.model, flt, embed_settings(args), check_index=check_index, fallback=False
    )
    try:
        folder, notes = Folder.open_now(root, options)
    except OpenError as exc:
        raise CliError(str(exc)) from None
    for note in notes:
        print(f"mdseek: warning: {note}", file=sys.stderr)
    return folder


def shown(path: Path | str) -> str:
    """A path as the user can open it from where the command ran: relative to
    the current folder when it lies inside it, else absolute."""
    p = Path(path).expanduser().resolve()
    try:
        return display_path(str(p.relative_to(Path.cwd().resolve())))
    except ValueError:
        return display_path(str(p))


def _hub_cache() -> Path:
    try:
        from huggingface_hub.constants import HF_HUB_CACHE

        return Path(HF_HUB_CACHE)
    except Exception:  # pragma: no cover - huggingface_hub comes with tokenizers
        home = os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface"
        return Path(home) / "hub"


def check_model(name: str | None) -> None:
    """A --model that is neither a folder nor in the local Hugging Face cache
    fails here, in one line, before anything loads (nothing is ever downloaded)."""
    if not name or Path(name).expanduser().exists():
        return
    cache = _hub_cache()
    names = [name] if "/" in name else [name, f"sentence-transformers/{name}"]
    if any((cache / f"models--{n.replace('/', '--')}").is_dir() for n in names):
        return
    raise CliError(
        f"model {name!r}: no such folder, and no model of that name in the local "
        f"Hugging Face cache ({cache}). mdseek never downloads models: give the folder of a "
        "sentence-transformers model, or leave --model out for the bundled all-MiniLM-L6-v2"
    )
