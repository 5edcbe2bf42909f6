"""Several folders as one, for the front ends that serve more than one: one
state (:func:`.status.overall_state`), their statuses summed (:func:`summary`), and one
search over all of them on their reader threads at once (:func:`search_folders`,
an :class:`Answer`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ..search.requests import Mode, SearchRequest
from ..search.retrieve import NO_GOOD_MATCH
from ..text.snippet import mark
from . import facade
from .engine import SearchResponse, SearchResult
from .folder import CancelToken, Folder
from .status import FolderState, Status, overall_state

# The fields :func:`summary` sums (the rest of its :class:`Status` says nothing).
SUMMED = (
    "state",
    "files",
    "chunks",
    "pending_embeds",
    "window_fit",
    "model",
    "embedded_total",
    "ignored_files",
)


def summary(statuses: Sequence[Status]) -> Status:
    """Several folders' :meth:`Folder.status` as one: the fields of :data:`SUMMED`."""
    chunks = sum(s.chunks for s in statuses)
    fit = sum((s.window_fit or 0.0) * s.chunks for s in statuses) / chunks if chunks else 1.0
    return Status(
        root="",
        index_path="",
        state=overall_state([s.state or FolderState.STARTING for s in statuses]),
        files=sum(s.files for s in statuses),
        chunks=chunks,
        pending_embeds=sum(s.pending_embeds for s in statuses),
        window_fit=round(fit, 6),
        model=", ".join(dict.fromkeys(s.model for s in statuses if s.model)),
        embedded_total=sum(s.embedded_total or 0 for s in statuses),
        ignored_files=sum(s.ignored_files for s in statuses),
    )


class Hit(NamedTuple):
    """One result of a search over several folders: the folder it is in, and the result."""

    folder: Folder
    result: SearchResult


@dataclass
class Answer:
    """A search over several folders: the best results of all, the mode that
    ranked (the folders' one mode, else ``lexical``), whether it is final, and
    why not; ``highlight``: the query's words worth marking in a snippet."""

    mode: Mode
    complete: bool
    notes: list[str] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    highlight: list[str] = field(default_factory=list)

    @property
    def note(self) -> str | None:
        return "; ".join(dict.fromkeys(self.notes)) or None

    def marked(self, snippet: str) -> str:
        """A result's snippet with the query's words marked ``**word**``."""
        return mark(snippet, self.highlight) if self.highlight else snippet


def search_folders(
    request: SearchRequest,
    folders: Sequence[Folder],
    token: CancelToken | None = None,
    paths: Mapping[Folder, tuple[str, ...]] | None = None,
) -> Answer:
    """``request`` over each folder, on the folders' reader threads at once;
    one folder's results keep the engine's order, several folders' are merged
    by score. ``paths``: a folder's own path globs in place of the request's
    (MCP, where a glob names the folder)."""

    def one(folder: Folder) -> tuple[SearchResponse, facade.Completeness]:
        own = request
        if paths is not None and folder in paths:
            own = dataclasses.replace(request, paths=paths[folder])
        resp = folder.search(own, token)
        return resp, folder.completeness(request.mode)

    answers = [f.result() for f in [fo.read(one, fo) for fo in folders]]
    modes = {resp.mode for resp, _ in answers}
    out = Answer(
        mode=(modes.pop() if len(modes) == 1 else Mode.LEXICAL) if modes else request.mode,
        complete=all(done.complete for _, done in answers),
        highlight=request.query.highlight,
    )
    weak = [_weak(resp.note) for resp, _ in answers]
    if any(weak) and all(w for w, (resp, _) in zip(weak, answers, strict=True) if resp.results):
        out.notes.append(NO_GOOD_MATCH)  # once, first: no folder's results match well
    for folder, (resp, done) in zip(folders, answers, strict=True):
        out.hits += [Hit(folder, r) for r in resp.results]
        out.notes += [n for n in (_past_weak(resp.note), done.note) if n]
    if len(answers) > 1:  # one folder keeps its engine's order (a reranker's, say)
        out.hits.sort(key=lambda t: -t.result.score)
    del out.hits[request.limit :]
    return out


def _weak(note: str | None) -> bool:
    """Whether a folder's note says none of its sections matches well."""
    return note is not None and note.startswith(NO_GOOD_MATCH)


def _past_weak(note: str | None) -> str | None:
    """A folder's note without its "no section matches well" (the answer says it
    once, and only when no other folder's results match well)."""
    if not note or not _weak(note):
        return note
    return note[len(NO_GOOD_MATCH) :].lstrip("; ") or None
