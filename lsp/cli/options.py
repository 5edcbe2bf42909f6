"""The options several commands take (model settings, the index's folder and
file filter, progress, reranker), added to a command's parser.

Owns: these flags, their defaults ($MDSEEK_* variables) and help texts.
Imports no other module of the CLI.
"""

from __future__ import annotations

import argparse
import os

from mdseek.index.text.files import DEFAULT_MAX_FILE_SIZE


def add_common(p: argparse.ArgumentParser, model: bool = True) -> None:
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
            help="fp32 (default) or int8 (faster bulk embedding); its own vectors, remembered "
            "by the index; a change moves the vectors while the old ones serve ($MDSEEK_PRECISION)",
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


def add_index_opts(p: argparse.ArgumentParser) -> None:
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


def add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress on stderr (by default a bar on a terminal, otherwise a line every few seconds)",
    )


def add_rerank(p: argparse.ArgumentParser) -> None:
    from mdseek.index.api import MAX_TOP_N, TOP_N

    p.add_argument(
        "--rerank", default=os.environ.get("MDSEEK_RERANK") or None, metavar="NAME_OR_PATH",
        help="re-order the best sections with a sentence-transformers CrossEncoder (a folder "
        "or a name in the local Hugging Face cache; off by default; $MDSEEK_RERANK)",
    )  # fmt: skip
    p.add_argument(
        "--rerank-top", type=int, default=TOP_N, metavar="N",
        help=f"sections the reranker re-scores per query (default {TOP_N}, at most {MAX_TOP_N})",
    )  # fmt: skip
