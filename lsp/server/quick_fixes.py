"""The quick fixes offered on mdseek's diagnostics (:mod:`.diagnostics`): a
broken anchor pointed at the existing headings of its target most like it
(named by their text; none that is unlike it), a missing
note created (never outside the link's workspace folder, never over a file).

Owns: the code actions for diagnostics with ``data`` of kind ``anchor`` or
``missing``. Imports no other feature module.
"""

from __future__ import annotations

import difflib
import os
import posixpath
import re
from collections.abc import Iterable
from urllib.parse import quote

from lsprotocol import types

from mdseek.index.links.links import Link, find_links, link_at
from mdseek.index.text.document import ParsedDocument
from mdseek.index.text.parse import title_from_path

from .roots import Root
from .workspace import Workspace


def _similar(a: str, b: str) -> float:
    """Two words: a shared stem counts (rolling ~ rollback), weak likeness does not."""
    if a == b:
        return 1.0
    prefix = len(os.path.commonprefix([a, b]))
    if prefix >= 4 or (prefix >= 3 and min(len(a), len(b)) == prefix):
        return 0.6 + 0.4 * prefix / max(len(a), len(b))
    r = difflib.SequenceMatcher(None, a, b).ratio()
    return r if r >= 0.6 else 0.0


RELATED = 0.35  # the similarity under which a heading is not offered as the one meant


def nearest_headings(
    doc: ParsedDocument, anchor: str, by_text: bool, n: int = 3
) -> list[tuple[str, str]]:
    """What a broken anchor most likely meant: the target's headings whose
    slugs (or texts, for wiki links) are closest to it, word by word and as a
    whole, best first, none under ``RELATED``; each as (what the link takes,
    the heading's text)."""
    named = {}
    for h in doc.headings:
        key = h.text if by_text else h.slug
        if key and key not in named:
            named[key] = h.text
    if not named:
        return []
    names = list(named)
    words = re.compile(r"[^\W_]+")
    want = anchor.lower()
    want_words = words.findall(want) or [want]

    def score(name: str) -> float:
        low = name.lower()
        have = words.findall(low) or [low]
        by_word = sum(max(_similar(w, h) for h in have) for w in want_words) / len(want_words)
        return 0.7 * by_word + 0.3 * difflib.SequenceMatcher(None, want, low).ratio()

    scored = sorted(((score(x), i, x) for i, x in enumerate(names)), key=lambda t: (-t[0], t[1]))
    return [(x, named[x]) for sc, _, x in scored[:n] if sc >= RELATED]


def _anchor_span(lines: list[str], link: Link, anchor: str) -> tuple[int, int, int] | None:
    """(line, start, end) of the anchor's text after ``#`` in the source: inside
    the link, or in the reference definition it uses."""
    forms = list(dict.fromkeys([anchor, quote(anchor, safe=""), quote(anchor, safe="-_.~")]))
    for ln in range(link.line, link.end_line + 1):
        text = lines[ln] if ln < len(lines) else ""
        a = link.start if ln == link.line else 0
        b = link.end if ln == link.end_line else len(text)
        for form in forms:
            i = text.rfind("#" + form, a, b)
            if i >= 0:
                return ln, i + 1, i + 1 + len(form)
    if link.reference:
        definition = re.compile(r"^ {0,3}\[[^\]]+\]:")
        for ln, text in enumerate(lines):
            if definition.match(text):
                for form in forms:
                    i = text.find("#" + form)
                    if i >= 0:
                        return ln, i + 1, i + 1 + len(form)
    return None


def anchor_fixes(
    ws: Workspace, uri: str, diagnostics: Iterable[types.Diagnostic]
) -> list[types.CodeAction]:
    """Quick fixes for the broken-anchor diagnostics among ``diagnostics``."""
    found = ws.doc_for_uri(uri)
    if found is None:
        return []
    path, doc = found
    root = ws.root_for(path)
    if root is None:
        return []
    lines = doc.lines()
    links = find_links(doc)
    actions: list[types.CodeAction] = []
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else None
        if d.source != "mdseek" or not data or data.get("kind") != "anchor":
            continue
        target = data.get("target")
        anchor = data.get("anchor")
        if not isinstance(target, str) or not isinstance(anchor, str):
            continue
        linked = ws.linked_doc(root, target)
        if linked is None:
            continue
        tdoc = linked[1]
        line, col = ws.pos.from_client(lines, d.range.start)
        link = next((k for k in links if k.contains(line, col)), None)
        span = _anchor_span(lines, link, anchor) if link is not None else None
        if span is None:
            continue
        ln, a, b = span
        rng = ws.pos.range(lines, ln, a, ln, b)
        for n, (name, text) in enumerate(nearest_headings(tdoc, anchor, bool(data.get("byText")))):
            actions.append(
                types.CodeAction(
                    title=f"Link to the heading '{text}' in {target}",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[d],
                    is_preferred=n == 0,
                    edit=types.WorkspaceEdit(
                        changes={uri: [types.TextEdit(range=rng, new_text=name)]}
                    ),
                )
            )
    return actions


def create_file_fixes(
    ws: Workspace, uri: str, diagnostics: Iterable[types.Diagnostic]
) -> list[types.CodeAction]:
    """ "Create missing.md" for each broken link to a markdown file among
    ``diagnostics``: the file (in its folder) with a title heading, and the
    heading a wiki link names (``[[Missing note#Plan]]``). Never outside the
    link's workspace folder, never over an existing file."""
    found = ws.doc_for_uri(uri)
    root = ws.root_for(found[0]) if found else None
    if found is None or root is None:
        return []
    actions = []
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else None
        if d.source != "mdseek" or not data or data.get("kind") != "missing":
            continue
        target = data.get("target")
        if not isinstance(target, str) or not _fresh_inside(root, target):
            continue
        new_uri = ws.uri_for(root.path / target)
        text = f"# {title_from_path(target)}\n"
        lines = found[1].lines()
        line, col = ws.pos.from_client(lines, d.range.start)
        link = link_at(ws.docs.links(*found), line, col)
        if link is not None and link.kind == "wiki" and link.anchor:
            text += f"\n## {link.anchor}\n"
        start = types.Position(line=0, character=0)
        edit = types.WorkspaceEdit(
            document_changes=[
                types.CreateFile(
                    uri=new_uri, options=types.CreateFileOptions(ignore_if_exists=True)
                ),
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=new_uri, version=None
                    ),
                    edits=[
                        types.TextEdit(range=types.Range(start=start, end=start), new_text=text)
                    ],
                ),
            ]
        )
        actions.append(
            types.CodeAction(
                title=f"Create {target}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[d],
                edit=edit,
            )
        )
    return actions


def _fresh_inside(root: Root, rel: str) -> bool:
    """``rel`` names a file that does not exist yet, inside ``root`` (symlinks resolved)."""
    if not rel or posixpath.normpath(rel) != rel or rel.startswith(("/", "../")) or rel == "..":
        return False
    dest = root.path / rel
    try:
        return not dest.exists() and root.contains(dest.parent.resolve() / dest.name)
    except OSError:
        return False
