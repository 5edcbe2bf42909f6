"""The ``mdseek`` command line: a thin front end over :mod:`mdseek.index`.

    mdseek index DIR                 index (incrementally) with a progress bar
    mdseek search DIR "query"        hybrid search (indexes first if needed; --explain: score parts)
    mdseek chunks FILE               how a file is chunked (no index needed)
    mdseek coverage DIR              share of body tokens inside a vector's window
    mdseek status DIR                what the index holds
    mdseek serve [--stdio]           the language server over stdio
    mdseek mcp [DIR ...]             the MCP server (tools for AI agents) over stdio

Errors go to stderr with exit code 2 (usage) or 1 (anything else).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from mdseek.index import requests
from mdseek.index.coverage import coverage_of
from mdseek.index.files import (
    DEFAULT_MAX_FILE_SIZE,
    FileFilter,
    check_glob,
    display_path,
    scan,
)
from mdseek.index.location import locate
from mdseek.index.model import ModelUnavailable, load_tokenizer, resolve_model
from mdseek.index.store import is_damage, read_meta

if TYPE_CHECKING:
    from mdseek.index.engine import Engine

log = logging.getLogger("mdseek")


class CliError(Exception):
    pass


def _add_common(p: argparse.ArgumentParser, model: bool = True) -> None:
    if model:
        p.add_argument(
            "--model",
            default=os.environ.get("MDSEEK_MODEL") or None,
            metavar="NAME_OR_PATH",
            help="sentence-transformers model folder or (cached) name; default: $MDSEEK_MODEL, "
            "else the bundled all-MiniLM-L6-v2",
        )
        p.add_argument(
            "--backend", choices=["onnx", "torch"], default=None,
            help="run the model on ONNX Runtime (default; exported once per model) or torch ($MDSEEK_BACKEND)",
        )  # fmt: skip
        p.add_argument(
            "--threads", type=int, default=None,
            help="threads per model call (default 0: by demand, bulk embedding on every core "
            "while no request waits; $MDSEEK_THREADS)",
        )  # fmt: skip
        p.add_argument(
            "--precision", choices=["fp32", "int8"], default=None,
            help="int8 (the bundled model's default) or fp32; its own vectors, a change "
            "re-embeds, remembered by the index ($MDSEEK_PRECISION)",
        )  # fmt: skip
        p.add_argument(
            "--query-prompt", default=None, metavar="TEXT",
            help="text put before every query, in place of the model's own query prompt "
            '("" = none; $MDSEEK_QUERY_PROMPT)',
        )  # fmt: skip
        p.add_argument(
            "--document-prompt", default=None, metavar="TEXT",
            help="text put before every embedded section, in place of the model's own document "
            'prompt ("" = none; $MDSEEK_DOCUMENT_PROMPT); a change re-embeds',
        )  # fmt: skip
        p.add_argument(
            "--allow-pickle", action="store_true", default=None,
            help="load model weights from pickle files (.bin/.pt) when it has no safetensors; "
            "pickle can run code: only for models you trust ($MDSEEK_ALLOW_PICKLE=1)",
        )  # fmt: skip
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens (stderr)")


def _add_index_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR", help="the folder whose markdown files are indexed")
    p.add_argument(
        "--db",
        default=os.environ.get("MDSEEK_INDEX") or None,
        metavar="FILE",
        help="index file; default: $MDSEEK_INDEX, else a private folder in your cache "
        "(~/.cache/mdseek/indexes/<folder>-<hash>/index.sqlite), or DIR/.mdseek/index.sqlite "
        "if that file exists (`mdseek status DIR` prints it)",
    )
    shaping = " (for `search`: must match what the index holds; filter results with --path)"
    p.add_argument(
        "--max-file-size",
        type=int,
        default=None,
        metavar="BYTES",
        help=f"skip larger files (default {DEFAULT_MAX_FILE_SIZE})" + shaping,
    )
    p.add_argument(
        "--include",
        action="append",
        metavar="GLOB",
        help="glob of files to index (repeatable; default **/*.md)" + shaping,
    )
    p.add_argument(
        "--exclude", action="append", metavar="GLOB", help="glob to skip (repeatable)" + shaping
    )


def _add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress on stderr (by default a bar on a terminal, otherwise a line every few seconds)",
    )


EPILOG = """\
environment:
  MDSEEK_MODEL   default for --model (a sentence-transformers folder or cached name)
  MDSEEK_INDEX   default for --db (the index file)

