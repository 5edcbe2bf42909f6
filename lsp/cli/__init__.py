"""The ``mdseek`` command line: a thin front end over :mod:`mdseek.index`.

    mdseek index DIR                 index (incrementally) with a progress bar
    mdseek search DIR "query"        hybrid search (indexes first if needed; --explain: score parts)
    mdseek related PATH[:LINE]       the sections elsewhere about the same thing (--unlinked)
    mdseek chunks FILE               how a file is chunked (no index needed)
    mdseek coverage DIR              share of body tokens inside a vector's window
    mdseek status DIR                what the index holds
    mdseek serve [--stdio]           the language server over stdio
    mdseek mcp [DIR ...]             the MCP server (tools for AI agents) over stdio

Errors go to stderr with exit code 2 (usage) or 1 (anything else).

This package is the ``mdseek`` console script (``main``). Here: the parser
(every command and its flags) and the dispatch; each command runs in its own
module (:mod:`.index_status`, :mod:`.search`, :mod:`.related`, :mod:`.chunks`,
:mod:`.servers`),
on what :mod:`.common`, :mod:`.options` and :mod:`.progress` share. No module
of the package imports this one.
"""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3
import sys

from mdseek.index.api import ModelUnavailable
from mdseek.index.api import settings as table

from .chunks import cmd_chunks, cmd_coverage
from .common import CliError, UsageError, check_model
from .index_status import cmd_index, cmd_prune, cmd_status
from .options import add_index_opts, add_progress, add_settings, from_environment
from .related import cmd_related
from .search import cmd_search
from .servers import cmd_mcp, cmd_serve


def epilog(command: str | None = None) -> str:
    """The environment variables a command reads (all of them for ``mdseek``)."""
    lines = []
    for s in table.SETTINGS:
        if not s.env:
            continue
        if command is None or command in s.commands:
            said = f"default for {s.flag}" if s.flag else s.help
        elif command == "serve":  # the language server reads them all
            said = f"default of the {s.name} setting" if s.server else s.help
        elif not s.flag and not s.server:
            said = s.help
        else:
            continue
        lines.append(f"  {s.env:<24}{said}\n")
    return (
        "environment (a flag or setting wins over its variable; docs/settings.md):\n"
        + "".join(lines)
        + "\nNothing is downloaded at run time (HF_HUB_OFFLINE=1). Run `mdseek COMMAND --help`\n"
        "for a command's options."
    )


