"""The ``mdseek`` command line: a thin front end over :mod:`mdseek.index`.

    mdseek index DIR                 index (incrementally) with a progress bar
    mdseek search DIR "query"        hybrid search (indexes first if needed)
    mdseek chunks FILE               how a file is chunked (no index needed)
    mdseek coverage DIR              share of body tokens inside a vector's window
    mdseek status DIR                what the index holds
    mdseek serve [--stdio]           the language server over stdio

Errors go to stderr with exit code 2 (usage) or 1 (anything else).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from mdseek.index.coverage import Coverage, chunk_coverage
from mdseek.index.files import DEFAULT_MAX_FILE_SIZE, FileFilter, display_path, scan
from mdseek.index.model import ModelUnavailable, load_tokenizer, resolve_model
from mdseek.index.store import IndexFileError

log = logging.getLogger("mdseek")


class CliError(Exception):
    pass


def _add_common(p: argparse.ArgumentParser, model: bool = True) -> None:
    if model:
        p.add_argument(
            "--model",
            default=os.environ.get("MDSEEK_MODEL") or None,
            help="sentence-transformers model name or path (default: bundled all-MiniLM-L6-v2)",
        )
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens (stderr)")


def _add_index_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", help="workspace folder")
    p.add_argument(
        "--db",
        default=os.environ.get("MDSEEK_INDEX") or None,
        help="index file (default: DIR/.mdseek/index.sqlite, a folder git ignores)",
    )
    p.add_argument("--max-file-size", type=int, default=DEFAULT_MAX_FILE_SIZE, help="bytes")
    p.add_argument("--include", action="append", help="glob to index (repeatable)")
    p.add_argument("--exclude", action="append", help="glob to skip (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="mdseek", description="Find markdown sections by meaning.")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("index", help="index a folder (incremental)")
    _add_index_opts(p)
    _add_common(p)
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = sub.add_parser("search", help="search a folder's sections (indexes first if needed)")
    _add_index_opts(p)
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--mode", choices=["hybrid", "lexical", "dense"], default="hybrid")
    p.add_argument("--json", action="store_true")
    _add_common(p)

    p = sub.add_parser("chunks", help="show how one file is chunked (no index)")
    p.add_argument("file")
    p.add_argument("--json", action="store_true")
    _add_common(p)

    p = sub.add_parser("coverage", help="share of body tokens inside some vector's window")
    p.add_argument("dir")
    p.add_argument("--max-file-size", type=int, default=DEFAULT_MAX_FILE_SIZE)
    p.add_argument("--json", action="store_true")
    _add_common(p)

    p = sub.add_parser("status", help="what the index of a folder holds")
    _add_index_opts(p)
    p.add_argument("--json", action="store_true")
    _add_common(p)

    p = sub.add_parser("serve", help="run the language server on stdio")
    p.add_argument("--stdio", action="store_true", help="accepted and ignored (stdio is the default)")
    _add_common(p, model=False)
    return ap


def _filter(args: argparse.Namespace) -> FileFilter:
    kw: dict = {"max_file_size": args.max_file_size}
    if getattr(args, "include", None):
        kw["include"] = tuple(args.include)
    if getattr(args, "exclude", None):
        kw["exclude"] = FileFilter().exclude + tuple(args.exclude)
    return FileFilter(**kw)


def _engine(args: argparse.Namespace):
    from mdseek.index.engine import Engine

    root = Path(args.dir)
    if not root.is_dir():
        raise CliError(f"{args.dir}: no such folder")
    try:
        return Engine(root, index_path=args.db, model=args.model, file_filter=_filter(args))
    except IndexFileError as exc:
        raise CliError(str(exc)) from exc


class _Bar:
    """A tqdm progress bar on stderr per stage (silent when not a terminal... or asked)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bars: dict[str, object] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        bar = self.bars.get(stage)
        if bar is None:
            label = {"parse": "chunking", "embed": "embedding"}.get(stage, stage)
            bar = self.bars[stage] = tqdm(total=total, desc=label, unit=" files" if stage == "parse" else " chunks", file=sys.stderr, leave=True)
        bar.n = done  # type: ignore[attr-defined]
        bar.refresh()  # type: ignore[attr-defined]

    def close(self) -> None:
        for b in self.bars.values():
            b.close()  # type: ignore[attr-defined]


