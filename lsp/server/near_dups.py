"""Near-duplicate hints: a section of an open document that says what another
section says (the engine decides: :func:`mdseek.index.api.near_duplicates`)
gets a hint on its heading naming the other (its file and 1-based line, and
a related location), and two quick fixes: "replace with a link" (the
section's body becomes a link to the other; a wiki link in a wiki vault) and,
in a wiki vault (:meth:`.roots.Root.links_by_wiki`), "replace with an embed"
(``![[note#heading]]``). Off with the ``nearDuplicates`` setting.

Owns: the diagnostics of code ``near-duplicate`` and their code actions.
Imports no other feature module.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from lsprotocol import types

from mdseek.index.api import FolderState

from .roots import Root
from .workspace import Workspace

CODE = "near-duplicate"
MAX_NAMED = 3  # others a hint names (best first); each gets its quick fixes


def hints(ws: Workspace, root: Root, path: Path, lines: list[str]) -> list[types.Diagnostic]:
    """The near-duplicate hints of the document at ``path`` (indexed as
    saved), one per section that has near-duplicates."""
    if not ws.settings.near_duplicates or root.state != FolderState.READY:
        return []
    rel = root.rel(path)
    try:
        found = root.folder.near_duplicates(rel)
    except Exception:  # the folder closed meanwhile: no hints this time
        return []
    by_section: dict[tuple[int, int], list] = {}
    for d in found:
        by_section.setdefault((d.section.start_line, d.section.end_line), []).append(d)
    out = []
    for dups in by_section.values():
        me = dups[0].section
        if me.start_line >= len(lines):
            continue
        named = dups[:MAX_NAMED]
        best = named[0].other
        more = len(dups) - 1
        message = f"says what {_name(best, rel)} says (similarity {named[0].score:.2f})"
        if more:
            message += f", and {more} other section{'s' if more > 1 else ''}"
        heading_end = max(me.start_line, me.body_line - 1)
        out.append(
            types.Diagnostic(
                range=ws.pos.range(
                    lines, me.start_line, 0, heading_end, len(_at(lines, heading_end))
                ),
                message="Near-duplicate: this section " + message,
                severity=types.DiagnosticSeverity.Hint,
                source="mdseek",
                code=CODE,
                data={
                    "kind": CODE,
                    "heading": me.heading,
                    "start": me.start_line,
                    "body": me.body_line,
                    "end": me.end_line,
                    "others": [
                        {"path": o.other.path, "heading": o.other.heading, "slug": o.other.slug}
                        for o in named
                    ],
                },
                related_information=[
                    types.DiagnosticRelatedInformation(
                        location=types.Location(
                            uri=ws.uri_for(root.path / o.other.path),
                            range=_other_range(o.other.start_line),
                        ),
                        message=f"near-duplicate (similarity {o.score:.2f})",
                    )
                    for o in named
                ],
            )
        )
    return out


def _name(other, rel: str) -> str:
    where = "this file" if other.path == rel else other.path
    what = f"'{other.heading}'" if other.heading else "the text before the first heading"
    return f"{what} in {where} (line {other.start_line + 1})"


def _at(lines: list[str], n: int) -> str:
    return lines[n] if 0 <= n < len(lines) else ""


def _other_range(line: int) -> types.Range:
    # the other file's heading line, first column: no need to read that file
    p = types.Position(line=line, character=0)
    return types.Range(start=p, end=p)


# -- quick fixes ---------------------------------------------------------------------


def fixes(
    ws: Workspace, uri: str, diagnostics: Iterable[types.Diagnostic]
) -> list[types.CodeAction]:
    """Quick fixes: "replace with a link to ..." (and, in a wiki vault, "... an embed of ...")
    for each near-duplicate hint among ``diagnostics`` whose section is still
    where the hint says (the buffer may have changed since the save)."""
    found = ws.doc_for_uri(uri)
    root = ws.root_for(found[0]) if found else None
    if found is None or root is None:
        return []
    path, doc = found
    lines = doc.lines()
    rel = root.rel(path)
    actions: list[types.CodeAction] = []
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else None
        if d.source != "mdseek" or not data or data.get("kind") != CODE:
            continue
        span = _body(lines, data)
        if span is None:
            continue
        wiki = root.links_by_wiki()
        for n, other in enumerate(data.get("others") or []):
            if not isinstance(other, dict) or not isinstance(other.get("path"), str):
                continue
            target = str(other["path"])
            heading, slug = str(other.get("heading") or ""), str(other.get("slug") or "")
            shown = f"'{heading}' in {target}" if heading else target
            if wiki:
                note = _note(root, rel, target)
                ref = f"{note}#{heading}" if heading else note
                forms = [("a link to", f"See [[{ref}]]."), ("an embed of", f"![[{ref}]]")]
            else:
                dest = quote(_relative(rel, target), safe="/-_.~") if target != rel else ""
                dest += f"#{slug}" if slug else ""
                label = heading or posixpath.splitext(posixpath.basename(target))[0]
                forms = [("a link to", f"See [{label}]({dest or '#'}).")]
            for k, (what, text) in enumerate(forms):
                actions.append(
                    types.CodeAction(
                        title=f"Replace this section's text with {what} {shown}",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[d],
                        is_preferred=n == 0 and k == 0,
                        edit=types.WorkspaceEdit(changes={uri: [_replace(ws, lines, span, text)]}),
                    )
                )
    return actions


def _body(lines: list[str], data: dict) -> tuple[int, int] | None:
    """The section's body lines [start, end) in the buffer, if its heading is
    still on its line and it still ends where the hint says."""
    start, body, end = data.get("start"), data.get("body"), data.get("end")
    heading = data.get("heading")
    if not all(isinstance(v, int) for v in (start, body, end)) or not isinstance(heading, str):
        return None
    assert isinstance(start, int) and isinstance(body, int) and isinstance(end, int)
    if not 0 <= start <= body <= end <= len(lines):
        return None
    if heading and heading not in _at(lines, start):
        return None
    if end < len(lines) and not lines[end].lstrip().startswith("#"):
        return None
    return body, end


def _replace(ws: Workspace, lines: list[str], span: tuple[int, int], text: str) -> types.TextEdit:
    body, end = span
    if end < len(lines):  # up to the next heading, a blank line kept before it
        rng = ws.pos.range(lines, body, 0, end, 0)
        return types.TextEdit(range=rng, new_text=f"\n{text}\n\n")
    last = len(lines) - 1
    rng = ws.pos.range(lines, body, 0, last, len(lines[last]))
    return types.TextEdit(range=rng, new_text=f"\n{text}\n")


def _relative(rel: str, target: str) -> str:
    return posixpath.relpath(target, posixpath.dirname(rel) or ".")


def _note(root: Root, rel: str, target: str) -> str:
    """How a wiki link names ``target``: "" in its own file, its name without
    the extension when no other note has it, else its path without it."""
    if target == rel:
        return ""
    stem = posixpath.splitext(posixpath.basename(target))[0]
    same = [
        f for f in root.markdown_files() if posixpath.splitext(posixpath.basename(f))[0] == stem
    ]
    return stem if len(same) <= 1 else posixpath.splitext(target)[0]
