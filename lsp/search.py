"""Search by meaning across every workspace folder: ``workspace/symbol``,
``mdseek/search`` and ``mdseek/status``.

Each folder's engine answers on its reader thread; results of all folders are
merged by score. A request the client cancels stops at the next check.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from mdseek.index.engine import SearchResponse, SearchResult
from mdseek.index.facade import written_heading

from . import features as F
from .convert import path_to_uri
from .params import SearchParams
from .roots import Cancelled, CancelToken, Root
from .workspace import Workspace

MAX_LIMIT = 200

# result, its URI, its heading's range, its heading as written (inline markup kept)
Row = tuple[SearchResult, str, types.Range, str]


def _search_root(
    ws: Workspace,
    root: Root,
    query: str,
    limit: int,
    prefix_last: bool,
    token: CancelToken,
    explain: bool = False,
    paths: tuple[str, ...] = (),
) -> tuple[SearchResponse, list[Row]]:
    resp = root.search_sync(query, limit, prefix_last, token, explain=explain, paths=paths)
    rows = []
    for r in resp.results:
        p = root.path / r.path
        lines = ws.docs.lines(p, ws.root_paths)
        written = written_heading(lines or [], r.heading_line, r.heading_end_line, r.heading)
        rows.append((r, ws.uri_for(p), F.result_range(ws.pos, lines, r), written))
    return resp, rows


async def search(
    ws: Workspace,
    query: str,
    limit: int,
    prefix_last: bool,
    explain: bool = False,
    paths: tuple[str, ...] = (),
) -> tuple[str, str | None, list[Row]]:
    """(mode, note, rows) of a query over every open folder, best first; the
    note also says when the answer is partial (see :func:`complete`)."""
    roots = [r for r in ws.roots if r.engine is not None]
    if not roots:
        return (
            "lexical",
            "no workspace folder is open" if not ws.roots else "the index is still opening",
            [],
        )
    token = CancelToken()
    try:
        answers = await asyncio.gather(
            *(
                r.read(_search_root, ws, r, query, limit, prefix_last, token, explain, paths)
                for r in roots
            )
        )
    except (asyncio.CancelledError, Cancelled):
        token.cancelled = True
        ws.cancelled += 1
        raise asyncio.CancelledError() from None
    rows = [row for _, rs in answers for row in rs]
    rows.sort(key=lambda t: -t[0].score)
    modes = {resp.mode for resp, _ in answers}
    mode = "hybrid" if modes == {"hybrid"} else "lexical"
    note = next((resp.note for resp, _ in answers if resp.note), None)
    if not rows and note is None and not any(r.markdown_files() for r in roots):
        globs = ", ".join(ws.settings.include)
        note = f"no markdown file is indexed: none in the workspace matches {globs} (setting mdseek.include)"
    return mode, note, rows[:limit]


async def workspace_symbols(ws: Workspace, query: str) -> list[types.SymbolInformation]:
    if not query.strip():
        return []  # fast: clients ask with "" when the picker opens
    _, _, rows = await search(ws, query, ws.settings.search_limit, prefix_last=True)
    return [F.symbol_information(r, uri, rng) for r, uri, rng, _ in rows]


async def search_request(ws: Workspace, params: SearchParams) -> dict:
    """The answer to ``mdseek/search`` (the VS Code client depends on this shape)."""
    limit = min(params.limit or ws.settings.search_limit, MAX_LIMIT)
    mode, note, rows = await search(
        ws, params.query, limit, prefix_last=False, explain=params.explain, paths=params.path
    )
    done = [c for c in await asyncio.gather(*(r.read(r.completeness, mode) for r in ws.roots))]
    notes = [n for n in [note, *(c.note for c in done)] if n]
    out: dict[str, Any] = {
        "mode": mode,
        "complete": all(c.complete for c in done),
        "results": [F.search_result_json(r, uri, rng, h) for r, uri, rng, h in rows],
    }
    if notes:
        out["note"] = "; ".join(dict.fromkeys(notes))
    return out


async def status(ws: Workspace) -> dict:
    """``mdseek/status``: the folders' index states summed up, and each folder's."""
    roots = list(ws.roots)
    per = await asyncio.gather(*(r.read(r.status_sync) for r in roots)) if roots else []
    states = {r.state for r in roots}
    if states & {"starting", "indexing"}:
        state = "indexing"
    elif states & {"lexical-only", "error"}:
        state = "lexical-only"
    else:
        state = "ready"
    chunks = sum(s.get("chunks", 0) for s in per)
    fit = (
        sum(s.get("window_fit", 1.0) * s.get("chunks", 0) for s in per) / chunks if chunks else 1.0
    )
    messages = [m for m in (r.message for r in roots) if m]
    if not roots:
        messages.append("no workspace folder is open")
    models = dict.fromkeys(str(s.get("model", "")) for s in per)
    keys = (
        "files",
        "chunks",
        "model",
        "pending_embeds",
        "index_path",
        "index_location",
        "last_update",
    )
    out: dict[str, Any] = {
        "state": state,
        "files": sum(s.get("files", 0) for s in per),
        "chunks": chunks,
        "window_fit": round(fit, 6),
        "model": ", ".join(models) or (ws.settings.model or ""),
        "pending_embeds": sum(s.get("pending_embeds", 0) for s in per),
        "embedded_total": sum(s.get("embedded_total", 0) for s in per),
        "updates_pending": sum(r.updates_pending for r in roots),
        "updates_done": sum(r.updates_done for r in roots),
        "cancelled": ws.cancelled,
        "roots": [
            {
                "path": str(r.path),
                "uri": path_to_uri(r.path),
                "state": r.state,
                **{k: s.get(k) for k in keys},
            }
            for r, s in zip(roots, per, strict=True)
        ],
    }
    if messages:
        out["message"] = "; ".join(messages)
    return out
