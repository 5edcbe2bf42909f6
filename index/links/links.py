"""Links between markdown sections: find them in a document, resolve them to a
file and heading of the workspace. Pure functions; no LSP, no file reading
(existence and the list of files are handed in).

What counts as a link
  * Inline links ``[t](other.md#anchor)``, ``[t](#anchor)``, ``[t](<a b.md>)``
    and reference-style links ``[t][ref]``, ``[t][]``, ``[ref]`` (with a
    ``[ref]: target`` definition somewhere in the document). These come from
    markdown-it-py's own ``link_open`` tokens, so a link inside a code span or
    a fence never counts; an image is not a link.
  * Wiki links ``[[note]]``, ``[[note#Heading]]``, ``[[#Heading]]``,
    ``[[note|alias]]``, found by a regex over the *text* of inline content
    only (code spans, links, autolinks and inline HTML are cut out first).

Positions: markdown-it gives a block's lines, not columns. We wrap its inline
``link`` and ``backticks`` rules to record where each link / code span starts
and ends in the inline content, then map content offsets back to source lines
and columns. Columns are code points (Python ``str`` indices) of the
normalised text; the protocol layer converts them to UTF-16 or whatever was
negotiated.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from ..text.aliases import NO_ALIASES, AliasMap
from ..text.document import Heading, ParsedDocument
from ..text.markdown import shared_parser, too_wide, visible_text
from ..text.parse import normalise
from ..text.slug import github_slug

MARKDOWN_SUFFIXES = (".md", ".markdown")
# markdown-it's inline parse costs tens of microseconds a link; a 5 MB file
# holds 200,000 (over 30 s for its document links, diagnostics, a rename). Past
# this many ``[`` (a link starts with one, a wiki link with two) the rest of a
# file's links are not read (``LinkList.cut``): no feature sees them, and a
# rename or move that would rewrite them is refused (issue 40).
MAX_LINKS = 10_000

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_WIKI = re.compile(r"\[\[([^\[\]|\n]*?)(?:\|([^\[\]\n]*))?\]\]")
_CHECKBOX = re.compile(r"\[[ xX]\](?:\s|$)")  # a task list item's box, where a list item starts


@dataclass(frozen=True)
class Link:
    kind: str  # "markdown" (inline or reference-style) or "wiki"
    href: str  # markdown: the destination markdown-it resolved; wiki: the inner target
    path: str  # decoded path part ("" = this document)
    anchor: str | None  # decoded fragment (markdown: a slug; wiki: heading text)
    text: str  # the visible text (label or alias)
    line: int  # 0-based line of the link's first character
    start: int  # column (code points) of the first character ('[')
    end_line: int
    end: int  # column just past the last character
    reference: bool = False  # reference-style markdown link

    @property
    def external(self) -> bool:
        return self.kind == "markdown" and bool(_SCHEME.match(self.href))

    def contains(self, line: int, col: int) -> bool:
        if line < self.line or line > self.end_line:
            return False
        if line == self.line and col < self.start:
            return False
        if line == self.end_line and col > self.end:
            return False
        return True


class LinkList(list[Link]):
    """:func:`find_links`'s links; ``cut``: past :data:`MAX_LINKS`, the rest unread."""

    cut: bool = False


@dataclass(frozen=True)
class Target:
    path: str | None  # workspace-relative posix path; None when outside the workspace
    anchor: str | None  # slug (markdown) or heading text (wiki) or None for the file
    by_text: bool  # anchor is heading text (wiki link), not a slug
    exists: bool  # the file exists
    outside: bool = False  # the link leaves the workspace (../../etc/passwd)
    external: bool = False  # a URL (http:, mailto:, ...), not resolved
    alias: bool = False  # a wiki link reaching its note by a front-matter alias
    ambiguous: tuple[str, ...] = ()  # an alias several notes claim: them (path is None)
    by_title: bool = False  # reached (or made ambiguous) by a note's title, not an alias


# -- finding links --------------------------------------------------------------


