"""Where a document writes its link targets (:func:`link_sites`): an inline
link's or image's destination, a reference definition's destination, a wiki
link's ``target#heading``, each a :class:`Site` a rename or move can rewrite.

Code (fenced, indented, spans), autolinks and URLs are never sites:
markdown-it's tokens decide what is a link.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.helpers import parseLinkDestination, parseLinkLabel
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from mdit_py_plugins.front_matter import front_matter_plugin

from ..text.markdown import too_wide
from ..text.parse import ParsedDocument, shared_parser
from .links import (
    _WIKI,
    Link,
    LinkList,
    _inline_where_links_can_be,
    _LineMap,
    _split_href,
    find_links,
)


@dataclass(frozen=True)
class Site:
    """Where one link's target is written: ``raw`` is the source text at
    (line, col)-(line, end) -- a markdown destination (``<>`` included) or a wiki
    link's ``target#heading``."""

    kind: str  # "inline", "image", "definition" or "wiki"
    link: Link  # what to resolve
    line: int
    col: int
    end: int
    raw: str

    @property
    def angle(self) -> bool:
        return self.kind != "wiki" and self.raw.startswith("<")

    def parts(self) -> tuple[tuple[int, str], tuple[int, str] | None]:
        """(column, text) of the path part and of the fragment (after ``#``), if any."""
        inner, col = (self.raw[1:-1], self.col + 1) if self.angle else (self.raw, self.col)
        path, sep, frag = inner.partition("#")
        return (col, path), ((col + len(path) + 1, frag) if sep else None)

    def covers(self, line: int, col: int, part: tuple[int, str] | None) -> bool:
        return part is not None and line == self.line and part[0] <= col <= part[0] + len(part[1])


class SiteList(list[Site]):
    """The sites :func:`link_sites` read, in source order; ``cut`` when the
    document holds more links than :data:`.links.MAX_LINKS` (a rename or move
    must leave it alone: the rest were not read). ``image_refs``: each
    reference-style image (``![alt][ref]``, ``![ref]``) as a reference link over
    the whole image, its target the definition's; no site (the target is written
    on the ``[ref]:`` line)."""

    cut: bool = False
    image_refs: tuple[Link, ...] = ()


# -- where link targets are written ------------------------------------------------


def _inline_dest(state: StateInline, start: int, image: bool) -> tuple[int, int] | None:
    """Content offsets of the destination of the inline link or image that starts
    at ``start`` (None for a reference-style one)."""
    label_end = parseLinkLabel(state, start + 1 if image else start, not image)
    if label_end < 0:
        return None
    pos, src, top = label_end + 1, state.src, state.posMax
    if pos >= top or src[pos] != "(":
        return None
    pos += 1
    while pos < top and src[pos] in " \t\n":
        pos += 1
    res = parseLinkDestination(src, pos, top)
    return (pos, res.pos) if res.ok and res.pos > pos else None


def _dest_recording(rule_fn: Callable, token_type: str) -> Callable:
    def rule(state: StateInline, silent: bool) -> bool:
        start, n = state.pos, len(state.tokens)
        ok = rule_fn(state, silent)
        if ok and not silent:
            span = _inline_dest(state, start, token_type == "image")
            for tok in state.tokens[n:]:
                if tok.type == token_type:
                    tok.meta = {**(tok.meta or {}), "dest": span}
                    if span is None and token_type == "image":  # ![alt][ref]
                        tok.meta["whole"] = (start, state.pos)
                    break
        return ok

    return rule


def _definition_dest(state: StateBlock, line: int) -> tuple[int, int] | None:
    """Offsets in the text of a reference definition's destination (its label on
    one line; the destination on that line or the next)."""
    src = state.src
    pos, end = state.bMarks[line] + state.tShift[line] + 1, state.eMarks[line]
    while pos < end and src[pos] != "]":
        pos += 2 if src[pos] == "\\" else 1
    if pos + 1 >= end or src[pos + 1] != ":":
        return None
    pos += 2
    while pos < end and src[pos] in " \t":
        pos += 1
    if pos >= end and line + 1 < state.lineMax:
        line += 1
        pos, end = state.bMarks[line] + state.tShift[line], state.eMarks[line]
    res = parseLinkDestination(src, pos, end)
    return (pos, res.pos) if res.ok and res.pos > pos else None


def _def_recording(rule_fn: Callable) -> Callable:
    def rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        ok = rule_fn(state, start, end, silent)
        if ok and not silent:
            span = _definition_dest(state, start)
            if span is not None:
                state.env.setdefault("mdseek_defs", []).append(span)
        return bool(ok)

    return rule


