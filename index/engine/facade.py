"""What the front ends ask of one folder's index, in one place: search (with a
path glob), a file's outline, a section's exact markdown, the sections related
to one, and whether the folder changed since the last
reconcile. The language server and the MCP server both answer from here.

Every path a client gives goes through :func:`confine`: relative to the
folder or absolute, it must resolve (symlinks followed) to a file inside the
folder that the folder's filter indexes — so no byte of any other file can be
read through this module.

Lines here are 0-based with exclusive ends, like the rest of the engine; the
front ends convert.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..links.links import find_heading
from ..links.obsidian import is_media, may_open
from ..search.requests import Mode, SearchRequest, path_wanted
from ..store.chunks import SectionRow
from ..text.document import ParsedDocument, Section, subtree_ends
from ..text.encoding import NotText
from ..text.files import (
    BadGlob,
    FileFilter,
    FoundFile,
    check_file,
    check_glob,
    read_found,
    scan,
)
from ..text.markdown import MAX_INLINE_HEADING, heading_text
from ..text.parse import TooManyHeadings, parse_bytes
from .engine import Engine, SearchResponse, SearchResult

GLOB_FETCH = 500  # results asked of the engine before a path glob filters them
FILTER_DEPTH = 2000  # chunks asked of each retriever when a filter chooses the notes


class OutsideRoot(ValueError):
    """A path that leads outside the folder (``..``, an absolute path, a symlink)."""


class NotIndexed(LookupError):
    """A path inside the folder that is not a markdown file the folder indexes."""


class NoSuchSection(LookupError):
    """A heading, anchor or line that names no section of the file."""


# -- paths ------------------------------------------------------------------------


def confine(engine: Engine, path: str) -> tuple[str, Path]:
    """(workspace-relative posix path, real absolute path) of a file a client
    named, or OutsideRoot / NotIndexed."""
    return confine_in(engine.root, engine.filter, path)


def confine_in(
    root: Path, flt: FileFilter, path: str, media: bool = False, any_file: bool = False
) -> tuple[str, Path]:
    """:func:`confine` for a folder (resolved) and its filter, without an engine
    (the language server's links, before the folder's index is open). With
    ``media``, a picture, PDF, sound or video (:func:`obsidian.is_media`) the
    filter does not exclude passes too, whatever its size; with ``any_file``,
    any such file but a hidden one or a key (:func:`obsidian.may_open`: what a
    document link may open).
    The rule is :func:`files.check_file`'s, the index's own (a symlink's target
    passes the filter too)."""
    if not isinstance(path, str) or not path.strip() or "\0" in path:
        raise NotIndexed("give the path of a markdown file, relative to the folder")
    p = Path(path.strip())
    if not p.is_absolute():
        p = root / p
    try:
        real = p.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise NotIndexed(f"{path}: cannot be read ({exc})") from exc
    if not real.is_relative_to(root):
        raise OutsideRoot(f"{path}: outside the served folder")
    if not Path(os.path.normpath(p)).is_relative_to(root):  # the folder named another way
        p = real
    why: list[str] = []
    found = check_file(
        root,
        p,
        flt,
        lambda _r, w: why.append(w),
        attachment=may_open if any_file else (is_media if media else None),
    )
    missing = f"{path}: no such markdown file (or over the size limit)"
    if found is None and why and (why[0].startswith("cannot stat") or "limit" in why[0]):
        raise NotIndexed(missing)
    if found is None and not why and real.exists() and not real.is_file():
        raise NotIndexed(missing)
    if found is None or found.source.resolve() != real:
        raise NotIndexed(f"{path}: not a markdown file this folder indexes")
    return real.relative_to(root).as_posix(), real


def read_document(engine: Engine, path: str) -> ParsedDocument:
    """A confined file, parsed from disk (its current text, not the index's)."""
    rel, real = confine(engine, path)
    try:
        # The resolved path has no symlink left; O_NOFOLLOW refuses one swapped in since.
        found = FoundFile(rel, real, 0, 0, 0, real)
        data = read_found(found, engine.filter.max_file_size)
    except OSError as exc:
        raise NotIndexed(f"{path}: cannot be read ({exc.strerror})") from exc
    try:
        return parse_bytes(data, rel)
    except NotText as exc:
        raise NotIndexed(f"{path}: not indexed: {exc}") from None
    except TooManyHeadings as exc:
        raise NotIndexed(f"{path}: {exc}") from None


# -- outline and sections -------------------------------------------------------------


@dataclass(frozen=True)
class OutlineEntry:
    level: int
    text: str
    slug: str
    breadcrumb: str
    line: int  # the heading's line
    heading_end_line: int  # exclusive: after the heading (two lines for setext)
    end_line: int  # exclusive: the next heading of the same or a higher level
    written: str = ""  # the heading with its inline markup as written (text: plain)


def outline(doc: ParsedDocument) -> list[OutlineEntry]:
    """The document's headings in order, each spanning its subsections."""
    crumbs = {s.heading.line: s.breadcrumb for s in doc.sections if s.heading}
    hs = doc.headings
    lines = doc.lines()
    out = []
    for h, end in zip(hs, subtree_ends(hs, doc.line_count), strict=True):
        out.append(
            OutlineEntry(
                h.level,
                h.text,
                h.slug,
                crumbs.get(h.line, h.text),
                h.line,
                h.end_line,
                end,
                written_heading(lines, h.line, h.end_line, h.text),
            )
        )
    return out


def _described(doc: ParsedDocument) -> str:
    if not doc.headings:
        return f"{doc.path} has no headings"
    shown = [f"{h.text!r} (#{h.slug}, line {h.line + 1})" for h in doc.headings[:60]]
    more = f" and {len(doc.headings) - 60} more" if len(doc.headings) > 60 else ""
    return f"{doc.path} has: " + ", ".join(shown) + more


def find_section(
    doc: ParsedDocument,
    heading: str | None = None,
    anchor: str | None = None,
    line: int | None = None,
) -> Section:
    """The section a heading text (or breadcrumb), an anchor (slug, ``#`` optional)
    or a 0-based line names; NoSuchSection lists the real headings."""
    given = [x for x in (heading, anchor, line) if x is not None and x != ""]
    if len(given) != 1:
        raise NoSuchSection("name the section by exactly one of heading, anchor or line")
    if line is not None:
        if not 0 <= line < max(doc.line_count, 1):
            raise NoSuchSection(f"line {line + 1} is not in {doc.path} ({doc.line_count} lines)")
        for s in doc.sections:
            if s.start_line <= line < s.end_line:
                return s
        raise NoSuchSection(f"line {line + 1} of {doc.path} is in no section")
    h = None
    if anchor is not None:
        h = find_heading(doc, anchor.lstrip("#"))
    elif heading is not None:
        want = heading.strip()
        h = next((s.heading for s in doc.sections if s.heading and s.breadcrumb == want), None)
        h = h or find_heading(doc, want, by_text=True)
        if h is None and len(want) <= MAX_INLINE_HEADING:  # as written: `code`, *emphasis*
            h = find_heading(doc, " ".join(heading_text(want, {}).split()), by_text=True)
    sec = next((s for s in doc.sections if h is not None and s.heading == h), None)
    if sec is None:
        what = (
            f"heading {heading!r}" if heading is not None else f"anchor #{str(anchor).lstrip('#')}"
        )
        raise NoSuchSection(f"no {what} in {doc.path}; {_described(doc)}")
    return sec


def section_end(doc: ParsedDocument, section: Section, subsections: bool) -> int:
    """Where a section's text ends: at the next heading, or (with its
    subsections) at the next heading of the same or a higher level."""
    if not subsections or section.heading is None:
        return section.end_line
    lvl = section.heading.level
    return next(
        (h.line for h in doc.headings if h.line > section.start_line and h.level <= lvl),
        doc.line_count,
    )


def section_text(doc: ParsedDocument, start_line: int, end_line: int) -> str:
    """The file's lines ``start_line``..``end_line`` exactly, less trailing blank lines."""
    lines = doc.lines()[start_line:end_line]
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


# -- index ------------------------------------------------------------------------------


def search(engine: Engine, request: SearchRequest) -> SearchResponse:
    """The engine's search, optionally only in files that the request's path
    globs let through (``rg -g`` style, see :func:`requests.path_wanted`): a
    filter on results, the index is not touched. BadGlob for a glob over the
    length limit."""
    paths = request.paths + request.filter.paths
    for glob in paths:
        if why := check_glob(glob):
            raise BadGlob(f"path: {why}")
    only: frozenset[str] | None = None
    notes: list[str] = []
    if request.filter.on_notes:  # the notes whose tags and fields pass; the index is untouched
        chosen, notes = request.filter.select(engine.store.documents.props())
        only = frozenset(chosen)
        if not only:
            why = "; ".join(notes) or f"no note matches {request.filter}"
            return SearchResponse([], request.mode, why)
    fetch = max(request.limit, GLOB_FETCH) if paths else request.limit
    resp = engine.search(
        dataclasses.replace(request, limit=fetch),
        only_paths=only,
        depth=FILTER_DEPTH if only is not None else None,
    )
    if notes:
        resp.note = "; ".join([resp.note, *notes] if resp.note else notes)
    if paths:
        resp.results = [r for r in resp.results if path_wanted(r.path, paths)][: request.limit]
    return resp


_ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]+|$)")
_ATX_CLOSE = re.compile(r"(?:[ \t]+#+)?[ \t]*$")


