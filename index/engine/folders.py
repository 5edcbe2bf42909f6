"""Several folders as one, for the front ends that serve more than one: one
state (:func:`overall_state`), their statuses summed (:func:`summary`), and one
search over all of them on their reader threads at once (:func:`search_folders`,
an :class:`Answer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from . import facade
from .engine import SearchResponse, SearchResult
from .folder import CancelToken, Folder


def overall_state(states: Sequence[str]) -> str:
    """One state for several folders: ``indexing`` while any is, ``ready`` when
    all are (or there are none), ``error`` when every one failed, else
    ``lexical-only`` (some answer by keywords only)."""
    s = set(states)
    if s & {"starting", "indexing"}:
        return "indexing"
    if s <= {"ready"}:
        return "ready"
    if s == {"error"}:
        return "error"
    return "lexical-only"


def summary(statuses: Sequence[dict]) -> dict:
    """The counts of several folders' :meth:`Folder.status` summed up."""
    chunks = sum(s["chunks"] for s in statuses)
    fit = sum(s["window_fit"] * s["chunks"] for s in statuses) / chunks if chunks else 1.0
    return {
        "state": overall_state([s["state"] for s in statuses]),
        "files": sum(s["files"] for s in statuses),
        "chunks": chunks,
        "pending_embeds": sum(s["pending_embeds"] for s in statuses),
        "window_fit": round(fit, 6),
        "model": ", ".join(dict.fromkeys(str(s["model"]) for s in statuses if s["model"])),
        "embedded_total": sum(s["embedded_total"] for s in statuses),
    }


@dataclass
class Answer:
    """A search over several folders: the best results of all, the mode that
    ranked (the folders' one mode, else ``lexical``), whether it is final, and why not."""

    mode: str
    complete: bool
    notes: list[str] = field(default_factory=list)
    hits: list[tuple[Folder, SearchResult]] = field(default_factory=list)

    @property
    def note(self) -> str | None:
        return "; ".join(dict.fromkeys(self.notes)) or None


def search_folders(
    asked: Sequence[tuple[Folder, Sequence[str]]],
    query: str,
    limit: int = 10,
    mode: str = "hybrid",
    token: CancelToken | None = None,
    **how: bool,
) -> Answer:
    """``query`` over each folder (with the path globs it applies), on the
    folders' reader threads at once; one folder's results keep the engine's order,
    several folders' are merged by score. ``how``: see
    :meth:`Folder.search`."""

    def one(folder: Folder, paths: Sequence[str]) -> tuple[SearchResponse, facade.Completeness]:
        resp = folder.search(query, limit, mode, paths, token, **how)
        return resp, folder.completeness(mode)

    answers = [f.result() for f in [fo.read(one, fo, p) for fo, p in asked]]
    modes = {resp.mode for resp, _ in answers}
    out = Answer(
        mode=(modes.pop() if len(modes) == 1 else "lexical") if modes else mode,
        complete=all(done.complete for _, done in answers),
    )
    for (folder, _), (resp, done) in zip(asked, answers, strict=True):
        out.hits += [(folder, r) for r in resp.results]
        out.notes += [n for n in (resp.note, done.note) if n]
    if len(answers) > 1:  # one folder keeps its engine's order (a reranker's, say)
        out.hits.sort(key=lambda t: -t[1].score)
    del out.hits[limit:]
    return out
