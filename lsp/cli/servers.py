"""``mdseek serve`` and ``mdseek mcp``: start the language server or the MCP
server on stdio (:mod:`mdseek.lsp.server.app`, :mod:`mdseek.lsp.mcp.server`,
imported only when asked for).

Owns: starting them from the command line. Imports :mod:`.common`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import CliError, embed_settings, file_filter, index_filter, load_reranker, shapes_index


def cmd_serve(args: argparse.Namespace) -> int:
    from mdseek.index.api import cache_dir, warm_default_session
    from mdseek.lsp.server import codecache

    warm_default_session()  # overlaps the protocol imports below
    codecache.install(cache_dir())  # lsprotocol's attrs classes, compiled once per machine
    try:
        from mdseek.lsp.server.app import run
    finally:
        codecache.finish()
    return run()


def cmd_mcp(args: argparse.Namespace) -> int:
    from mdseek.index.api import warm_default_session

    warm = None if args.model else warm_default_session()  # overlaps the SDK imports below
    try:
        from mdseek.lsp.mcp.server import open_folders, serve

        dirs = [Path(d) for d in args.dirs] or [Path.cwd()]
        flt = file_filter(args)
        if len(dirs) == 1 and dirs[0].is_dir() and not shapes_index(args):
            args.dir = str(dirs[0])
            flt = index_filter(args, dirs[0])  # the files `mdseek index` chose, kept
        reranker = load_reranker(args)
        try:
            folders = open_folders(dirs, args.db, args.model, flt, embed_settings(args), reranker)
        except ValueError as exc:
            raise CliError(str(exc)) from exc
        return serve(folders)
    finally:
        if warm is not None:
            warm.join()  # see cmd_search
