"""The options of the commands, added to a command's parser: the settings a
command uses, from the settings table (:mod:`mdseek.index.settings`), and the
few others several commands share (the index's folder, progress, -v).

Each command shows only the settings whose table entry names it. A flag wins
over its environment variable, which wins over the table's default
(:func:`from_environment`, after parsing), as in the language server and MCP.

Owns: these flags and their help texts. Imports no other module of the CLI.
"""

from __future__ import annotations

import argparse

from mdseek.index.api import settings as table

# Settings whose flag, when given, shapes the index (None = not given).
SHAPING = ("include", "exclude", "maxFileSize", "ignoreFiles")


def _help(s: table.Setting, command: str) -> str:
    shown = s.shown_default or (", ".join(s.default) if isinstance(s.default, tuple) else s.default)
    bits = [s.help]
    if s.type == "globs":
        bits[0] += " (repeatable)"
    if s.maximum is not None:
        bits.append(f"{s.minimum} to {s.maximum}")
    if s.type not in ("boolean", "globs") or s.default:
        bits.append(f"default: {'$' + s.env + ', else ' if s.env else ''}{shown}")
    elif s.env:
        bits.append(f"${s.env}")
    if s.name in SHAPING and command in ("search", "related"):
        bits.append("must match what the index holds; filter results with --path")
    return "; ".join(str(b) for b in bits)


def _dest(s: table.Setting) -> str:
    """The attribute of a flag's value (``--db`` -> ``db``)."""
    assert s.flag
    if s.flag.startswith("--no-"):  # a setting on by default: the flag turns it off
        return table.attr(s)
    return s.flag.lstrip("-").replace("-", "_")


def add_settings(p: argparse.ArgumentParser, command: str) -> None:
    """The flags of the settings ``command`` uses, with -v."""
    for s in table.for_command(command):
        assert s.flag
        kw: dict = {"help": _help(s, command)}
        if s.type == "boolean" and s.flag.startswith("--no-"):
            kw.update(action="store_const", const=False, default=None, dest=_dest(s))
        elif s.type == "boolean":
            kw.update(action="store_true", default=None)
        else:
            kw["metavar"] = s.metavar
            fill = not s.env and s.name not in SHAPING and s.default is not None
            kw["default"] = s.default if fill else None
        if s.type == "integer":
            kw["type"] = int
        elif s.type == "choice":
            kw.update(choices=list(s.choices), metavar=None)
        elif s.type == "globs":
            kw["action"] = "append"
        p.add_argument(s.flag, **kw)
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens (stderr)")


def from_environment(args: argparse.Namespace, command: str) -> None:
    """Fill the settings no flag gave from their environment variables (a bad
    value is a usage error in the table's words)."""
    for s in table.for_command(command):
        name = _dest(s)
        if s.env and getattr(args, name, None) is None:
            value, problem = table.from_env(s)
            if problem:
                raise ValueError(problem)
            setattr(args, name, value)


def add_index_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", metavar="DIR", help="the folder whose markdown files are indexed")


def add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress on stderr (by default a bar on a terminal, otherwise a line every few seconds)",
    )