def _recording(rule_fn: Callable, token_type: str) -> Callable:
    """Wrap an inline rule so the first ``token_type`` token it pushes gets
    ``meta["span"] = (start, end)``: offsets in the inline content."""

    def rule(state: StateInline, silent: bool) -> bool:
        start = state.pos
        n = len(state.tokens)
        ok = rule_fn(state, silent)
        if ok and not silent:
            for tok in state.tokens[n:]:
                if tok.type == token_type:
                    tok.meta = {**(tok.meta or {}), "span": (start, state.pos)}
                    break
        return ok

    return rule


def _inline_where_links_can_be(state: StateCore) -> None:
    """markdown-it's core ``inline`` rule, for inline content holding a ``[``
    only: every link (and wiki link) starts with one, and autolinks are never
    sections. Paragraphs without one -- most of a typical document -- cost no
    inline pass (find_links over a folder: about a third less time).

    At most :data:`MAX_LINKS` ``[`` are parsed in one document: the content
    holding the next one is parsed up to it, the rest not at all, and
    ``state.env["mdseek_cut"]`` says so."""
    budget = MAX_LINKS
    for tok in state.tokens:
        if tok.type == "inline":
            if tok.children is None:
                tok.children = []
            if "[" not in tok.content:
                continue
            if budget <= 0:
                state.env["mdseek_cut"] = True
                continue
            content = tok.content
            n = content.count("[")
            if n > budget:
                at = -1
                for _ in range(budget + 1):
                    at = content.index("[", at + 1)
                content = content[:at]
                state.env["mdseek_cut"] = True
            budget -= n
            state.md.inline.parse(content, state.md, state.env, tok.children)


def _make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")
    md.core.ruler.at("inline", _inline_where_links_can_be)
    rules = {r.name: r for r in md.inline.ruler.__rules__}
    for name, tok in (
        ("link", "link_open"),
        ("backticks", "code_inline"),
        ("autolink", "link_open"),
        ("html_inline", "html_inline"),
        ("image", "image"),
    ):
        if name in rules:
            md.inline.ruler.at(name, _recording(rules[name].fn, tok))
    return md


@shared_parser
def _parser() -> MarkdownIt:
    return _make_parser()


@shared_parser
def _parser_no_tables() -> MarkdownIt:
    return _make_parser().disable("table")


def _parser_for(text: str) -> MarkdownIt:
    """The parser, without tables for a text :func:`.markdown.too_wide` (as every parser)."""
    return _parser_no_tables() if too_wide(text) else _parser()


class _LineMap:
    """Maps offsets in an inline token's content to (line, column) in the source."""

    def __init__(self, content: str, first_line: int, src_lines: list[str]):
        self.starts: list[int] = []  # content offset where each content line starts
        self.bases: list[int] = []  # source column of each content line's first char
        self.first = first_line
        off = 0
        for i, cl in enumerate(content.split("\n")):
            src = src_lines[first_line + i] if first_line + i < len(src_lines) else ""
            base = src.rfind(cl) if cl else 0
            self.starts.append(off)
            self.bases.append(max(0, base))
            off += len(cl) + 1

    def pos(self, offset: int) -> tuple[int, int]:
        i = max(0, bisect.bisect_right(self.starts, offset) - 1)
        return self.first + i, self.bases[i] + offset - self.starts[i]


def _split_href(href: str) -> tuple[str, str | None]:
    path, sep, frag = href.partition("#")
    path = path.split("?", 1)[0]
    return unquote(path), (unquote(frag) if sep else None)


def _text_of(children: list[Token], i: int) -> tuple[str, int]:
    """Visible text of a link whose link_open is children[i]; returns (text, index of close)."""
    depth = 0
    j = i + 1
    while j < len(children):
        c = children[j]
        if c.type == "link_open":
            depth += 1
        elif c.type == "link_close":
            if depth == 0:
                break
            depth -= 1
        j += 1
    return visible_text(children[i + 1 : j]), j


