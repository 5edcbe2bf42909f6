"""``mdseek mcp``: the index as MCP tools for AI agents (official Python SDK, stdio).

A second thin protocol layer beside the language server: each served folder
is a :class:`~mdseek.index.engine.folder.Folder`, as in the language server (never
its Engine), and every answer comes from it or the door's pure helpers on a
parsed document (search, outline, a section's text, related sections, status),
the code the language server uses too.

One process serves the folders given on the command line (or the current
folder), each with the same SQLite index as the CLI and ``mdseek serve``
(in the user cache, or ``<folder>/.mdseek/index.sqlite`` if that exists; see
:mod:`mdseek.index.store.location`; WAL, so they can run at once). With one
folder, paths are relative to it; with several, a path starts with the
folder's name (``docs/setup.md`` in folder ``docs``).

Freshness: each folder reconciles in a background thread on start (chunks
first, then vectors); once its files are chunked, an mtime scan before every
tool call notices edits (:meth:`Folder.changed`), and changed files are
rechunked before the answer (lexical search sees them at once), their vectors
computed in the background.

Lines in tool answers are 1-based with inclusive ends, as editors show them.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, WithJsonSchema

import mdseek.index.api as api
from mdseek import __version__
from mdseek.index.api import (
    Answer,
    EmbedSettings,
    EngineOptions,
    Folder,
    Reranker,
    SearchRequest,
    SearchResult,
    requests,
    search_folders,
    settings,
    summary,
)
from mdseek.index.text.document import ParsedDocument, Section
from mdseek.index.text.files import FileFilter

from .args import CheckedServer, flag, globs, tags, where

log = logging.getLogger("mdseek.mcp")

MAX_LIMIT = settings.MAX_LIMIT

INSTRUCTIONS = """\
mdseek finds sections of the markdown files in the served folder(s) by meaning
(hybrid keyword + semantic search). Use `search` first; then `get_section` with a
result's path and anchor to read that section's exact markdown, `outline` for a
file's headings, and `related` for sections elsewhere about the same topic.
Lines are 1-based and inclusive."""


# -- folders ------------------------------------------------------------------------


class Folders:
    """The served folders (each a :class:`Folder`: engine, background indexing,
    state) and the paths clients see (prefixed with the folder's name when
    there are several)."""

    def __init__(self, folders: list[Folder]):
        self.all = folders

    def shown(self, folder: Folder, rel: str) -> str:
        return rel if len(self.all) == 1 else f"{folder.name}/{rel}"

    def globs_for(self, folder: Folder, globs: tuple[str, ...]) -> tuple[str, ...] | None:
        """Path globs as one folder sees them (with several folders a glob starts
        with the folder's name, ``*`` or ``**``); None: the folder is left out."""
        if len(self.all) == 1 or not globs:
            return globs
        out = []
        for g in globs:
            neg, body = ("!", g[1:]) if g.startswith("!") else ("", g)
            head, _, rest = body.partition("/")
            if head == folder.name or head in ("*", "**"):
                out.append(neg + (rest or "**"))
            elif not neg and "/" not in body:
                out.append(g)  # a file-name glob ('*.md') applies in every folder
        if not out and any(not g.startswith("!") for g in globs):
            return None
        return tuple(out)

    def locate(self, path: str) -> tuple[Folder, str]:
        """(folder, path within it) of a path a client gave (text, checked by
        :func:`requests.check_file`); ToolError if none fits."""
        p = path.strip()
        if Path(p).is_absolute():  # api.confine checks it (symlinks resolved)
            inner = sorted(self.all, key=lambda f: -len(str(f.path)))
            return next((f for f in inner if Path(p).is_relative_to(f.path)), inner[0]), p
        if len(self.all) == 1:
            return self.all[0], p
        head, _, rest = p.replace("\\", "/").partition("/")
        for f in self.all:
            if f.name == head and rest:
                return f, rest
        names = ", ".join(f.name for f in self.all)
        raise ToolError(f"{path}: start the path with a served folder's name ({names})")

    def document(self, path: str) -> tuple[Folder, ParsedDocument]:
        folder, p = self.locate(path)
        folder.changed()
        try:
            return folder, folder.read_document(p)
        except (api.OutsideRoot, api.NotIndexed) as exc:
            raise ToolError(str(exc)) from None


def open_folders(
    dirs: list[Path],
    index_path: str | None,
    model: str | None,
    file_filter: FileFilter | None,
    embed: EmbedSettings | None = None,
    reranker: Reranker | None = None,
) -> Folders:
    """The folders, each with its engine open; ValueError in one line if a
    folder or its index cannot be opened."""
    roots = [d.expanduser().resolve() for d in dirs]
    for d in roots:
        if not d.is_dir():
            raise ValueError(f"{d}: no such folder")
    if index_path and len(roots) > 1:
        raise ValueError("--db names one index file: give one folder with it")
    options = EngineOptions(index_path, model, file_filter, embed, reranker=reranker)
    names: dict[str, int] = {}
    out: list[Folder] = []
    for d in dict.fromkeys(roots):
        base = d.name or "root"
        names[base] = names.get(base, 0) + 1
        f = Folder(d, base if names[base] == 1 else f"{base}-{names[base]}")
        out.append(f)
        for note in f.open(options):
            log.warning("%s", note)
        if not f.is_open:
            for g in out:
                g.close()
            raise ValueError(f.message)
    return Folders(out)


# -- answers --------------------------------------------------------------------------


HEADING = "the heading as written, inline markup kept ('' for text before the first heading)"
HEADING_TEXT = "the heading as plain text (markup removed)"


class Hit(BaseModel):
    path: str = Field(description="file path (as get_section and outline take it)")
    heading: str = Field(description=HEADING)
    heading_text: str = Field(description=HEADING_TEXT)
    anchor: str = Field(description="the heading's GitHub anchor (slug), for links and get_section")
    breadcrumb: str = Field(description="document title > parent headings > heading")
    start_line: int = Field(description="first line of the section (1-based)")
    end_line: int = Field(description="last line of the section (1-based, inclusive)")
    score: float = Field(description="fused rank score (higher is better)")
    snippet: str = Field(description="the best-matching passage, shortened")


class SearchAnswer(BaseModel):
    mode: str = Field(description="hybrid, lexical or dense: what actually ranked")
    complete: bool = Field(
        default=True,
        description="false while the folder is still being read or chunks wait for their"
        " vector: the ranking may change; note says why, with the count",
    )
    note: str | None = Field(
        default=None, description="why results are partial or lexical only, if they are"
    )
    results: list[Hit]


class SectionAnswer(BaseModel):
    path: str
    heading: str = Field(description=HEADING)
    heading_text: str = Field(description=HEADING_TEXT)
    anchor: str
    breadcrumb: str
    start_line: int = Field(description="1-based")
    end_line: int = Field(description="1-based, inclusive")
    markdown: str = Field(description="the section's exact markdown (heading line included)")


class HeadingEntry(BaseModel):
    level: int
    heading: str = Field(description=HEADING)
    heading_text: str = Field(description=HEADING_TEXT)
    anchor: str
    line: int = Field(description="the heading's line (1-based)")
    end_line: int = Field(description="last line of the section with its subsections (1-based)")


class OutlineAnswer(BaseModel):
    path: str
    title: str
    headings: list[HeadingEntry]


class RelatedAnswer(BaseModel):
    path: str
    heading: str = Field(description=HEADING)
    heading_text: str = Field(description=HEADING_TEXT)
    note: str | None = None
    results: list[Hit]


class FolderStatus(BaseModel):
    name: str
    path: str
    state: str = Field(description="indexing, ready, lexical-only or error")
    message: str | None = None
    files: int
    chunks: int
    pending_embeds: int
    window_fit: float
    model: str
    index_path: str
    skipped: list[dict] = Field(
        default_factory=list,
        description="files not indexed because they are not text: {path, why}",
    )
    ignored_files: int = Field(
        default=0, description="markdown files .gitignore, .ignore or .mdseekignore leave out"
    )


FOLDER_KEYS = (
    "state",
    "message",
    "files",
    "chunks",
    "pending_embeds",
    "window_fit",
    "model",
    "index_path",
    "skipped",
    "ignored_files",
)


class StatusAnswer(BaseModel):
    state: str
    files: int
    chunks: int
    pending_embeds: int = Field(
        description="texts (chunks, passages) still without a vector (semantic search grows as they go)"
    )
    window_fit: float = Field(description="share of chunks whose text fits the model's window")
    model: str
    reranker: dict | None = Field(
        default=None,
        description="the --rerank cross-encoder: model, top_n, calls, last_ms, mean_ms (null: off)",
    )
    folders: list[FolderStatus]


def _hit(folders: Folders, folder: Folder, r: SearchResult, snippet: str | None = None) -> Hit:
    return Hit(
        path=folders.shown(folder, r.path),
        heading=folder.heading_as_written(r),
        heading_text=r.heading,
        anchor=r.slug,
        breadcrumb=r.breadcrumb,
        start_line=r.lines()[0],
        end_line=r.lines()[1],
        score=r.score,
        snippet=r.snippet if snippet is None else snippet,
    )


def _written(doc: ParsedDocument, sec: Section) -> str:
    """A section's heading as the file writes it ('' for a preamble)."""
    h = sec.heading
    return api.written_heading(doc.lines(), h.line, h.end_line, h.text) if h else ""


def _section(
    folders: Folders,
    folder: Folder,
    doc: ParsedDocument,
    heading: str | None,
    anchor: str | None,
    line: int | None,
) -> Section:
    try:
        return api.find_section(
            doc, heading=heading, anchor=anchor, line=None if line is None else line - 1
        )
    except api.NoSuchSection as exc:
        raise ToolError(str(exc).replace(doc.path, folders.shown(folder, doc.path))) from None


# -- the server ------------------------------------------------------------------------

PathArg = Annotated[str, Field(description="a markdown file's path, as search or outline shows it")]
HeadingArg = Annotated[
    str | None, Field(description="the section's heading text (or its breadcrumb 'A > B')")
]
AnchorArg = Annotated[str | None, Field(description="the heading's anchor (slug), '#' optional")]
LimitArg = Annotated[
    int, Field(ge=1, le=MAX_LIMIT, description=f"results to return (1 to {MAX_LIMIT})")
]
LineArg = Annotated[int | None, Field(ge=1, description="any line of the section (1-based)")]
# Each tool's argument checks (args.py: a mistake is answered in mdseek's words).
SECTION_CHECKS = {
    "path": requests.check_file,
    "heading": requests.check_heading,
    "anchor": requests.check_anchor,
    "line": requests.check_line,
}


def build_server(folders: Folders) -> CheckedServer:
    server = CheckedServer("mdseek", version=__version__, instructions=INSTRUCTIONS)

    @server.checked_tool(
        query=requests.check_query,
        limit=requests.check_limit,
        mode=requests.check_mode,
        path=globs,
        tag=tags,
        where=where,
        highlight=flag("highlight"),
    )
    def search(
        query: Annotated[str, Field(description="what to find, in words")],
        limit: LimitArg = 10,
        mode: Annotated[
            str,
            WithJsonSchema({"type": "string", "enum": list(requests.MODES)}),
            Field(description="hybrid (default), lexical (keywords only) or dense (meaning only)"),
        ] = settings.DEFAULT_MODE,
        path: Annotated[
            str | list[str] | None,
            Field(
                description="only files matching these globs, like rg -g: 'runbooks/**', '*.md';"
                " '!drafts/**' leaves files out. A filter on results: the index is not changed"
            ),
        ] = None,
        tag: Annotated[
            str | list[str] | None,
            Field(
                description="only notes with these tags (all of them): 'runbook', '#area/sub';"
                " a tag matches its sub-tags (#area matches #area/sub)"
            ),
        ] = None,
        where: Annotated[
            str | list[str] | None,
            Field(
                description="only notes whose front matter passes (all terms): 'status=published',"
                " 'owner~ops' (contains), 'status!=draft', 'date>=2024-01-01'; a list field"
                " matches when any element does; an unknown field gives no results and a note"
            ),
        ] = None,
        highlight: Annotated[
            bool, Field(description="mark the query's words in snippets as **word**")
        ] = False,
    ) -> SearchAnswer:
        """Find the sections of the served markdown files that best answer a query,
        by meaning and keywords. Each result names a section: path, heading, anchor,
        breadcrumb, line range, score and a snippet. complete is false (and note
        says why) while the folder is still being read or vectors are pending."""
        wanted = tuple(path or ())  # a list by now (args.globs)
        asked = {f: g for f in folders.all if (g := folders.globs_for(f, wanted)) is not None}
        for f in asked:
            f.changed()
        request = SearchRequest.make(
            query, limit=limit, mode=mode, paths=wanted, filter=requests.check_filter(tag, where)
        )
        answer = (
            search_folders(request, list(asked), paths=asked)
            if asked
            else Answer(request.mode, True)
        )
        return SearchAnswer(
            mode=answer.mode,
            complete=answer.complete,
            note=answer.note,
            results=[
                _hit(folders, f, r, answer.marked(r.snippet) if highlight else None)
                for f, r in answer.hits
            ],
        )

    @server.checked_tool(**SECTION_CHECKS, include_subsections=flag("include_subsections"))
    def get_section(
        path: PathArg,
        heading: HeadingArg = None,
        anchor: AnchorArg = None,
        line: LineArg = None,
        include_subsections: Annotated[
            bool, Field(description="also return the subsections under the heading")
        ] = False,
    ) -> SectionAnswer:
        """The exact markdown of one section of a file, named by exactly one of
        heading, anchor or line. An unknown heading is an error listing the file's
        real headings."""
        folder, doc = folders.document(path)
        sec = _section(folders, folder, doc, heading, anchor, line)
        end = api.section_end(doc, sec, include_subsections)
        text = api.section_text(doc, sec.start_line, end)
        return SectionAnswer(
            path=folders.shown(folder, doc.path),
            heading=_written(doc, sec),
            heading_text=sec.heading.text if sec.heading else "",
            anchor=sec.heading.slug if sec.heading else "",
            breadcrumb=sec.breadcrumb,
            start_line=sec.start_line + 1,
            end_line=sec.start_line + max(1, text.count("\n") + 1),
            markdown=text,
        )

    @server.checked_tool(**SECTION_CHECKS, limit=requests.check_limit, unlinked=flag("unlinked"))
    def related(
        path: PathArg,
        heading: HeadingArg = None,
        anchor: AnchorArg = None,
        line: LineArg = None,
        limit: LimitArg = 5,
        unlinked: Annotated[
            bool,
            Field(
                description="leave out the sections this section already links to or is "
                "linked from (a link to a file links all its sections)"
            ),
        ] = False,
    ) -> RelatedAnswer:
        """Sections in other files about the same thing as one section (named by
        exactly one of heading, anchor or line)."""
        folder, doc = folders.document(path)
        sec = _section(folders, folder, doc, heading, anchor, line)
        slug = sec.heading.slug if sec.heading else None
        resp = folder.read(
            folder.related, doc.path, slug, sec.start_line, limit, unlinked=unlinked
        ).result()
        return RelatedAnswer(
            path=folders.shown(folder, doc.path),
            heading=_written(doc, sec),
            heading_text=sec.heading.text if sec.heading else "",
            note=resp.note,
            results=[_hit(folders, folder, r) for r in resp.results],
        )

    @server.checked_tool(path=requests.check_file)
    def outline(path: PathArg) -> OutlineAnswer:
        """A file's headings in order: level, the heading as written (inline
        markup kept) and as plain text, anchor and line range."""
        folder, doc = folders.document(path)
        return OutlineAnswer(
            path=folders.shown(folder, doc.path),
            title=doc.title,
            headings=[
                HeadingEntry(
                    level=e.level,
                    heading=e.written,
                    heading_text=e.text,
                    anchor=e.slug,
                    line=e.line + 1,
                    end_line=max(e.line + 1, e.end_line),
                )
                for e in api.outline(doc)
            ],
        )

    @server.checked_tool()
    def status() -> StatusAnswer:
        """What the index holds: files, chunks, chunks still waiting for a vector,
        the share of chunks that fit the model's window, the embedding model, and
        each folder's state."""
        for f in folders.all:
            f.changed()
        per = [f.read(f.status).result() for f in folders.all]
        total = summary(per)
        return StatusAnswer(
            state=total.state,
            files=total.files,
            chunks=total.chunks,
            pending_embeds=total.pending_embeds,
            window_fit=total.window_fit,
            model=total.model,
            reranker=per[0].reranker if per else None,
            folders=[
                FolderStatus(
                    name=f.name, path=str(f.path), **{k: getattr(st, k) for k in FOLDER_KEYS}
                )
                for f, st in zip(folders.all, per, strict=True)
            ],
        )

    return server


def serve(folders: Folders) -> int:
    """Serve MCP over stdin/stdout until the client closes it; each folder
    reconciles in the background meanwhile."""
    for f in folders.all:
        threading.Thread(target=f.reconcile, name=f"mdseek-mcp-{f.name}", daemon=True).start()
    try:
        build_server(folders).run("stdio")
    finally:
        for f in folders.all:
            f.close()
        logging.shutdown()
        sys.stderr.flush()
        # A background embed in flight cannot corrupt the index (each write is one
        # SQLite transaction): exit now rather than wait for it (or for torch's threads).
        os._exit(0)
    return 0