def cmd_index(args: argparse.Namespace) -> int:
    eng = _engine(args)
    bar = _Bar(not args.no_progress and not args.json)
    try:
        rep = eng.index(progress=bar)
    finally:
        bar.close()
    if args.json:
        out = rep.to_dict()
        for key in ("skipped", "errors"):
            out[key] = [(display_path(rel), why) for rel, why in out[key]]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        rate = rep.chunks_written / rep.seconds if rep.seconds else 0.0
        erate = rep.embedded / rep.embed_seconds if rep.embed_seconds else 0.0
        load = eng.embedder.load_seconds
        print(
            f"{rep.files} files: {rep.indexed} indexed, {rep.unchanged} unchanged, "
            f"{rep.removed} removed, {len(rep.skipped)} skipped; {rep.chunks} chunks "
            f"({rep.chunks_written} written, {rep.embedded} embedded) in {rep.seconds:.1f}s"
            f" ({rate:.0f} chunks/s overall"
            + (f"; embedding {erate:.0f} chunks/s, model load {load:.1f}s" if rep.embedded and load else "")
            + ")"
        )
        for rel, why in rep.skipped:
            print(f"  skipped {display_path(rel)}: {why}", file=sys.stderr)
        # Files that failed were each logged on one line (path and reason).
        if rep.lexical_only_reason:
            print(f"warning: {rep.lexical_only_reason}; lexical search only", file=sys.stderr)
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    eng = _engine(args)
    rep = eng.index(progress=_Bar(not args.json and sys.stderr.isatty()))
    resp = eng.search(args.query, limit=args.limit, mode=args.mode)
    if args.json:
        rows = [{**r.to_dict(), "path": display_path(r.path)} for r in resp.results]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        if resp.note:
            print(f"note: {resp.note}", file=sys.stderr)
        if not resp.results:
            print("no results")
        for n, r in enumerate(resp.results, 1):
            ranks = f"lexical #{r.lexical_rank or '-'}, dense #{r.dense_rank or '-'}"
            print(f"{n:2}. {r.breadcrumb}")
            print(f"    {display_path(r.path)}:{r.start_line + 1}-{r.end_line}  score {r.score:.4f} ({ranks})")
            if r.snippet:
                print(f"    {r.snippet}")
    del rep
    return 0


def cmd_chunks(args: argparse.Namespace) -> int:
    from mdseek.index.chunk import Chunker
    from mdseek.index.parse import parse_bytes

    path = Path(args.file)
    if not path.is_file():
        raise CliError(f"{args.file}: no such file")
    data = path.read_bytes()
    tok = load_tokenizer(resolve_model(args.model))
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
        print(f"{path}: title {doc.title!r}, {len(doc.sections)} sections, {len(chunks)} chunks, window {tok.window} tokens")
        for c in chunks:
            print(f"{c.ordinal:3}  lines {c.start_line + 1}-{c.end_line}  {c.tokens:3} tokens  {c.breadcrumb}")
    return 0


def coverage_of(root: Path, tok, flt: FileFilter) -> dict:
    from mdseek.index.chunk import Chunker
    from mdseek.index.parse import parse_bytes

    chunker = Chunker(tok)
    total = Coverage()
    files = {}
    for f in scan(root, flt):
        try:
            doc = parse_bytes(f.path.read_bytes(), f.rel)
            chunks = chunker.chunk(doc)
        except Exception as exc:  # one bad file costs only itself
            log.warning("skipping %s: %s", display_path(f.rel), exc)
            continue
        cov = chunk_coverage(tok, chunks)
        total.add(cov)
        files[display_path(f.rel)] = {
            "coverage": round(cov.fraction, 6),
            "body_tokens": cov.body_tokens,
            "covered_tokens": cov.covered_tokens,
            "chunks": cov.vectors,
            "max_tokens": max((c.tokens for c in chunks), default=0),
        }
    return {
        "coverage": round(total.fraction, 6),
        "body_tokens": total.body_tokens,
        "covered_tokens": total.covered_tokens,
        "chunks": total.vectors,
        "files": files,
        "window": tok.window,
        "model": tok.name,
    }


def cmd_coverage(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if not root.is_dir():
        raise CliError(f"{args.dir}: no such folder")
    tok = load_tokenizer(resolve_model(args.model))
    out = coverage_of(root, tok, FileFilter(max_file_size=args.max_file_size))
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


def cmd_status(args: argparse.Namespace) -> int:
    eng = _engine(args)
    st = eng.status()
    if args.json:
        print(json.dumps(st, indent=2))
    else:
        for k, v in st.items():
            print(f"{k}: {v}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from mdseek.lsp.server import run

    return run()


COMMANDS = {
    "index": cmd_index,
    "search": cmd_search,
    "chunks": cmd_chunks,
    "coverage": cmd_coverage,
    "status": cmd_status,
    "serve": cmd_serve,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="mdseek: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        return COMMANDS[args.cmd](args) or 0
    except CliError as exc:
        print(f"mdseek: error: {exc}", file=sys.stderr)
        return 1
    except ModelUnavailable as exc:
        print(f"mdseek: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("mdseek: interrupted; the index is consistent, run again to finish", file=sys.stderr)
        return 130
