"""Which sections one section is already linked with: those it links to and
those that link to it (related sections, unlinked).

A section is the span from its heading to the next heading (the index's own
section); a link counts where it is written inside that span. A link to a
file without an anchor links the whole note: every section of that file
counts as linked, both ways (a note that links ``db.md`` has met every
section of it). A link with an anchor links the section of that heading (or
that holds that ``^block``). Links resolve as the language server resolves
them (:func:`..links.links.resolve`: paths, wiki names, front-matter aliases
of the notes at hand), in the files as saved on disk.

Cost: the source file and each candidate's file read and parsed once per
call; a candidate's file whose text names neither the source's file nor one of
its aliases cannot link to it and is not parsed for links.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from ..links.links import Link, find_heading, find_links, resolve
from ..links.obsidian import block_ids, is_block_ref
from ..store.chunks import SectionRow
from ..text.aliases import AliasMap, doc_aliases, doc_title, title_slug
from ..text.document import ParsedDocument
from . import facade
from .engine import Engine, SearchResponse, SearchResult

# Read the candidates' files of at most this many related sections to find
# ``limit`` unlinked ones (a section linked with hundreds of others stops there).
MAX_CANDIDATES = 200


@dataclass(frozen=True)
class Span:
    """A section of a file: its lines (0-based, end exclusive) and heading line (None: a preamble)."""

    path: str
    start_line: int
    end_line: int
    heading_line: int | None


@dataclass
class LinkedWith:
    """The links of one source section, resolved, and a test of candidates against them.

    ``read(rel)``: a file of the folder parsed (None: unreadable, so not linked);
    ``files``: the folder's indexed markdown files (wiki names resolve against them)."""

    source: Span
    read: Callable[[str], ParsedDocument | None]
    files: Sequence[str]
    _docs: dict[str, ParsedDocument | None] = field(default_factory=dict)
    _out: list[tuple[str, str | None, bool]] = field(
        default_factory=list
    )  # (path, anchor, by_text)
    _alias_map: tuple[int, AliasMap] | None = None
    _unresolved: list[Link] = field(default_factory=list)  # wiki links: maybe a note not read yet

    def __post_init__(self) -> None:
        self._set = set(self.files)
        doc = self._doc(self.source.path)
        if doc is None:
            return
        for link in _links_in(doc, self.source.start_line, self.source.end_line):
            t = self._resolve(link, self.source.path, doc)
            if t is not None:
                self._out.append(t)
            elif link.kind == "wiki":
                self._unresolved.append(link)

    def _aliases(self) -> AliasMap:
        """The aliases and titles of the notes read so far (one names one of them or none)."""
        if self._alias_map is None or self._alias_map[0] != len(self._docs):
            docs = {r: d for r, d in self._docs.items() if d is not None}
            by_file = {r: doc_aliases(d) for r, d in docs.items()}
            titles = {r: doc_title(d) for r, d in docs.items()}
            self._alias_map = (len(self._docs), AliasMap(by_file, self.files, titles))
        return self._alias_map[1]

    def _doc(self, rel: str) -> ParsedDocument | None:
        if rel not in self._docs:
            self._docs[rel] = self.read(rel)
        return self._docs[rel]

    def _resolve(
        self, link: Link, src: str, src_doc: ParsedDocument
    ) -> tuple[str, str | None, bool] | None:
        if link.kind == "markdown" and (link.external or not link.path):
            return None
        if link.kind == "wiki" and not link.path:
            return None
        t = resolve(link, src, self._set.__contains__, self.files, self._aliases())
        if t.path is None or not t.exists:
            return None
        return t.path, t.anchor, t.by_text

    def linked(self, cand: Span) -> bool:
        """Whether the source section links to ``cand`` or ``cand`` links to it."""
        cdoc = self._doc(cand.path)
        if cdoc is None:
            return False
        sdoc = self._doc(self.source.path)
        again = (self._resolve(lk, self.source.path, sdoc) for lk in self._unresolved if sdoc)
        for t in (*self._out, *again):  # an alias or title of cand is known once it is read
            if t is not None and t[0] == cand.path and _names(cdoc, t[1], t[2], cand):
                return True
        if sdoc is None or not self._may_name_source(cdoc):
            return False
        for link in _links_in(cdoc, cand.start_line, cand.end_line):
            t = self._resolve(link, cand.path, cdoc)
            if t is not None and t[0] == self.source.path and _names(sdoc, t[1], t[2], self.source):
                return True
        return False

    def _may_name_source(self, cdoc: ParsedDocument) -> bool:
        """Whether a file's text names the source file, one of its aliases or its title at all."""
        stem = posixpath.splitext(posixpath.basename(self.source.path))[0].lower()
        sdoc = self._doc(self.source.path)
        title = doc_title(sdoc) if sdoc is not None else None
        aliases = (
            (*doc_aliases(sdoc), *((title, title_slug(title)) if title else ())) if sdoc else ()
        )
        names = {stem, quote(stem).lower(), *(a.lower() for a in aliases)}
        low = cdoc.text.lower()
        return any(n and n in low for n in names)


