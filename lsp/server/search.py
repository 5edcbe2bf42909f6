"""Search by meaning across every workspace folder: ``workspace/symbol``,
``mdseek/search`` and ``mdseek/status``.

Each folder's engine answers on its reader thread; results of all folders are
merged by score. A request the client cancels stops at the next check.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from lsprotocol import types

from mdseek.index.api import (
    NO_GOOD_MATCH,
    SUMMED,
    Answer,
    Cancelled,
    CancelToken,
    Filter,
    FolderState,
    Hit,
    Mode,
    SearchRequest,
    SearchResult,
    requests,
    search_folders,
    settings,
    split_query,
    summary,
    written_heading,
)

from . import features as F
from .convert import path_to_uri
from .params import SearchParams
from .worker import checkpoint, off_loop
from .workspace import Workspace

NO_FOLDER = "no workspace folder is open: open a folder, or a markdown file in one"
# The words of VS Code's search picker, for the other editors' symbol pickers
NOTHING_CLOSE = "Nothing close in meaning — try other words"
NOTE_KIND = types.SymbolKind.Event  # a row that says something (the VS Code client drops it)
LIST_SECONDS = 1.0  # an empty query's listing stops here (a folder of files without headings)

# result, its URI, its heading's range, its heading as written (inline markup kept)
Row = tuple[SearchResult, str, types.Range, str]


def _rows(ws: Workspace, hits: list[Hit]) -> list[Row]:
    rows = []
    for folder, r in hits:
        p = folder.path / r.path
        lines = ws.docs.lines(p, ws.root_paths)
        written = written_heading(lines or [], r.heading_line, r.heading_end_line, r.heading)
        rows.append((r, ws.uri_for(p), F.result_range(ws.pos, lines, r), written))
    return rows


async def search(ws: Workspace, request: SearchRequest) -> tuple[Answer, list[Row]]:
    """A search over every open folder (:func:`search_folders`), best first."""
    roots = list(ws.roots)
    if not roots:
        return Answer(Mode.LEXICAL, False, [NO_FOLDER]), []
    token = CancelToken()
    try:
        answer = await asyncio.to_thread(search_folders, request, [r.folder for r in roots], token)
        rows = await asyncio.to_thread(_rows, ws, answer.hits)
    except (asyncio.CancelledError, Cancelled):
        token.cancelled = True
        ws.cancelled += 1
        raise asyncio.CancelledError() from None
    if not rows and not answer.notes and not any(r.markdown_files() for r in roots):
        globs = ", ".join(ws.settings.include)
        answer.notes.append(
            f"no markdown file is indexed: none in the workspace matches {globs} (setting mdseek.include)"
        )
    return answer, rows


def filtered_words(query: str) -> tuple[Filter, str]:
    """A workspace/symbol query's leading filter words (``#runbook``,
    ``status=published``) and the words searched for (:func:`split_query`)."""
    try:
        flt, words = split_query(query)
        requests.check_globs(list(flt.paths))  # path=GLOB words: the globs' own checks
        return flt, words
    except ValueError:  # a filter that cannot be read: the words as typed
        return Filter(), query


async def workspace_symbols(ws: Workspace, query: str) -> list[types.SymbolInformation]:
    """Headings by meaning; first, as in VS Code's search picker, a row of
    plain words when nothing answers: "Nothing close in meaning — try other
    words" and why (no row at all), or "no section matches well …" above the
    nearest sections (a symbol picker such as Neovim's shows it in its list)."""
    if not query.strip():  # clients ask with "" as the picker opens: no search
        return await off_loop(ws, headings_sync, ws, ws.settings.search_limit)
    flt, words = filtered_words(query)
    if not SearchRequest.make(words).text.strip():
        # a filter alone ranks nothing (a lone #tag lists its uses: tags.py); nor
        # does a query of nothing searchable (a lone surrogate, NUL)
        return []
    asked = SearchRequest.make(words, prefix_last=True, limit=ws.settings.search_limit, filter=flt)
    answer, rows = await search(ws, asked)
    symbols = [F.symbol_information(r, uri, rng) for r, uri, rng, _ in rows]
    note = answer.note
    if symbols and note and note.startswith(NO_GOOD_MATCH):
        return [_note_row(note, symbols[0].location), *symbols]
    roots = list(ws.roots)
    # nothing indexed (not: the index still opening, then a client asks again)
    if not symbols and roots and answer.complete:  # its place: the (first) folder
        start = types.Position(line=0, character=0)
        where = types.Location(
            uri=path_to_uri(roots[0].path), range=types.Range(start=start, end=start)
        )
        return [_note_row(f"{NOTHING_CLOSE}: {note}" if note else NOTHING_CLOSE, where)]
    return symbols


def headings_sync(ws: Workspace, limit: int) -> list[types.SymbolInformation]:
    """The answer to an empty query, as VS Code's and marksman's: the folders'
    headings, files in path order, the first ``limit`` (the searchLimit setting)."""
    out: list[types.SymbolInformation] = []
    stop = time.monotonic() + LIST_SECONDS
    for root in ws.roots:
        for rel in sorted(root.markdown_files()):
            if len(out) >= limit or time.monotonic() > stop:
                return out
            checkpoint()  # the picker's next keystroke cancels this one
            p = root.path / rel
            doc = ws.docs.parsed(p, rel, ws.root_paths)
            if doc is None or not doc.headings:
                continue
            lines, where = doc.lines(), ws.uri_for(p)
            for h in doc.headings[: limit - len(out)]:
                out.append(
                    types.SymbolInformation(
                        name=F.shorten(h.text, F.SYMBOL_NAME_MAX) or "(untitled)",
                        kind=F.symbol_kind(h.level),
                        location=types.Location(uri=where, range=F.heading_range(ws.pos, lines, h)),
                        container_name=rel,
                    )
                )
    return out


def _note_row(words: str, where: types.Location) -> types.SymbolInformation:
    return types.SymbolInformation(name=f"mdseek: {words}", kind=NOTE_KIND, location=where)


async def search_request(ws: Workspace, params: SearchParams) -> dict:
    """The answer to ``mdseek/search`` (the VS Code client depends on this shape)."""
    limit = min(params.limit or ws.settings.search_limit, settings.MAX_LIMIT)
    request = SearchRequest.make(
        params.query,
        limit=limit,
        explain=params.explain,
        paths=params.path,
        filter=requests.check_filter(params.tag, params.where),
    )
    answer, rows = await search(ws, request)
    out: dict[str, Any] = {
        "mode": answer.mode,
        "complete": answer.complete,
        "results": [F.search_result_json(r, uri, rng, h) for r, uri, rng, h in rows],
    }
    if answer.note:
        out["note"] = answer.note
    return out


async def status(ws: Workspace) -> dict:
    """``mdseek/status``: the folders' index states summed up, and each folder's."""
    roots = list(ws.roots)
    per = await asyncio.gather(*(r.read(r.folder.status) for r in roots)) if roots else []
    total = summary(per)
    messages = [m for m in (r.folder.message for r in roots) if m]
    if not roots:
        messages.append(NO_FOLDER)
    keys = (
        "files",
        "chunks",
        "model",
        "pending_embeds",
        "index_path",
        "index_location",
        "skipped",
        "ignored_files",
        "ignored_by",
    )
    out: dict[str, Any] = {
        **{k: getattr(total, k) for k in SUMMED},
        "model": total.model or (ws.settings.model or ""),
        "updates_pending": sum(r.updates_pending for r in roots),
        "updates_done": sum(r.updates_done for r in roots),
        "cancelled": ws.cancelled,
        # files not indexed because they are not text: {path (absolute), why}
        "skipped": [
            {"path": str(r.path / x["path"]), "why": x["why"]}
            for r, s in zip(roots, per, strict=True)
            for x in s.skipped
        ],
        "roots": [
            {
                "path": str(r.path),
                "uri": path_to_uri(r.path),
                "state": r.state,
                **{k: getattr(s, k) for k in keys},
                "last_update": r.last_update,
            }
            for r, s in zip(roots, per, strict=True)
        ],
    }
    if not roots:
        out["state"] = FolderState.NO_FOLDER  # nothing is indexed: never "ready"
    if messages:
        out["message"] = "; ".join(messages)
    return out