def _make_site_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")
    md.core.ruler.at("inline", _inline_where_links_can_be)  # links and images hold a "["
    for name, tok in (("link", "link_open"), ("image", "image")):
        rule = next(r for r in md.inline.ruler.__rules__ if r.name == name)
        md.inline.ruler.at(name, _dest_recording(rule.fn, tok))
    ref = next(r for r in md.block.ruler.__rules__ if r.name == "reference")
    md.block.ruler.at("reference", _def_recording(ref.fn), {"alt": ref.alt})
    return md


@shared_parser
def _site_parser() -> MarkdownIt:
    return _make_site_parser()


@shared_parser
def _site_parser_no_tables() -> MarkdownIt:
    return _make_site_parser().disable("table")


def _site_parser_for(text: str) -> MarkdownIt:
    """The parser, without tables for a text :func:`.markdown.too_wide` (as every parser)."""
    return _site_parser_no_tables() if too_wide(text) else _site_parser()


def _md_link(href: str, line: int, col: int, end: int) -> Link:
    path, anchor = _split_href(href)
    return Link("markdown", href, path, anchor, "", line, col, line, end)


_last: tuple[ParsedDocument, SiteList] | None = None  # the last document's sites


def link_sites(doc: ParsedDocument, links: Sequence[Link] | None = None) -> SiteList:
    """Every place in ``doc`` where a link's target is written, in source order
    (``links``: ``find_links(doc)`` when the caller keeps it already). The last
    document's are kept: a rename asks for its own file's twice (the site under
    the cursor, then the edits), a full markdown-it pass each (a 5 MB file:
    a second or more)."""
    global _last
    last = _last  # one read: worker threads share it
    if last is not None and last[0] is doc:
        return last[1]
    out = _sites(doc, links)
    _last = (doc, out)
    return out


def _sites(doc: ParsedDocument, links: Sequence[Link] | None) -> SiteList:
    text, lines = doc.text, doc.lines()
    if "[" not in text:  # every link, image and definition starts with one: no parse
        return SiteList()
    md = _site_parser_for(text)
    env: dict = {}
    tokens = md.parse(text, env)
    out = SiteList()
    image_refs: list[Link] = []
    for a, b in env.get("mdseek_defs", []):
        line = doc.offset_line(a)
        col, end = a - doc.line_offset(line), b - doc.line_offset(line)
        raw = text[a:b]
        href = md.normalizeLink(_unescape(raw[1:-1] if raw.startswith("<") else raw))
        out.append(Site("definition", _md_link(href, line, col, end), line, col, end, raw))
    for tok in tokens:
        if tok.type != "inline" or tok.map is None or not tok.children:
            continue
        lm = _LineMap(tok.content, tok.map[0], lines)
        for c in tok.children:
            whole = (c.meta or {}).get("whole")
            if whole:
                (l0, c0), (l1, c1) = lm.pos(whole[0]), lm.pos(whole[1])
                href = str(c.attrs.get("src", ""))
                path, anchor = _split_href(href)
                ref = Link("markdown", href, path, anchor, "", l0, c0, l1, c1, reference=True)
                image_refs.append(ref)
            span = (c.meta or {}).get("dest")
            if not span or (c.type == "link_open" and c.markup == "autolink"):
                continue
            (l0, c0), (l1, c1) = lm.pos(span[0]), lm.pos(span[1])
            raw = lines[l0][c0:c1] if l0 == l1 else ""
            if raw != tok.content[span[0] : span[1]]:
                continue  # not where the map says (a container prefix inside): left alone
            href = str(c.attrs.get("src" if c.type == "image" else "href", ""))
            kind = "image" if c.type == "image" else "inline"
            out.append(Site(kind, _md_link(href, l0, c0, c1), l0, c0, c1, raw))
    if links is None:
        links = find_links(doc)
    out.cut = bool(env.get("mdseek_cut")) or (isinstance(links, LinkList) and links.cut)
    out.image_refs = tuple(image_refs)
    for lk in links:
        if lk.kind != "wiki" or lk.line != lk.end_line:
            continue
        m = _WIKI.match(lines[lk.line], lk.start)
        if m is None:
            continue
        out.append(Site("wiki", lk, lk.line, m.start(1), m.end(1), m.group(1)))
    out.sort(key=lambda s: (s.line, s.col))
    return out


_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")


def _unescape(raw: str) -> str:
    return _ESCAPED.sub(r"\1", raw)


def definition_of(
    doc: ParsedDocument, link: Link, links: Sequence[Link] | None = None
) -> Site | None:
    """The ``[label]: destination`` line a reference-style ``link`` uses: the
    first definition of the document with its destination (markdown-it gives a
    reference link its definition's, normalised as a site's)."""
    if not link.reference:
        return None
    return next(
        (s for s in link_sites(doc, links) if s.kind == "definition" and s.link.href == link.href),
        None,
    )
