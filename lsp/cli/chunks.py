"""``mdseek chunks`` and ``mdseek coverage``: how files are cut into chunks and
how much of their text fits the model's window (no index needed).

Owns: these commands' output. Imports :mod:`.common`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from mdseek.index.text.coverage import coverage_of
from mdseek.index.text.files import display_path

from .common import CliError, file_filter, folder_arg, window_tokenizer


def cmd_chunks(args: argparse.Namespace) -> int:
    from mdseek.index.text.chunk import Chunker
    from mdseek.index.text.encoding import NotText
    from mdseek.index.text.parse import TooManyHeadings, parse_bytes

    path = Path(args.file)
    if path.is_dir():
        raise CliError(f"{args.file} is a folder, not a file: `mdseek chunks` shows one file")
    if not path.is_file():
        raise CliError(f"{args.file}: no such file")
    data = path.read_bytes()
    tok = window_tokenizer(args)
    try:
        doc = parse_bytes(data, path.name)
    except NotText as exc:
        raise CliError(f"{args.file}: {exc}; mdseek does not index it") from None
    except TooManyHeadings as exc:
        raise CliError(f"{args.file}: {exc}") from None
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
    root = folder_arg(args.dir)
    tok = window_tokenizer(args)
    out = coverage_of(root, tok, file_filter(args))
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