def build_parser() -> argparse.ArgumentParser:
    from mdseek import __version__

    ap = argparse.ArgumentParser(
        prog="mdseek",
        description="Find markdown sections by meaning: a language server and a command line.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"mdseek {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help,
            description=help[0].upper() + help[1:] + ".",
            epilog=epilog(name),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    p = command("index", "index a folder (incremental: only changed sections are embedded)")
    add_index_opts(p)
    add_settings(p, "index")
    add_progress(p)
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
    add_index_opts(p)
    p.add_argument(
        "query",
        metavar="QUERY",
        help='what you are looking for, in your own words (quote it: "...")',
    )
    p.add_argument(
        "--limit",
        default="10",
        metavar="N",
        help=f"how many sections to print (1 to {table.MAX_LIMIT}; default 10)",
    )
    p.add_argument(
        "--mode",
        default=table.DEFAULT_MODE,
        metavar="{" + ",".join(table.Mode) + "}",
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
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only notes with this tag or a tag under it (#area matches #area/sub; repeatable: "
        "all must hold)",
    )
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FIELD<OP>VALUE",
        help="only notes whose front matter passes: status=published, owner~ops (contains), "
        "status!=draft, date>=2024-01-01 (repeatable: all must hold; list fields match any element)",
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
    p.add_argument(
        "--section",
        metavar="PATH:LINE",
        help="with --explain: where the section holding that line ranked in each retriever, and why",
    )
    add_settings(p, "search")
    add_progress(p)

    p = command(
        "related",
        "the sections elsewhere in a folder about the same thing as one section "
        "(indexes first if needed)",
    )
    p.add_argument(
        "target",
        metavar="PATH[:LINE]",
        help="a markdown file, and a line (1-based) of the section; without it the file's "
        "first section",
    )
    p.add_argument(
        "--dir",
        metavar="DIR",
        help="the folder (default: the current folder when PATH is inside it, else PATH's folder)",
    )
    p.add_argument(
        "--limit",
        default="5",
        metavar="N",
        help=f"how many sections to print (1 to {table.MAX_LIMIT}; default 5)",
    )
    p.add_argument(
        "--unlinked",
        action="store_true",
        help="leave out the sections this section already links to or is linked from",
    )
    p.add_argument(
        "--json", action="store_true", help="print the answer as a JSON object (docs/cli.md)"
    )
    add_settings(p, "related")
    add_progress(p)

    p = command("chunks", "show how one file is chunked (no index needed)")
    p.add_argument("file", metavar="FILE", help="a markdown file")
    p.add_argument("--json", action="store_true", help="print the chunks as JSON")
    add_settings(p, "chunks")

    p = command("coverage", "share of body tokens inside some vector's window")
    p.add_argument("dir", metavar="DIR", help="the folder whose markdown files are measured")
    p.add_argument("--json", action="store_true", help="print per-file figures as JSON")
    add_settings(p, "coverage")

    p = command("status", "what the index of a folder holds and where it is")
    add_index_opts(p)
    p.add_argument("--json", action="store_true", help="print the status as JSON")
    add_settings(p, "status")

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
    add_settings(p, "prune")

    p = command("serve", "run the language server on stdio (for editors)")
    p.add_argument(
        "--stdio", action="store_true", help="accepted and ignored (stdio is the default)"
    )
    add_settings(p, "serve")

    p = command("mcp", "run the MCP server (search tools for AI agents) on stdio")
    p.add_argument(
        "dirs", nargs="*", metavar="DIR", help="folders to serve (default: the current folder)"
    )
    add_settings(p, "mcp")
    return ap


class _OnceModelError(logging.Filter):
    """The CLI prints why the model cannot load once (as a note or warning); the
    engine's log records saying the same are dropped unless --verbose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "cannot load embedding model" not in record.getMessage()


def _set_up_logging(verbose: bool) -> None:
    """Records to stderr, one line each. Only handlers made here are changed: a host
    that already logs (a test runner calling main() in-process) keeps its own."""
    root = logging.getLogger()
    before = set(root.handlers)
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="mdseek: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    if not verbose:
        for h in set(root.handlers) - before:
            h.addFilter(_OnceModelError())
    # Progress a person waits through (the model's one-time export), without -v too;
    # a second main() in one process replaces the first one's handler.
    tell = logging.getLogger("mdseek.progress")
    for old in [h for h in tell.handlers if getattr(h, "mdseek_cli", False)]:
        tell.removeHandler(old)
    said = logging.StreamHandler(sys.stderr)
    said.setFormatter(logging.Formatter("mdseek: %(message)s"))
    said.mdseek_cli = True  # type: ignore[attr-defined]
    tell.setLevel(logging.INFO)
    tell.addHandler(said)
    tell.propagate = False


COMMANDS = {
    "index": cmd_index,
    "search": cmd_search,
    "related": cmd_related,
    "chunks": cmd_chunks,
    "coverage": cmd_coverage,
    "status": cmd_status,
    "serve": cmd_serve,
    "mcp": cmd_mcp,
    "prune": cmd_prune,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _set_up_logging(args.verbose)
    try:
        try:
            from_environment(args, args.cmd)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        check_model(getattr(args, "model", None))
        return COMMANDS[args.cmd](args) or 0
    except CliError as exc:
        print(f"mdseek: error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, UsageError) else 1
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