def _merged(spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """``spans`` as disjoint (starts, ends), sorted: overlap is one bisect."""
    starts: list[int] = []
    ends: list[int] = []
    for a, b in sorted(spans):
        if ends and a < ends[-1]:
            ends[-1] = max(ends[-1], b)
        else:
            starts.append(a)
            ends.append(b)
    return starts, ends


def _overlaps(merged: tuple[list[int], list[int]], a: int, b: int) -> bool:
    starts, ends = merged
    k = bisect.bisect_left(starts, b) - 1
    return k >= 0 and ends[k] > a


def find_links(doc: ParsedDocument | str) -> LinkList:
    """Every markdown and wiki link of a document, in source order (the first
    :data:`MAX_LINKS`: see :class:`LinkList`)."""
    text = doc.text if isinstance(doc, ParsedDocument) else normalise(doc)
    if "[" not in text:  # every link starts with one: no parse
        return LinkList()
    src_lines = text.split("\n")
    env: dict = {}
    tokens = _parser_for(text).parse(text, env)
    out = LinkList()
    out.cut = bool(env.get("mdseek_cut"))
    for k, tok in enumerate(tokens):
        if tok.type != "inline" or tok.map is None or not tok.children:
            continue
        if len(out) >= MAX_LINKS:
            out.cut = True
            break
        content = tok.content
        lm = _LineMap(content, tok.map[0], src_lines)
        cut: list[tuple[int, int]] = []  # content spans that are not plain text
        children = tok.children
        item = k >= 2 and tokens[k - 2].type == "list_item_open"
        for i, c in enumerate(children):
            span = (c.meta or {}).get("span")
            if span:
                cut.append(span)
            if c.type != "link_open" or not span:
                continue
            if c.markup == "autolink":
                continue  # <https://...>: a URL, never a section
            if item and span[0] == 0 and _CHECKBOX.match(content):
                continue  # - [x] a task: a checkbox (GitHub, Obsidian), even if [x]: is defined
            href = str(c.attrs.get("href", ""))
            path, anchor = _split_href(href)
            label, _ = _text_of(children, i)
            reference = content[span[0] : span[1]].endswith("]")
            (l0, c0), (l1, c1) = lm.pos(span[0]), lm.pos(span[1])
            out.append(
                Link("markdown", href, path, anchor, label, l0, c0, l1, c1, reference=reference)
            )
        code = _merged(cut)
        for m in _WIKI.finditer(content):
            if len(out) >= MAX_LINKS:
                out.cut = True
                break
            a, b = m.span()
            if _overlaps(code, a, b):
                continue
            inner = m.group(1).strip()
            alias = (m.group(2) or "").strip()
            target, sep, heading = inner.partition("#")
            (l0, c0), (l1, c1) = lm.pos(a), lm.pos(b)
            out.append(
                Link(
                    "wiki",
                    inner,
                    target.strip(),
                    heading.strip() if sep else None,
                    alias or inner,
                    l0,
                    c0,
                    l1,
                    c1,
                )
            )
    out.sort(key=lambda k: (k.line, k.start))
    return out


def link_at(links: Iterable[Link], line: int, col: int) -> Link | None:
    for link in links:
        if link.contains(line, col):
            return link
    return None


# -- resolving ----------------------------------------------------------------


def _is_markdown(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


def _inside(rel: str) -> str | None:
    """Normalised workspace-relative path, or None when it climbs out of the root."""
    norm = posixpath.normpath(rel) if rel else "."
    if norm == ".." or norm.startswith("../") or norm.startswith("/"):
        return None
    return "" if norm == "." else norm


def resolve(
    link: Link,
    source: str,
    exists: Callable[[str], bool],
    files: Iterable[str] = (),
    aliases: AliasMap = NO_ALIASES,
) -> Target:
    """Where ``link`` (found in the document at workspace path ``source``) points.

    ``exists(rel)``: is a workspace-relative path a file; ``files`` (the markdown
    files) and ``aliases`` (front-matter aliases, notes' titles) resolve wiki links:
    a path or file name first, then an alias, then a title (marksman's rule); one
    several notes share resolves to none of them (``Target.ambiguous`` names them).
    """
    if link.kind == "markdown":
        if link.external:
            return Target(None, None, False, False, external=True)
        if not link.path:
            return Target(source, link.anchor or None, False, True)
        raw = link.path.replace("\\", "/")
        joined = (
            raw.lstrip("/")
            if raw.startswith("/")
            else posixpath.join(posixpath.dirname(source), raw)
        )
        rel = _inside(joined)
        if rel is None or rel == "":
            return Target(None, link.anchor, False, False, outside=rel is None)
        if not exists(rel) and not _is_markdown(rel):
            for suf in MARKDOWN_SUFFIXES:  # [t](other) for other.md, as many renderers allow
                if exists(rel + suf):
                    rel += suf
                    break
        return Target(rel, link.anchor or None, False, exists(rel))
    anchor = link.anchor or None  # wiki
    if not link.path:
        return Target(source, anchor, True, True)
    rel = resolve_wiki_name(link.path, source, exists, files)
    if rel is None and aliases:  # an alias, else a title (AliasMap.reach)
        notes, by_title = aliases.reach(link.path)
        if len(notes) == 1:
            return Target(notes[0], anchor, True, True, alias=True, by_title=by_title)
        if notes:
            return Target(None, anchor, True, False, ambiguous=notes, by_title=by_title)
    if rel is None:
        guess = _inside(posixpath.join(posixpath.dirname(source), link.path))
        if guess is None:
            return Target(None, link.anchor, True, False, outside=True)
        if not _is_markdown(guess):
            guess += ".md"
        return Target(guess, anchor, True, False)
    return Target(rel, anchor, True, True)


def resolve_wiki_name(
    name: str, source: str, exists: Callable[[str], bool], files: Iterable[str]
) -> str | None:
    """``[[name]]`` → a workspace file: a path relative to the linking file, then
    to the root, then any file whose name (without extension) is ``name``
    (case-insensitive; the nearest to the linking file wins)."""
    name = name.strip().replace("\\", "/")
    if not name:
        return None
    here = posixpath.dirname(source)
    for base in (posixpath.join(here, name), name):
        rel = _inside(base)
        if not rel:
            continue
        for cand in (rel, *(rel + s for s in MARKDOWN_SUFFIXES)):
            if _is_markdown(cand) and exists(cand):
                return cand
    want = name.lower()
    if _is_markdown(want):
        want = posixpath.splitext(want)[0]
    matches = []
    for f in files:
        stem = posixpath.splitext(f)[0].lower()
        if stem == want or stem.endswith("/" + want):
            matches.append(f)
    if not matches:
        return None

    def distance(f: str) -> tuple[int, int, str]:
        common = posixpath.commonpath([here, posixpath.dirname(f)]) if here else ""
        up = len([p for p in here.split("/") if p]) - len([p for p in common.split("/") if p])
        return (up + f.count("/") - common.count("/"), len(f), f)

    return min(matches, key=distance)


class HasHeadings(Protocol):
    """A parsed document, or anything else that keeps its headings."""

    @property
    def headings(self) -> Sequence[Heading]: ...


def _by_slug(headings: Sequence[Heading], slug: str) -> Heading | None:
    return next((h for h in headings if h.slug == slug), None)


class HeadingIndex:
    """:func:`find_heading` over one document, a dict lookup per anchor: a check
    of every link of a file against its headings scanned them all for each
    link (20,000 links to 10,000 headings: 600 million comparisons)."""

    def __init__(self, doc: HasHeadings):
        self.doc = doc
        self.slugs: dict[str, Heading] = {}
        self.texts: dict[str, Heading] = {}
        for h in doc.headings:  # the first of each, as find_heading's scans find it
            self.slugs.setdefault(h.slug, h)
            self.texts.setdefault(h.text.strip().lower(), h)

    def find(self, anchor: str | None, by_text: bool = False) -> Heading | None:
        if not anchor:
            return None
        if by_text and "#" in anchor:  # a heading path: rare, scanned
            return find_heading(self.doc, anchor, by_text)
        if not by_text:
            found = self.slugs.get(anchor) or self.slugs.get(anchor.lower())
            if found is not None:
                return found
        return self.texts.get(anchor.strip().lower()) or self.slugs.get(github_slug(anchor))


def find_heading(doc: HasHeadings, anchor: str | None, by_text: bool = False) -> Heading | None:
    """The heading an anchor names: its slug first, then (wiki style, or a
    hand-written anchor) its text, case- and punctuation-insensitively; a wiki
    anchor ``Section#Subsection`` names the heading at the end of that path."""
    if not anchor:
        return None
    heads = doc.headings
    if by_text and "#" in anchor:  # [[note#Section#Subsection]]: Obsidian's heading path
        parts = [p.strip().lower() for p in anchor.split("#") if p.strip()]
        k = 0
        for h in heads:
            if parts and h.text.strip().lower() == parts[k]:
                if k == len(parts) - 1:
                    return h
                k += 1
        anchor = parts[-1] if parts else anchor
    if not by_text:
        found = _by_slug(heads, anchor) or _by_slug(heads, anchor.lower())
        if found is not None:
            return found
    want = anchor.strip().lower()
    for h in heads:
        if h.text.strip().lower() == want:
            return h
    return _by_slug(heads, github_slug(anchor))


_HTML_ANCHOR = re.compile(
    r"""<(?:[A-Za-z][^<>]*?\s+id|a\s[^<>]*?\bname)\s*=\s*["']([^"'<>]+)["']"""
)
_CODE_BLOCKS = ("fence", "code_block")


def html_anchors(doc: ParsedDocument) -> dict[str, int]:
    """``id`` (and ``<a name>``) attributes of the document's HTML, outside code:
    anchors a link's ``#fragment`` can name as well as a heading's (GitHub,
    mdBook, VS Code), each with its 0-based line."""
    text = doc.text
    if "<" not in text or ("id" not in text and "name" not in text):
        return {}
    lines = doc.lines()
    code = {
        n for b in doc.blocks if b.kind in _CODE_BLOCKS for n in range(b.start_line, b.end_line)
    }
    out: dict[str, int] = {}
    for n, line in enumerate(lines):
        if n in code or "<" not in line:
            continue
        for m in _HTML_ANCHOR.finditer(line):
            out.setdefault(m.group(1), n)
    return out


# -- writing links ------------------------------------------------------------------

_DEST_ESCAPE = frozenset(' ()<>%"\\`[]{}|^')  # %-encoded in a destination (and controls)


def _dest(text: str) -> str:
    return "".join(
        quote(ch, safe="") if ch in _DEST_ESCAPE or ord(ch) < 32 or ord(ch) == 127 else ch
        for ch in text
    )


def link_destination(source: str, target: str, anchor: str | None = None) -> str:
    """The destination of a markdown link written in ``source`` (workspace path)
    to ``target`` (and its heading ``anchor``, a slug): relative, %-encoded where
    a destination needs it (spaces, parentheses; non-ASCII stays readable), so
    :func:`resolve` leads back to ``target``."""
    frag = f"#{_dest(anchor)}" if anchor else ""
    if target == source:
        return frag or posixpath.basename(target)
    rel = posixpath.relpath(target, posixpath.dirname(source) or ".")
    return _dest(rel) + frag


def wiki_name(target: str, files: Iterable[str]) -> str:
    """How ``[[...]]`` names ``target``: its file name without extension when no
    other file has that name, else its workspace path without extension."""
    stem = posixpath.splitext(posixpath.basename(target))[0]
    clash = any(
        f != target and posixpath.splitext(posixpath.basename(f))[0].lower() == stem.lower()
        for f in files
    )
    return posixpath.splitext(target)[0] if clash else stem