Nothing is downloaded at run time (HF_HUB_OFFLINE=1). Run `mdseek COMMAND --help`
for a command's options."""


def build_parser() -> argparse.ArgumentParser:
    from mdseek import __version__

    ap = argparse.ArgumentParser(
        prog="mdseek",
        description="Find markdown sections by meaning: a language server and a command line.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"mdseek {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help,
            description=help[0].upper() + help[1:] + ".",
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    p = command("index", "index a folder (incremental: only changed sections are embedded)")
    _add_index_opts(p)
    _add_common(p)
    _add_progress(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--vectors", metavar="FILE",
        help="take the vectors of FILE (made by --export-vectors, e.g. in CI) for the sections "
        "whose text and model match, before embedding the rest; vectors only, never text",
    )  # fmt: skip
    p.add_argument(
        "--export-vectors", metavar="FILE",
        help="after indexing, write the index's vectors to FILE (for --vectors elsewhere)",
    )  # fmt: skip

    p = command("search", "search a folder's sections by meaning (indexes first if needed)")
    _add_index_opts(p)
    p.add_argument(
        "query",
        metavar="QUERY",
        help='what you are looking for, in your own words (quote it: "...")',
    )
    p.add_argument(
        "--limit",
        default="10",
        metavar="N",
        help=f"how many sections to print (1 to {requests.MAX_LIMIT}; default 10)",
    )
    p.add_argument(
        "--mode",
        default="hybrid",
        metavar="{hybrid,lexical,dense}",
        help="hybrid = keywords and meaning fused (default); lexical = keywords only (FTS5); "
        "dense = meaning only (embeddings)",
    )
    p.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="GLOB",
        help="only results in files matching GLOB, like rg -g (repeatable; !GLOB leaves "
        "files out; a glob without / matches file names in any folder). The index is not changed",
    )
    p.add_argument(
        "--json", action="store_true", help="print the answer as a JSON object (see README)"
    )
    p.add_argument(
        "--highlight", action="store_true", help="mark the query's words in snippets as **word**"
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="show why each section ranks where it does (query terms, each retriever's score, document term)",
    )
    _add_rerank(p)
    _add_common(p)
    _add_progress(p)

    p = command("chunks", "show how one file is chunked (no index needed)")
    p.add_argument("file", metavar="FILE", help="a markdown file")
    p.add_argument("--json", action="store_true", help="print the chunks as JSON")
    _add_common(p)

    p = command("coverage", "share of body tokens inside some vector's window")
    p.add_argument("dir", metavar="DIR", help="the folder whose markdown files are measured")
    p.add_argument(
        "--max-file-size",
        type=int,
        default=DEFAULT_MAX_FILE_SIZE,
        metavar="BYTES",
        help=f"skip larger files (default {DEFAULT_MAX_FILE_SIZE})",
    )
    p.add_argument("--json", action="store_true", help="print per-file figures as JSON")
    _add_common(p)

    p = command("status", "what the index of a folder holds and where it is")
    _add_index_opts(p)
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    _add_common(p)

    p = command(
        "prune",
        "remove the indexes in the user cache whose folder has been missing for a long time",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="say what would be removed and kept; remove nothing"
    )
    p.add_argument(
        "--days",
        type=float,
        default=30,
        metavar="N",
        help="remove an index once its folder has been missing N days (default 30; "
        "counted from the first prune that found it missing; 0: now)",
    )
    _add_common(p)

    p = command("serve", "run the language server on stdio (for editors)")
    p.add_argument(
        "--stdio", action="store_true", help="accepted and ignored (stdio is the default)"
    )
    _add_common(p, model=False)

    p = sub.add_parser("mcp", help="run the MCP server (search tools for AI agents) on stdio")
    p.add_argument(
        "dirs", nargs="*", metavar="DIR", help="folders to serve (default: the current folder)"
    )
    p.add_argument(
        "--db",
        default=os.environ.get("MDSEEK_INDEX") or None,
        help="index file, with one DIR (default: the one the language server uses, in the user cache; `mdseek status DIR` shows it)",
    )
    p.add_argument("--max-file-size", type=int, default=None, help="bytes")
    p.add_argument("--include", action="append", help="glob to index (repeatable)")
    p.add_argument("--exclude", action="append", help="glob to skip (repeatable)")
    _add_rerank(p)
    _add_common(p)
    return ap


def _shaped(args: argparse.Namespace) -> bool:
    """Whether the command line gave any option that shapes what the index holds."""
    return bool(
        getattr(args, "include", None)
        or getattr(args, "exclude", None)
        or getattr(args, "max_file_size", None) is not None
    )


def _add_rerank(p: argparse.ArgumentParser) -> None:
    from mdseek.index.rerank import MAX_TOP_N, TOP_N

    p.add_argument(
        "--rerank", default=os.environ.get("MDSEEK_RERANK") or None, metavar="NAME_OR_PATH",
        help="re-order the best sections with a sentence-transformers CrossEncoder (a folder "
        "or a name in the local Hugging Face cache; off by default; $MDSEEK_RERANK)",
    )  # fmt: skip
    p.add_argument(
        "--rerank-top", type=int, default=TOP_N, metavar="N",
        help=f"sections the reranker re-scores per query (default {TOP_N}, at most {MAX_TOP_N})",
    )  # fmt: skip


def _reranker(args: argparse.Namespace):
    """The --rerank cross-encoder, loaded now so that a bad one fails in one line."""
    if not args.rerank:
        return None
    from mdseek.index.rerank import Reranker

    try:
        r = Reranker(args.rerank, args.rerank_top, bool(_embed_settings(args).allow_pickle))
        r.load()
    except (ValueError, ModelUnavailable) as exc:
        raise CliError(str(exc)) from exc
    return r


def _filter(args: argparse.Namespace) -> FileFilter:
    size = getattr(args, "max_file_size", None)
    kw: dict = {"max_file_size": DEFAULT_MAX_FILE_SIZE if size is None else size}
    if getattr(args, "include", None):
        kw["include"] = tuple(args.include)
    if getattr(args, "exclude", None):
        kw["exclude"] = FileFilter().exclude + tuple(args.exclude)
    for glob in kw.get("include", ()) + kw.get("exclude", ()):
        if why := check_glob(glob):
            raise CliError(f"--include/--exclude: {why}")
    return FileFilter(**kw)


def _folder(arg: str) -> Path:
    root = Path(arg).expanduser()
    if root.is_dir():
        return root
    if root.is_file():
        hint = f"the folder that holds it ({shown(root.resolve().parent)})"
        if root.suffix.lower() in (".md", ".markdown"):
            hint += f", or `mdseek chunks {arg}` to see how this file is chunked"
        raise CliError(f"{arg} is a file, not a folder: give {hint}")
    raise CliError(f"{arg}: no such folder")


def _has_markdown(root: Path, flt: FileFilter) -> bool:
    return next(iter(scan(root, flt)), None) is not None


def _index_filter(args: argparse.Namespace, root: Path) -> FileFilter:
    """The filter a command that does not shape the index (search, status) uses:
    the one the index was built with. Options that would change it stop the
    command with one line saying so (search never rewrites what the index holds)."""
    from mdseek.index.adopt import trusted

    flt = _filter(args)
    loc = locate(root.resolve(), args.db)
    try:  # a workspace index not made here says nothing that counts (it is read again)
        raw = read_meta(loc.path, "file_filter") if trusted(loc) else None
        stored = requests.filter_from_spec(json.loads(raw)) if raw else None
    except ValueError:
        stored = None
    if stored is None:
        return flt
    if not _shaped(args):
        return stored
    why = requests.filter_differs(requests.filter_spec(stored), requests.filter_spec(flt))
    if why:
        raise CliError(f"{why} (e.g. `mdseek index {args.dir} ...`)")
    return flt


def _embed_settings(args: argparse.Namespace):
    from mdseek.index.embed import EmbedSettings

    try:
        return EmbedSettings.from_env(
            args.backend, args.threads, args.query_prompt, args.document_prompt,
            args.allow_pickle, args.precision,
        )  # fmt: skip
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def _tokenizer(args: argparse.Namespace):
    """The model's tokenizer with the window the index uses (room left for the document prompt)."""
    from mdseek.index.model import minus_prompt

    resolved = resolve_model(args.model)
    prompt = _embed_settings(args).prompts_for(resolved).document
    return minus_prompt(load_tokenizer(resolved), prompt)


def _engine(
    args: argparse.Namespace,
    need_files: bool = True,
    check_index: bool = True,
    shapes: bool = True,
):
    """``shapes``: the command's options decide what the index holds (``index``);
    otherwise the index's own filter is kept (see _index_filter)."""
    from mdseek.index.folder import EngineOptions, OpenError, open_engine

    root = _folder(args.dir)
    flt = _filter(args) if shapes else _index_filter(args, root)
    if need_files and not _has_markdown(root, flt):
        globs = ", ".join(flt.include)
        raise CliError(
            f"no markdown files in {shown(root)} (looked for {globs}, up to {flt.max_file_size} bytes, "
            "skipping .git, node_modules and hidden folders); nothing to index. "
            "Give the folder that holds your notes, or other globs with --include"
        )
    # A model named on the command line is used or refused, never swapped for the default.
    options = EngineOptions(
        args.db, args.model, flt, _embed_settings(args), check_index=check_index, fallback=False
    )
    try:
        eng, notes = open_engine(root, options)
    except OpenError as exc:
        raise CliError(str(exc)) from None
    for note in notes:
        print(f"mdseek: warning: {note}", file=sys.stderr)
    return eng


def shown(path: Path | str) -> str:
    """A path as the user can open it from where the command ran: relative to
    the current folder when it lies inside it, else absolute."""
    p = Path(path).expanduser().resolve()
    try:
        return display_path(str(p.relative_to(Path.cwd().resolve())))
    except ValueError:
        return display_path(str(p))


class _Progress:
    """Indexing progress on stderr: a tqdm bar per stage on a terminal, else a
    plain line once a stage has run ``first`` seconds, then at most every
    ``every`` seconds (and when a stage ends). If indexing still runs after
    ``opening`` seconds with nothing said, ``what`` is said: a first run (which
    embeds everything, and reports only after a batch) speaks within a second
    or two; an unchanged index is usually done before and prints nothing."""

    LABELS = {"parse": ("chunking", "files"), "embed": ("embedding", "chunks")}

    def __init__(
        self, enabled: bool, every: float = 5.0, first: float = 1.0, what: str = "",
        opening: float = 0.5,
    ):  # fmt: skip
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self.every = every
        self.first = first
        self.bars: dict[str, object] = {}
        self.last: dict[str, tuple[float, float]] = {}  # stage -> (started, last printed)
        self._lock = threading.Lock()
        self._said = False
        self._timer: threading.Timer | None = None
        if enabled and what:
            self._timer = threading.Timer(opening, self._say, args=(f"mdseek: {what} ...", True))
            self._timer.daemon = True
            self._timer.start()

    def _say(self, line: str, opening: bool = False) -> None:
        with self._lock:
            if opening and self._said:
                return
            self._said = True
            print(line, file=sys.stderr, flush=True)

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage == "wait":  # said even without a bar: otherwise the command seems stuck
            print(
                "mdseek: another mdseek process is embedding this index; waiting to reuse its vectors",
                file=sys.stderr,
            )
            return
        if not self.enabled or total <= 0:
            return
        label, unit = self.LABELS.get(stage, (stage, "items"))
        if self.tty:
            from tqdm import tqdm

            self._said = True

            bar = self.bars.get(stage)
            if bar is None:
                # no rate: counts jump when unchanged files are skipped, and
                # "4400581.25 chunks/s" says nothing
                bar = self.bars[stage] = tqdm(
                    total=total,
                    desc=label,
                    unit=f" {unit}",
                    file=sys.stderr,
                    leave=True,
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                    + unit
                    + " [{elapsed}<{remaining}]",
                )
            bar.n = done  # type: ignore[attr-defined]
            bar.refresh()  # type: ignore[attr-defined]
            return
        now = time.monotonic()
        start, printed = self.last.setdefault(stage, (now, now))
        if done >= total:
            # the end of a stage that took a while (quick ones print nothing)
            if printed != start or now - start >= 1.0:
                self._say(f"mdseek: {label} {done}/{total} {unit} (100%) in {now - start:.1f}s")
            self.last[stage] = (now + 1e9, now + 1e9)  # once per stage
        elif now - printed >= (self.first if printed == start else self.every):
            self.last[stage] = (start, now)
            self._say(f"mdseek: {label} {done}/{total} {unit} ({100 * done // total}%)")

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        for b in self.bars.values():
            b.close()  # type: ignore[attr-defined]


def cmd_index(args: argparse.Namespace) -> int:
    from mdseek.index.vectors_file import VectorsFileError

    eng = _engine(args)
    bar = _Progress(not args.no_progress and not args.json, what=f"indexing {shown(eng.root)}")
    try:
        try:
            rep = eng.index(progress=bar, vectors=args.vectors)
        except VectorsFileError as exc:
            raise CliError(str(exc)) from None
        if eng.mover is not None and not rep.lexical_only_reason:  # fp32 vectors: int8 now, once
            total = eng.move_pending()
            while left := eng.move_next(256, rep):
                bar("embed", total - left, total)
        if args.export_vectors:
            n = eng.export_vectors(args.export_vectors)
            print(f"mdseek: wrote {n} vectors to {shown(args.export_vectors)}", file=sys.stderr)
    finally:
        bar.close()
    if args.vectors and not args.json:
        print(
            f"mdseek: took {rep.vectors_taken} vectors from {shown(args.vectors)}", file=sys.stderr
        )
    if args.json:
        out = rep.to_dict()
        for key in ("skipped", "errors"):
            out[key] = [(display_path(rel), why) for rel, why in out[key]]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        erate = rep.embedded / rep.embed_seconds if rep.embed_seconds >= 0.5 else None
        load = eng.embedder.load_seconds
        detail = []
        if erate:
            detail.append(f"embedding {erate:.0f} chunks/s")
        if rep.embedded and load:
            detail.append(f"model load {load:.1f}s")
        print(
            f"{rep.files} files: {rep.indexed} indexed, {rep.unchanged} unchanged, "
            f"{rep.removed} removed, {len(rep.skipped)} skipped; {rep.chunks} chunks "
            f"({rep.chunks_written} written, {rep.embedded} embedded) in {rep.seconds:.1f}s"
            + (f" ({'; '.join(detail)})" if detail else "")
        )
        print(f"index: {shown(eng.index_path)}")
        for rel, why in rep.skipped:
            print(f"  skipped {shown(eng.root / rel)}: {why}", file=sys.stderr)
        # Files that failed were each logged on one line (path and reason).
        if rep.lexical_only_reason:
            print(f"warning: {rep.lexical_only_reason}; lexical search only", file=sys.stderr)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    try:  # the same checks and words as MCP and the language server
        requests.check_query(args.query)
        args.limit = requests.check_limit(args.limit)
        args.mode = requests.check_mode(args.mode)
        args.path = requests.check_globs(args.path)
    except requests.BadRequest as exc:
        raise CliError(str(exc)) from None
    loading: list[threading.Thread] = []
    eng = None
    try:
        if args.mode != "lexical" and not args.model:
            from mdseek.index.embed import warm_default_session

            loading.append(
                warm_default_session(args.backend, args.threads, args.precision)
            )  # opens while the index does
        # No quick_check on open (0.5-1.7 s at 100k chunks, every search): damage
        # met on the way says how to recover instead.
        eng = _engine(args, check_index=False, shapes=False)
        if args.mode != "lexical":
            loading.append(eng.embedder.preload())  # the model opens while the index is reconciled
        return _search(args, eng)
    except sqlite3.DatabaseError as exc:
        if eng is None or not is_damage(exc):
            raise
        raise CliError(
            f"the index {shown(eng.index_path)} is damaged ({exc}); `mdseek index {shown(eng.root)}`"
            " sets it aside and builds a new one"
        ) from None
    finally:
        # A model still opening in native code must not meet the interpreter's
        # exit (an error before the search: onnxruntime aborts the process).
        for t in loading:
            t.join()


def _search(args: argparse.Namespace, eng: Engine) -> int:
    from mdseek.index.folder import Folder, search_folders

    bar = _Progress(not args.no_progress and not args.json, what=f"indexing {shown(eng.root)}")
    try:
        rep = eng.index(progress=bar)
    finally:
        bar.close()
    eng.reranker = _reranker(args)
    answer = search_folders(
        [(Folder.adopt(eng, rep), args.path)], args.query, args.limit, args.mode,
        explain=args.explain,
    )  # fmt: skip
    results = [r for _, r in answer.hits]
    if args.highlight:
        from mdseek.index.query import Query
        from mdseek.index.snippet import mark

        words = Query.parse(args.query).highlight
        for r in results:
            r.snippet = mark(r.snippet, words)
    if args.json:
        out = {
            "mode": answer.mode,
            "complete": answer.complete,
            "note": answer.note,
            "results": [_json_result(eng, r) for r in results],
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    for note in dict.fromkeys(answer.notes):
        print(f"note: {note}", file=sys.stderr)
    if not results:
        print("no matching sections")
    if args.explain and results:
        print(_explain_terms(results[0].explain or {}))
    for n, r in enumerate(results, 1):
        ranks = f"lexical #{r.lexical_rank or '-'}, dense #{r.dense_rank or '-'}"
        print(f"{n:2}. {r.breadcrumb}")
        print(f"    {shown(eng.root / r.path)}:{r.lines()[0]}  score {r.score:.4f} ({ranks})")
        if r.explain:
            print(f"    {_explain_line(r.explain)}")
        if r.snippet:
            print(f"    {r.snippet}")
    return 0


def _json_result(eng: Engine, r) -> dict:
    """One result of ``search --json``: lines 1-based and inclusive, the heading
    as written (and as plain text), as MCP has them."""
    from mdseek.index.facade import heading_as_written

    first, last = r.lines()
    out = {
        "path": display_path(r.path),
        "heading": heading_as_written(eng, r),
        "heading_text": r.heading,
        "breadcrumb": r.breadcrumb,
        "anchor": r.slug,
        "level": r.level,
        "start_line": first,
        "end_line": last,
        "heading_line": r.heading_lines()[0],
        "score": r.score,
        "lexical_rank": r.lexical_rank,
        "dense_rank": r.dense_rank,
        "snippet": r.snippet,
    }
    if r.explain is not None:
        out["explain"] = r.explain
    return out


def _explain_terms(ex: dict) -> str:
    terms = ex.get("query_terms")
    if terms is None:
        return "query terms: (no lexical search)"
    dropped = ex.get("dropped_terms") or {}
    out = "query terms: " + (", ".join(terms) or "(none)")
    if dropped:
        out += "; left out: " + ", ".join(f"{w} ({why})" for w, why in dropped.items())
    return out


def _explain_line(ex: dict) -> str:
    """One line: each retriever's raw -> normalised score and weight, the section
    score, the document term and the final score."""
    parts = []
    weights = ex.get("weights", {})
    for name in ("lexical", "dense"):
        p = ex.get(name)
        if not p:
            continue
        raw = "-" if p.get("raw") is None else f"{p['raw']:.4g}"
        if ex.get("fusion") == "convex":
            norm = p.get("normalised")
            norm_s = "0" if norm is None else f"{norm:.3f}"
            parts.append(f"{name} {raw} -> {norm_s} x{weights.get(name, 0):g}")
        else:
            parts.append(f"{name} {raw} (#{p.get('rank') or '-'})")
    dw = ex.get("document_weight", 0)
    fusion = (
        "" if ex.get("fusion") == "convex" else f" [{ex.get('fusion')}, k={weights.get('rrf_k')}]"
    )
    rr = ex.get("rerank")
    rerank = ""
    if rr:
        score = "-" if rr.get("score") is None else f"{rr['score']:.4f}"
        rerank = f"; rerank {score} (reranker {rr.get('ms')} ms)"
    return (
        f"why: {' + '.join(parts) or 'no scores'}{fusion} = section {ex.get('section', 0):.3f};"
        f" document {ex.get('document', 0):.3f} x{dw:g}; final {ex.get('final', 0):.3f}{rerank}"
    )


def cmd_chunks(args: argparse.Namespace) -> int:
    from mdseek.index.chunk import Chunker
    from mdseek.index.parse import parse_bytes

    path = Path(args.file)
    if path.is_dir():
        raise CliError(f"{args.file} is a folder, not a file: `mdseek chunks` shows one file")
    if not path.is_file():
        raise CliError(f"{args.file}: no such file")
    data = path.read_bytes()
    tok = _tokenizer(args)
    doc = parse_bytes(data, path.name)
    chunks = Chunker(tok).chunk(doc)
    if args.json:
        out = [
            {
                "ordinal": c.ordinal,
                "heading": c.heading,
                "heading_path": list(c.heading_path),
                "breadcrumb": c.breadcrumb,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "sections": list(c.sections),
                "text": c.text,
                "embedding_text": c.embedding_text,
                "tokens": c.tokens,
            }
            for c in chunks
        ]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(
            f"{path}: title {doc.title!r}, {len(doc.sections)} sections, {len(chunks)} chunks, window {tok.window} tokens"
        )
        for c in chunks:
            print(
                f"{c.ordinal:3}  lines {c.start_line + 1}-{c.end_line}  {c.tokens:3} tokens  {c.breadcrumb}"
            )
    return 0


def cmd_coverage(args: argparse.Namespace) -> int:
    root = _folder(args.dir)
    tok = _tokenizer(args)
    out = coverage_of(root, tok, _filter(args))
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(
            f"coverage {out['coverage'] * 100:.2f}% of {out['body_tokens']} body tokens in "
            f"{len(out['files'])} files, {out['chunks']} chunks (window {out['window']} tokens)"
        )
        for rel, f in sorted(out["files"].items()):
            if f["coverage"] < 1:
                print(f"  {display_path(rel)}: {f['coverage'] * 100:.2f}%")
    return 0


def _human(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def cmd_status(args: argparse.Namespace) -> int:
    eng = _engine(args, need_files=False, shapes=False)
    st = eng.status()
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    labels = {
        "root": "folder",
        "index_path": "index file",
        "model": "model",
        "model_loaded": "model loaded",
        "model_error": "model error",
        "window": "model window (tokens)",
        "pending_embeds": "texts waiting for a vector",  # chunks and passages
    }
    rows = []
    for k, v in st.items():
        if k in ("root", "index_path"):
            v = shown(v)
        if k == "model_error" and not v:
            continue
        rows.append((labels.get(k, k.replace("_", " ")), _human(v)))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k + ':':<{width + 1}} {v}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from mdseek.index.embed import warm_default_session
    from mdseek.index.model import cache_dir

    from . import codecache

    warm_default_session()  # overlaps the protocol imports below
    codecache.install(cache_dir())  # lsprotocol's attrs classes, compiled once per machine
    try:
        from mdseek.lsp.server import run
    finally:
        codecache.finish()
    return run()


def cmd_mcp(args: argparse.Namespace) -> int:
    from mdseek.index.embed import warm_default_session

    warm = None if args.model else warm_default_session()  # overlaps the SDK imports below
    try:
        from mdseek.lsp.mcp_server import open_folders, serve

        dirs = [Path(d) for d in args.dirs] or [Path.cwd()]
        flt = _filter(args)
        if len(dirs) == 1 and dirs[0].is_dir() and not _shaped(args):
            args.dir = str(dirs[0])
            flt = _index_filter(args, dirs[0])  # the files `mdseek index` chose, kept
        reranker = _reranker(args)
        try:
            folders = open_folders(dirs, args.db, args.model, flt, _embed_settings(args), reranker)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
        return serve(folders)
    finally:
        if warm is not None:
            warm.join()  # see cmd_search


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


class _OnceModelError(logging.Filter):
    """The CLI prints why the model cannot load once (as a note or warning); the
    engine's log records saying the same are dropped unless --verbose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "cannot load embedding model" not in record.getMessage()


def cmd_prune(args: argparse.Namespace) -> int:
    from mdseek.index.prune import prune

    if not args.days >= 0:  # NaN too
        raise CliError(f"--days must be a number of days, 0 or more (got {args.days:g})")
    verdicts = prune(days=args.days, dry_run=args.dry_run)
    gone = "would remove" if args.dry_run else "removed"
    for v in verdicts:
        print(
            f"{gone if v.remove else 'kept'} {v.index.folder} ({v.index.size / 1e6:.1f} MB): {v.why}"
        )
    removed = [v for v in verdicts if v.remove]
    size = sum(v.index.size for v in removed) / 1e6
    print(
        f"{gone} {len(removed)} index{'' if len(removed) == 1 else 'es'} ({size:.1f} MB); "
        f"kept {len(verdicts) - len(removed)}" + (" (dry run)" if args.dry_run else "")
    )
    return 0


COMMANDS = {
    "index": cmd_index,
    "search": cmd_search,
    "chunks": cmd_chunks,
    "coverage": cmd_coverage,
    "status": cmd_status,
    "serve": cmd_serve,
    "mcp": cmd_mcp,
    "prune": cmd_prune,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="mdseek: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    if not args.verbose:
        for h in logging.getLogger().handlers:
            h.addFilter(_OnceModelError())
    # Progress a person waits through (the model's one-time export), without -v too.
    said = logging.StreamHandler(sys.stderr)
    said.setFormatter(logging.Formatter("mdseek: %(message)s"))
    tell = logging.getLogger("mdseek.progress")
    tell.setLevel(logging.INFO)
    tell.addHandler(said)
    tell.propagate = False
    try:
        check_model(getattr(args, "model", None))
        return COMMANDS[args.cmd](args) or 0
    except CliError as exc:
        print(f"mdseek: error: {exc}", file=sys.stderr)
        return 1
    except ModelUnavailable as exc:
        print(f"mdseek: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `mdseek search ... | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except sqlite3.Error as exc:  # the index failed under us (a full disk, damage found mid-run)
        if args.verbose:
            raise
        print(
            f"mdseek: error: the index failed: {exc} (run again with -v for details)",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        print("mdseek: interrupted; the index is consistent, run again to finish", file=sys.stderr)
        return 130
