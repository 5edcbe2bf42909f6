"""The places the settings table is written out: docs/settings.md's table
(made from it) and vscode-client/package.json's configuration (checked
against it), and the defaults the editors' files state, from :mod:`mdseek.index.settings`.

    python scripts/settings_doc.py            say what disagrees with the table (exit 1 if any)
    python scripts/settings_doc.py --write    write the table into docs/settings.md and the
                                              table's fields into package.json (the texts
                                              a person wrote there are kept)

tests/test_settings_table.py runs the same checks.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from mdseek.index import settings as table

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "settings.md"
PACKAGE = REPO / "vscode-client" / "package.json"
BEGIN = "<!-- the settings table: made by scripts/settings_doc.py --write; do not edit -->"
END = "<!-- end of the settings table -->"
# package.json's keys of a setting that the table decides
DECIDED = ("type", "default", "enum", "minimum", "maximum", "minItems", "scope")


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (tuple, list)):
        return ", ".join(f"`{x}`" for x in v) if v else "none"
    if isinstance(v, dict):
        return "`{}`"
    return f"`{v}`"


def _where(s: table.Setting) -> str:
    where = []
    if s.server:
        where.append("server")
    if s.commands:
        where.append("command line")
    if s.vscode_default is not table.ABSENT:
        where.append("VS Code")
    return ", ".join(where) or "environment"


def _bounds(s: table.Setting) -> str:
    if s.choices:
        return ", ".join(f"`{c}`" for c in s.choices)
    if s.type == "integer":
        high = s.maximum if s.maximum is not None else "any"
        cap = " (a client's: at most the cores)" if s.at_most_cores else ""
        return f"{s.minimum} to {high}{cap}"
    return ""


def doc_table() -> str:
    rows = [
        "| setting | where | flag (commands) | environment | default | bounds | "
        "workspace may set | what |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in table.SETTINGS:
        flag = ""
        if s.flag:
            flag = f"`{s.flag}{' ' + s.metavar if s.metavar else ''}` ({', '.join(s.commands)})"
        default = s.shown_default or _value(s.default)
        name = f"`{s.name}`" if s.server or s.vscode_default is not table.ABSENT else "(none)"
        may = "" if not (s.server or s.vscode_default is not table.ABSENT) else (
            "no" if s.restricted else "yes"
        )  # fmt: skip
        rows.append(
            f"| {name} | {_where(s)} | {flag} | {f'`{s.env}`' if s.env else ''} | {default} | "
            f"{_bounds(s)} | {may} | {s.help} |"
        )
    return "\n".join([BEGIN, *rows, END])


def doc_with_table(text: str) -> str:
    a, b = text.index(BEGIN), text.index(END) + len(END)
    return text[:a] + doc_table() + text[b:]


def vscode_schema(s: table.Setting) -> dict[str, Any]:
    """The keys of ``mdseek.NAME`` in package.json that the table decides."""
    d = table.vscode_default(s)
    kind = {
        "string": "string", "prompt": "string", "choice": "string", "integer": "integer",
        "boolean": "boolean", "globs": "array", "list": "array", "object": "object",
    }[s.type]  # fmt: skip
    out: dict[str, Any] = {"type": [kind, "null"] if d is None else kind, "default": d}
    if s.choices:
        out["enum"] = ([""] if d == "" else []) + list(s.choices)
    if s.type == "integer":
        if s.minimum is not None:
            out["minimum"] = s.minimum
        if s.maximum is not None:
            out["maximum"] = s.maximum
    if s.type == "list" and s.minimum is not None:
        out["minItems"] = s.minimum
    if s.vscode_scope:
        out["scope"] = s.vscode_scope
    return out


def _in_vscode() -> list[table.Setting]:
    return [s for s in table.SETTINGS if s.vscode_default is not table.ABSENT]


def package_problems(package: dict) -> list[str]:
    """Where package.json's configuration disagrees with the table."""
    props = package["contributes"]["configuration"]["properties"]
    found = []
    named = {f"mdseek.{s.name}" for s in _in_vscode()}
    for key in sorted(set(props) - named):
        found.append(f"package.json: {key} is not in the settings table")
    for s in _in_vscode():
        key = f"mdseek.{s.name}"
        if key not in props:
            found.append(f"package.json: {key} is missing")
            continue
        want = vscode_schema(s)
        for field in DECIDED:
            if props[key].get(field) != want.get(field):
                found.append(
                    f"package.json: {key} {field} is {props[key].get(field)!r}, "
                    f"the table says {want.get(field)!r}"
                )
    restricted = package["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
    want_restricted = {f"mdseek.{s.name}" for s in _in_vscode() if s.restricted}
    if set(restricted) != want_restricted:
        found.append(
            f"package.json: restrictedConfigurations differ from the table's restricted "
            f"settings: {sorted(set(restricted) ^ want_restricted)}"
        )
    return found


def package_written(package: dict) -> dict:
    props = package["contributes"]["configuration"]["properties"]
    for s in _in_vscode():
        prop = props.setdefault(f"mdseek.{s.name}", {"markdownDescription": s.help})
        want = vscode_schema(s)
        for field in DECIDED:
            if field in want:
                prop[field] = want[field]
            else:
                prop.pop(field, None)
    trust = package["capabilities"]["untrustedWorkspaces"]
    want = [f"mdseek.{s.name}" for s in _in_vscode() if s.restricted]
    kept = [k for k in trust["restrictedConfigurations"] if k in want]  # their order kept
    trust["restrictedConfigurations"] = kept + [k for k in want if k not in kept]
    return package


def editor_problems() -> list[str]:
    """The defaults the editors' configuration files (lsp/editors/) state in
    words ("searchLimit ... (default 20)") against the table's."""
    found = []
    for path in sorted((REPO / "lsp" / "editors").rglob("*")):
        if not path.is_file():
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for s in table.SERVER_SETTINGS:
                said = re.search(rf"\b{s.name}\b[^(\n]*\(default ([^,;)\s]+)", line)
                if said and s.default is not None and said[1] != str(s.default):
                    rel = path.relative_to(REPO)
                    found.append(f"{rel}:{n}: {s.name} default {said[1]}, the table's {s.default}")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write docs/settings.md, package.json")
    args = ap.parse_args(argv)
    doc, package = DOC.read_text(), json.loads(PACKAGE.read_text())
    if args.write:
        DOC.write_text(doc_with_table(doc))
        text = json.dumps(package_written(package), indent=2, ensure_ascii=False) + "\n"
        PACKAGE.write_text(text)
        return 0
    found = package_problems(package) + editor_problems()
    if doc_with_table(doc) != doc:
        found.append("docs/settings.md: its table differs from the settings table (--write)")
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