def _links_in(doc: ParsedDocument, start: int, end: int) -> list[Link]:
    return [lk for lk in find_links(doc) if start <= lk.line < end]


def _names(doc: ParsedDocument, anchor: str | None, by_text: bool, span: Span) -> bool:
    """Whether a link into ``doc`` with this anchor reaches the section ``span``:
    no anchor reaches every section; a heading's anchor, that heading's section;
    a block id, the section holding its line."""
    if not anchor:
        return True
    if is_block_ref(anchor):
        line = block_ids(doc).get(anchor[1:].lower())
        return line is not None and span.start_line <= line < span.end_line
    h = find_heading(doc, anchor, by_text)
    return h is not None and span.heading_line is not None and h.line == span.heading_line


# -- related sections, unlinked ------------------------------------------------------


def _reader(engine: Engine) -> Callable[[str], ParsedDocument | None]:
    def read(rel: str) -> ParsedDocument | None:
        try:
            return facade.read_document(engine, rel)
        except (facade.NotIndexed, facade.OutsideRoot):
            return None

    return read


def _span(r: SearchResult | SectionRow) -> Span:
    return Span(r.path, r.start_line, r.end_line, r.start_line if r.level > 0 else None)


def linked_with(engine: Engine, source: SectionRow) -> LinkedWith:
    """The test of candidates against one indexed section's links."""
    return LinkedWith(_span(source), _reader(engine), sorted(engine.store.documents.all()))


def _unlinked(
    engine: Engine,
    source: SectionRow | None,
    ask: Callable[[int], SearchResponse],
    limit: int,
    fill: bool,
) -> SearchResponse:
    """``ask(n)``'s answer less the sections linked with ``source``: up to ``limit``
    of them (``fill``: asking for more, up to :data:`MAX_CANDIDATES`, until there
    are ``limit`` or no more), else those among the first ``limit``."""
    n = limit + 10 if fill else limit
    check = linked_with(engine, source) if source is not None else None
    while True:
        resp = ask(n)
        if check is None:
            return resp
        kept = [r for r in resp.results if not check.linked(_span(r))]
        if not fill or len(kept) >= limit or len(resp.results) < n or n >= MAX_CANDIDATES:
            return SearchResponse(kept[:limit], resp.mode, resp.note, resp.evidence)
        n = min(n * 4, MAX_CANDIDATES)


def related(
    engine: Engine,
    rel: str,
    slug: str | None,
    start_line: int,
    limit: int = 5,
    unlinked: bool = False,
    fill: bool = True,
) -> SearchResponse:
    """:func:`facade.related`; ``unlinked``: less what the section already links
    to or is linked from (``fill``: still ``limit`` of them when there are;
    otherwise those among the ``limit`` most related, as the lens counts)."""
    if not unlinked or limit <= 0:
        return facade.related(engine, rel, slug, start_line, limit)
    source = facade.indexed_section(engine, rel, slug, start_line)
    return _unlinked(
        engine,
        source,
        lambda n: facade.related(engine, rel, slug, start_line, n),
        limit,
        fill,
    )


def sections_like(
    engine: Engine,
    text: str,
    limit: int,
    rel: str | None,
    line: int | None = None,
    dense: bool = True,
) -> SearchResponse:
    """:func:`facade.sections_like` (outside ``rel``); with ``line``, less what the
    section of ``rel`` holding that line already links to or is linked from."""
    source = None
    if rel is not None and line is not None:
        source = next(
            (
                s
                for s in engine.store.chunks.document_sections(rel)
                if s.start_line <= line < s.end_line
            ),
            None,
        )
    return _unlinked(
        engine,
        source,
        lambda n: facade.sections_like(engine, text, n, rel, dense=dense),
        limit,
        True,
    )
