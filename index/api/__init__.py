"""index/api/: the engine's front door. The front ends (``mdseek.lsp``: the
language server, MCP, the command line) import the engine from here only,
besides the pure helpers of ``text/`` and ``links/``
(tests/test_architecture.py checks it). What is named here is the engine's
whole surface; what is not is inside it, free to change.

- one search: :class:`SearchRequest` (built once, the query read once) with
  its :class:`Mode`, its :class:`Filter` (tags, front-matter fields; a
  query's leading filter words: :func:`split_query`), its checks and their
  one-line errors (:data:`requests`, :class:`BadRequest`), and the :class:`Answer` of :func:`search_folders`
  (its :class:`Hit`\\ s, the words to highlight);
- one folder: :class:`Folder`, the handle every front end holds (open,
  reconcile, search, related, read_document, near_duplicates, status,
  file_saved, changed, close; no front end touches its Engine), its
  :class:`FolderState`, its :class:`Status` (several folders' as one:
  :func:`summary` of the fields :data:`SUMMED`), and the options it opens with (:class:`EngineOptions`);
  a document's near-duplicate sections (:func:`near_duplicates`, of a
  :class:`NearDuplicate` each);
- reading a folder's files as a client names them: :func:`confine_in`,
  :func:`read_document`, :func:`outline`, :func:`find_section` and their errors;
- the command line's one-shot work: :meth:`Folder.open_now` and
  :meth:`Folder.index_now` (an index brought up to date with a progress bar),
  :meth:`Folder.export_vectors`, :meth:`Folder.where_ranked`, :func:`stored_filter`,
  :func:`prune`;
- the model's and the reranker's settings (:class:`EmbedSettings`,
  :class:`Reranker`) and what a start warms up.

Names load on first use (importing the door loads nothing else), as
``mdseek.index`` does.

Never imports: nothing is above it; like every folder here, never
mdseek.lsp, pygls, lsprotocol or mcp.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import settings
    from ..engine.cancel import Cancelled, CancelToken
    from ..engine.engine import IndexReport, SearchResponse, SearchResult
    from ..engine.facade import (
        NoSuchSection,
        NotIndexed,
        OutsideRoot,
        confine_in,
        find_section,
        heading_as_written,
        outline,
        read_document,
        section_end,
        section_text,
        written_heading,
    )
    from ..engine.folder import Folder, Progress
    from ..engine.folders import SUMMED, Answer, Hit, search_folders, summary
    from ..engine.near import NearDuplicate, near_duplicates
    from ..engine.opening import EngineOptions, OpenError, stored_filter
    from ..engine.status import FolderState, Status
    from ..model.embed import EmbedSettings, warm_default_session
    from ..model.model import ModelUnavailable, cache_dir, resolve_model
    from ..model.private import why_not_private
    from ..model.rerank import MAX_TOP_N, TOP_N, Reranker
    from ..model.tokenizer import load_tokenizer, minus_prompt
    from ..search import requests
    from ..search.filters import Filter, split_query
    from ..search.requests import BadRequest, Mode, SearchRequest
    from ..search.retrieve import NO_GOOD_MATCH
    from ..store.prune import prune
    from ..store.store import is_damage
    from ..store.vectors_file import VectorsFileError

# name -> the module (under mdseek.index) that defines it
_HOME = {
    "IndexReport": "engine.engine",
    "SearchResponse": "engine.engine",
    "SearchResult": "engine.engine",
    "NoSuchSection": "engine.facade",
    "NotIndexed": "engine.facade",
    "OutsideRoot": "engine.facade",
    "confine_in": "engine.facade",
    "find_section": "engine.facade",
    "heading_as_written": "engine.facade",
    "outline": "engine.facade",
    "read_document": "engine.facade",
    "section_end": "engine.facade",
    "section_text": "engine.facade",
    "written_heading": "engine.facade",
    "CancelToken": "engine.cancel",
    "Cancelled": "engine.cancel",
    "Folder": "engine.folder",
    "Progress": "engine.folder",
    "Answer": "engine.folders",
    "Hit": "engine.folders",
    "search_folders": "engine.folders",
    "summary": "engine.folders",
    "SUMMED": "engine.folders",
    "NearDuplicate": "engine.near",
    "near_duplicates": "engine.near",
    "EngineOptions": "engine.opening",
    "OpenError": "engine.opening",
    "stored_filter": "engine.opening",
    "FolderState": "engine.status",
    "Status": "engine.status",
    "EmbedSettings": "model.embed",
    "warm_default_session": "model.embed",
    "ModelUnavailable": "model.model",
    "cache_dir": "model.model",
    "resolve_model": "model.model",
    "why_not_private": "model.private",
    "MAX_TOP_N": "model.rerank",
    "Reranker": "model.rerank",
    "TOP_N": "model.rerank",
    "load_tokenizer": "model.tokenizer",
    "minus_prompt": "model.tokenizer",
    "Filter": "search.filters",
    "split_query": "search.filters",
    "BadRequest": "search.requests",
    "Mode": "search.requests",
    "SearchRequest": "search.requests",
    "NO_GOOD_MATCH": "search.retrieve",
    "prune": "store.prune",
    "is_damage": "store.store",
    "VectorsFileError": "store.vectors_file",
}
_MODULES = {
    "requests": "search.requests",
    "settings": "settings",
}  # modules handed over whole: the checks, the settings table

__all__ = [
    "settings",
    "Answer",
    "BadRequest",
    "cache_dir",
    "Cancelled",
    "CancelToken",
    "confine_in",
    "EmbedSettings",
    "EngineOptions",
    "Filter",
    "find_section",
    "Folder",
    "FolderState",
    "heading_as_written",
    "Hit",
    "IndexReport",
    "is_damage",
    "load_tokenizer",
    "MAX_TOP_N",
    "minus_prompt",
    "Mode",
    "NearDuplicate",
    "near_duplicates",
    "ModelUnavailable",
    "NO_GOOD_MATCH",
    "NoSuchSection",
    "NotIndexed",
    "OpenError",
    "outline",
    "OutsideRoot",
    "Progress",
    "prune",
    "read_document",
    "requests",
    "Reranker",
    "resolve_model",
    "search_folders",
    "SearchRequest",
    "SearchResponse",
    "SearchResult",
    "section_end",
    "section_text",
    "split_query",
    "Status",
    "stored_filter",
    "SUMMED",
    "summary",
    "TOP_N",
    "VectorsFileError",
    "warm_default_session",
    "why_not_private",
    "written_heading",
]


def __getattr__(name: str) -> Any:
    """Lazy: a front end that imports one name loads only that name's module."""
    if name in _MODULES:
        return importlib.import_module(f"mdseek.index.{_MODULES[name]}")
    if name in _HOME:
        return getattr(importlib.import_module(f"mdseek.index.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