def heading_as_written(engine: Engine, r: SearchResult) -> str:
    """A result's heading with its inline markup as the file writes it, read
    from the file (:func:`written_heading`); the plain heading when the file
    changed since it was indexed (or cannot be read)."""
    if not r.heading:
        return r.heading
    try:
        _, real = confine(engine, r.path)
        with open(real, encoding="utf-8-sig", errors="replace") as fh:
            lines = list(
                itertools.islice(fh, r.heading_line, max(r.heading_end_line, r.heading_line + 1))
            )
    except (OutsideRoot, NotIndexed, OSError):
        return r.heading
    return written_heading(lines, 0, len(lines), r.heading)


def written_heading(lines: Sequence[str], line: int, end_line: int, plain: str) -> str:
    """A heading's text with its inline markup as the file writes it
    (``Where to Use the `?` Operator``, ``*Emphasis* here``) from its lines
    ``line``..``end_line`` (0-based, end exclusive: an ATX heading's line, or a
    setext heading's text lines and underline); ``plain`` (the heading as plain
    text) when those lines no longer read as it, e.g. the file changed since
    it was indexed."""
    if not plain or not 0 <= line < len(lines):
        return plain
    first = lines[line].rstrip("\r\n")
    m = _ATX.match(first)
    if m and end_line <= line + 1:
        raw = _ATX_CLOSE.sub("", first[m.end() :]).strip()
    else:  # setext: the text lines above the underline
        raw = " ".join(x.strip() for x in lines[line : max(line + 1, end_line - 1)])
    same = " ".join(heading_text(raw, {}).split()) == " ".join(plain.split())
    return raw if same else plain


