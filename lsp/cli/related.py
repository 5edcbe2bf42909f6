"""``mdseek related PATH[:LINE]``: the sections elsewhere in the folder about the
same thing as one section (the one holding LINE, 1-based; without it the
file's first section), as the hover and MCP's ``related`` list them;
``--unlinked`` leaves out what that section already links to or is linked from.

The folder is ``--dir`` (default: the current folder when PATH lies inside it,
else PATH's own folder); it is indexed first if needed, as for ``mdseek search``.

Owns: this command's checks and output. Imports :mod:`.common`, :mod:`.progress`
and :mod:`.search` (one result's JSON, as ``search --json`` writes it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mdseek.index.api import requests
from mdseek.index.text.files import display_path

from .common import CliError, UsageError, folder_for, shown
from .search import index_now, json_result


def split_target(target: str) -> tuple[str, int | None]:
    """``PATH[:LINE]`` -> (path, 1-based line or None); a usage error otherwise."""
    path, sep, line = target.rpartition(":")
    if sep and line.isdigit():
        if int(line) < 1 or not path:
            raise UsageError(
                f"give PATH or PATH:LINE with LINE from 1, e.g. notes/a.md:12 (got {target!r})"
            )
        return path, int(line)
    return target, None


def _folder_for(file: Path, given: str | None) -> Path:
    if given is not None:
        return Path(given)
    cwd = Path.cwd().resolve()
    if file.is_relative_to(cwd) and cwd not in (Path.home().resolve(), Path(cwd.anchor)):
        return cwd
    return file.parent


def cmd_related(args: argparse.Namespace) -> int:
    try:
        limit = requests.check_limit(args.limit)
    except requests.BadRequest as exc:
        raise UsageError(str(exc)) from None
    path, line = split_target(args.target)
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise CliError(f"{path}: no such file")
    args.dir = str(_folder_for(file, args.dir))
    folder = folder_for(args, check_index=False, shapes=False)
    root = folder.path
    if not file.is_relative_to(root):
        raise CliError(f"{path} is not in {shown(root)}")
    from mdseek.index.api import NoSuchSection, NotIndexed, find_section

    try:
        doc = folder.read_document(str(file))
        first = doc.sections[0].start_line if doc.sections else 0
        sec = find_section(doc, line=first if line is None else line - 1)
    except (NotIndexed, NoSuchSection) as exc:
        raise CliError(str(exc)) from None
    index_now(args, folder)
    slug = sec.heading.slug if sec.heading else None
    resp = folder.related(doc.path, slug, sec.start_line, limit, unlinked=args.unlinked)
    if args.json:
        out = {
            "path": display_path(doc.path),
            "line": sec.start_line + 1,
            "breadcrumb": sec.breadcrumb,
            "unlinked": args.unlinked,
            "mode": resp.mode,
            "note": resp.note,
            "results": [json_result(folder, r) for r in resp.results],
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    if resp.note:
        print(f"note: {resp.note}", file=sys.stderr)
    what = "unlinked sections" if args.unlinked else "sections"
    print(f"related to {shown(root / doc.path)}:{sec.start_line + 1} ({sec.breadcrumb}):")
    if not resp.results:
        print(f"no related {what}")
    for n, r in enumerate(resp.results, 1):
        print(f"{n:2}. {r.breadcrumb}")
        print(f"    {shown(root / r.path)}:{r.lines()[0]}  score {r.score:.4f}")
        if r.snippet:
            print(f"    {r.snippet}")
    return 0
