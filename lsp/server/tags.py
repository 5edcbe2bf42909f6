"""Tags over the workspace (:mod:`mdseek.index.links.tags` finds them in a document):
completion after ``#`` in text, references of the tag under the cursor, and
``workspace/symbol`` queries that start with ``#`` (every use of the tags
whose name starts with the rest, nested ones included: ``#area`` finds
``#area/sub``). Names compare without case.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from lsprotocol import types

from mdseek.index.links.tags import Tag, find_tags, tag_at
from mdseek.index.text.document import ParsedDocument

from .workspace import Workspace

_TYPING = re.compile(r"(?:^|(?<=\s))#([\w/-]*)$")
SYMBOLS_MAX = 500
# path -> (the parsed version the tags are of, its tags); the version is held
# weakly, so the documents' own cache still decides which texts stay in memory.
_cache: dict[Path, tuple[weakref.ref[ParsedDocument], list[Tag]]] = {}
_lock = threading.Lock()


def doc_tags(path: Path, doc: ParsedDocument) -> list[Tag]:
    """``find_tags(doc)``, computed once per parsed version of the file."""
    with _lock:
        hit = _cache.get(path)
    if hit is not None and hit[0]() is doc:
        return hit[1]
    tags = find_tags(doc)
    with _lock:
        _cache[path] = (weakref.ref(doc), tags)
    return tags


def workspace_tags(ws: Workspace) -> Iterator[tuple[Path, ParsedDocument, Tag]]:
    for root in list(ws.roots):
        for rel in root.markdown_files():
            path = root.path / rel
            doc = ws.docs.parsed(path, rel, ws.root_paths)
            if doc is not None:
                for t in doc_tags(path, doc):
                    yield path, doc, t


def _location(ws: Workspace, path: Path, doc: ParsedDocument, t: Tag) -> types.Location:
    lines = doc.lines()
    start = t.start if t.front_matter else t.start - 1  # text tags: the '#' too
    return types.Location(
        uri=ws.uri_for(path), range=ws.pos.range(lines, t.line, start, t.line, t.end)
    )


def references_sync(
    ws: Workspace, uri: str, position: types.Position
) -> list[types.Location] | None:
    """Every use of the tag under the cursor (None: the cursor is not on a tag)."""
    cur = ws.cursor(uri, position)
    if cur is None:
        return None
    tag = tag_at(doc_tags(cur.path, cur.doc), cur.line, cur.col)
    if tag is None:
        return None
    return [_location(ws, p, d, t) for p, d, t in workspace_tags(ws) if t.key == tag.key]


def completion_sync(
    ws: Workspace, uri: str, position: types.Position
) -> list[types.CompletionItem] | None:
    """The workspace's tags after ``#`` in text (None: not typing a tag here)."""
    cur = ws.cursor(uri, position)
    if cur is None:
        return None
    lines = cur.doc.lines()
    text = lines[cur.line][: cur.col] if cur.line < len(lines) else ""
    m = _TYPING.search(text)
    if m is None or any(
        b.kind in ("fence", "code_block", "html_block") and b.start_line <= cur.line < b.end_line
        for b in cur.doc.blocks
    ):
        return None
    if cur.line < cur.doc.body_start_line or text.count("`") % 2:
        return None
    counts: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for path, _, t in workspace_tags(ws):
        if path == cur.path and t.line == cur.line and t.end == cur.col:
            continue  # the one being typed
        counts[t.key] += 1
        shown.setdefault(t.key, t.name)
    rng = ws.pos.range(lines, cur.line, m.start(1), cur.line, cur.col)
    return [
        types.CompletionItem(
            label=shown[k],
            kind=types.CompletionItemKind.Keyword,
            detail=f"#{shown[k]}: {n} use{'s' if n != 1 else ''}",
            sort_text=f"{-n:09d}{k}",
            text_edit=types.TextEdit(range=rng, new_text=shown[k]),
        )
        for k, n in counts.items()
    ]


def workspace_symbols_sync(ws: Workspace, query: str) -> list[types.SymbolInformation]:
    """Uses of the tags whose name starts with ``query`` (without its '#')."""
    want = query.lstrip("#").lower()
    out = []
    for path, doc, t in workspace_tags(ws):
        if t.key.startswith(want):
            root = ws.root_for(path)
            out.append(
                types.SymbolInformation(
                    name=f"#{t.name}",
                    kind=types.SymbolKind.Key,
                    location=_location(ws, path, doc, t),
                    container_name=root.rel(path) if root else path.name,
                )
            )
            if len(out) >= SYMBOLS_MAX:
                break
    return out