@dataclass(frozen=True)
class Completeness:
    complete: bool
    note: str | None  # why not, with the counts
    pending: int  # texts (chunks, passages) still without a vector


def completeness(engine: Engine, mode: Mode, reading: bool) -> Completeness:
    """Whether a search's answer is final: not while the folder is still being
    read (``reading``: the layer knows) nor, for a ranking with meaning
    (hybrid, dense), while chunks still wait for their vector. A model that
    cannot load leaves nothing to wait for (the answer's own note says lexical only)."""
    pending = 0
    if mode != Mode.LEXICAL and engine.models.embedder.error is None:
        pending = engine.store.vectors.pending_count(engine.models.model_id)
    parts = []
    if reading:
        parts.append("the folder is still being read (results may miss files)")
    if pending:
        counts = engine.store.counts()
        total = counts["chunks"] + counts["passages"]
        parts.append(
            f"{pending} of {total} texts still wait for their vector "
            "(semantic ranking will change as they arrive)"
        )
    if not parts:
        return Completeness(True, None, 0)
    return Completeness(False, "partial results: " + "; ".join(parts), pending)


def sections_like(
    engine: Engine, text: str, limit: int = 5, exclude_path: str | None = None, dense: bool = True
) -> SearchResponse:
    """Sections (outside ``exclude_path``) about what a passage of text is about —
    a paragraph being written — best first: hybrid search seeded with the passage
    (lexical only while ``dense`` is False or the model is not loaded yet)."""
    return engine.search(
        text[:2000],
        limit=limit,
        mode=Mode.HYBRID if dense else Mode.LEXICAL,
        wait_for_model=False,
        exclude_path=exclude_path,
    )


def related(
    engine: Engine, rel: str, slug: str | None, start_line: int, limit: int = 5
) -> SearchResponse:
    """Sections elsewhere about the same thing as the indexed section of ``rel``
    with this slug (or, for a preamble or a moved heading, starting at this line)."""
    if limit <= 0:
        return SearchResponse([], Mode.LEXICAL)
    row = indexed_section(engine, rel, slug, start_line)
    if row is None:
        return SearchResponse([], Mode.LEXICAL, "section not indexed yet")
    return engine.related(rel, row.ordinal, limit=limit)


def indexed_section(
    engine: Engine, rel: str, slug: str | None, start_line: int
) -> SectionRow | None:
    """The indexed section of ``rel`` with this slug, else the one starting at this line."""
    sections = engine.store.chunks.document_sections(rel)
    match = [s for s in sections if slug and s.slug == slug] or [
        s for s in sections if s.start_line == start_line
    ]
    return match[0] if match else None


def stale(engine: Engine) -> bool:
    """Whether any indexable file was added, removed or changed (size or mtime)
    since the index last saw it: one directory walk and a stat per file."""
    known = engine.store.documents.all()
    n = 0
    for f in scan(engine.root, engine.filter):
        d = known.get(f.rel)
        if d is None or d.size != f.size or d.mtime_ns != f.mtime_ns:
            return True
        n += 1
    return n != len(known)
