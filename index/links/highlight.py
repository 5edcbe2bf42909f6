"""What a document highlight shows (``textDocument/documentHighlight``): the
other places of the same document that name what the cursor names.

* On a heading: the heading, and every link of the document to it (the
  fragment each writes).
* On a link's fragment (``#a-b-c``, ``other.md#a-b-c``): every link of the
  document to that heading (their fragments), and the heading itself when it is
  in this document.
* On a link's path (``other.md``, ``./cat.gif``, a URL): every link of the
  document to that file (their paths, whatever fragment follows), or to that URL
  (autolinks ``<https://...>`` too, :mod:`.autolinks`).

Links are the document's sites (:func:`.sites.link_sites`: inline links,
images, definitions, wiki links), so each range is the part of a destination
written in the text. Pure: the caller hands in how a link resolves.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from ..text.document import Heading, ParsedDocument
from .autolinks import Autolink
from .check import Span
from .links import Link, Target, find_heading
from .sites import Site, link_sites

Resolve = Callable[[Link], Target]


def _file(path: str) -> str:
    """``other`` and ``other.md`` are one note (a link may leave ``.md`` out)."""
    return path if posixpath.splitext(path)[1] else path + ".md"


def _key(t: Target, link: Link) -> str | None:
    """The place a link leads to, as a comparable key: the URL, or the file."""
    if t.external:
        return "url:" + link.href.strip()
    return "file:" + _file(t.path) if t.path is not None else None


def _heading_of(doc: ParsedDocument, rel: str, t: Target) -> Heading | str | None:
    """The heading a link's fragment names: a heading of this document, or the
    fragment of another file's (lower case: GitHub's anchors ignore case)."""
    if not t.anchor:
        return None
    if t.path == rel:
        return find_heading(doc, t.anchor, t.by_text)
    return f"{_file(t.path or '')}#{t.anchor.strip().lower()}"


def _span(site: Site, part: tuple[int, str]) -> Span:
    return Span(site.line, part[0], site.line, part[0] + len(part[1]))


def highlights(
    doc: ParsedDocument,
    rel: str,
    line: int,
    col: int,
    resolve: Resolve,
    links: Sequence[Link] | None = None,
    autolinks: Sequence[Autolink] = (),
) -> list[Span]:
    """The places of ``doc`` (workspace path ``rel``) to highlight for the
    cursor at (``line``, ``col``), in source order; [] when it is on none."""
    sites = list(link_sites(doc, links))
    head = next((h for h in doc.headings if h.line <= line < h.end_line), None)
    on: Site | None = None
    on_fragment = False
    auto = next((a for a in autolinks if a.line == line and a.start <= col <= a.end), None)
    if auto is not None:
        return _same_url(
            "url:" + auto.url, sites, {id(s): resolve(s.link) for s in sites}, autolinks
        )
    if head is None:
        for s in sites:
            path_part, frag = s.parts()
            if s.covers(line, col, frag) and frag is not None:
                on, on_fragment = s, True
                break
            if s.covers(line, col, path_part):
                on, on_fragment = s, not path_part[1] and frag is not None
                break
        if on is None:
            return []
    targets = {id(s): resolve(s.link) for s in sites}
    out: list[Span] = []
    if head is not None or on_fragment:
        want: Heading | str | None = head
        if on is not None:
            want = _heading_of(doc, rel, targets[id(on)])
        if want is None:
            return []
        if isinstance(want, Heading):
            lines = doc.lines()
            out.append(Span(want.line, 0, want.line, len(lines[want.line])))
        for s in sites:
            frag = s.parts()[1]
            if frag is not None and _heading_of(doc, rel, targets[id(s)]) == want:
                out.append(_span(s, (frag[0] - 1, "#" + frag[1])))  # the '#' with it
        return sorted(out, key=lambda sp: (sp.line, sp.start))
    assert on is not None
    key = _key(targets[id(on)], on.link)
    if key is None:
        return []
    return _same_url(key, sites, targets, autolinks)


def _same_url(
    key: str, sites: Sequence[Site], targets: dict[int, Target], autolinks: Sequence[Autolink]
) -> list[Span]:
    """The paths of the links leading to ``key`` (a file or a URL), and the
    autolinks to that URL, in source order."""
    out = [
        _span(s, s.parts()[0])
        for s in sites
        if s.parts()[0][1] and _key(targets[id(s)], s.link) == key
    ]
    out += [Span(a.line, a.start, a.line, a.end) for a in autolinks if "url:" + a.url == key]
    return sorted(out, key=lambda sp: (sp.line, sp.start))
