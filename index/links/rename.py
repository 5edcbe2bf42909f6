"""Renaming a heading or moving files without breaking a link: the text edits.

Pure: documents come from a :class:`Corpus` (the protocol layer reads open
buffers or files), and the answer is an :class:`Outcome` of edits in engine
coordinates (0-based lines, code-point columns of the normalised text).

How (as marksman does it): collect every place a link target is *written*
(:func:`link_sites`: an inline link's or image's destination, a reference
definition's destination, a wiki link's ``target#heading``), resolve each with
:func:`.links.resolve` as every other feature does, and rewrite only those whose
resolution the change would break:

* heading rename: the document is parsed again with the new heading text, and a
  link is rewritten when its anchor no longer names the same heading (the renamed
  one, or a later duplicate whose ``-1``/``-2`` number shifted);
* file or folder move: every link is resolved again in the new layout (moved
  files' own relative links from their new place) and rewritten when it would
  not reach the moved target.

Code (fenced, indented, spans), autolinks and URLs are never touched:
markdown-it's tokens decide what is a link.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.helpers import parseLinkDestination, parseLinkLabel
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from mdit_py_plugins.front_matter import front_matter_plugin

from ..text.aliases import AliasMap, AliasSite, alias_sites, key
from ..text.document import Heading, ParsedDocument
from ..text.markdown import shared_parser
from ..text.parse import parse_text
from ..text.slug import github_slug
from .links import (
    _WIKI,
    MARKDOWN_SUFFIXES,
    Link,
    Target,
    _dest,
    _inline_where_links_can_be,
    _inside,
    _LineMap,
    _split_href,
    find_heading,
    find_links,
    link_at,
    resolve,
    wiki_name,
)


class RenameError(ValueError):
    """A rename that cannot be done as asked (the message says why, in one line)."""


class Corpus(Protocol):
    """The markdown files of one workspace folder, read as the editor sees them."""

    @property
    def files(self) -> Sequence[str]: ...

    def doc(self, rel: str) -> ParsedDocument | None: ...  # None: unreadable, left alone

    def text(self, rel: str) -> str | None: ...  # the text, unparsed (None: unreadable)

    def links(self, rel: str, doc: ParsedDocument) -> Sequence[Link]: ...  # find_links(doc)

    def exists(self, rel: str) -> bool: ...

    @property
    def aliases(self) -> AliasMap: ...  # the folder's front-matter aliases


@dataclass(frozen=True)
class Edit:
    line: int
    col: int
    end_line: int
    end_col: int
    text: str


@dataclass
class Outcome:
    edits: dict[str, list[Edit]] = field(default_factory=dict)  # rel path -> edits
    moves: list[tuple[str, str]] = field(default_factory=list)  # files the editor renames
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (rel path, why)

    def add(self, rel: str, edit: Edit) -> None:
        self.edits.setdefault(rel, []).append(edit)


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


@shared_parser
def _site_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")
    md.core.ruler.at("inline", _inline_where_links_can_be)  # links and images hold a "["
    for name, tok in (("link", "link_open"), ("image", "image")):
        rule = next(r for r in md.inline.ruler.__rules__ if r.name == name)
        md.inline.ruler.at(name, _dest_recording(rule.fn, tok))
    ref = next(r for r in md.block.ruler.__rules__ if r.name == "reference")
    md.block.ruler.at("reference", _def_recording(ref.fn), {"alt": ref.alt})
    return md


def _md_link(href: str, line: int, col: int, end: int) -> Link:
    path, anchor = _split_href(href)
    return Link("markdown", href, path, anchor, "", line, col, line, end)


def link_sites(doc: ParsedDocument, links: Sequence[Link] | None = None) -> list[Site]:
    """Every place in ``doc`` where a link's target is written, in source order
    (``links``: ``find_links(doc)`` when the caller keeps it already)."""
    md = _site_parser()
    text, lines = doc.text, doc.lines()
    env: dict = {}
    tokens = md.parse(text, env)
    out: list[Site] = []
    for a, b in env.get("mdseek_defs", []):
        line = doc.offset_line(a)
        col, end = a - doc.line_offset(line), b - doc.line_offset(line)
        raw = text[a:b]
        href = md.normalizeLink(raw[1:-1] if raw.startswith("<") else _unescape(raw))
        out.append(Site("definition", _md_link(href, line, col, end), line, col, end, raw))
    for tok in tokens:
        if tok.type != "inline" or tok.map is None or not tok.children:
            continue
        lm = _LineMap(tok.content, tok.map[0], lines)
        for c in tok.children:
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
    for lk in find_links(doc) if links is None else links:
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


# -- which files can hold a link that changes ------------------------------------


class _Names:
    """The folder's markdown files by file name: a wiki link is resolved against
    the few files it can name (resolving it against every file, for every wiki
    link of every file, made a rename in a folder of 1,000 notes take 28 s)."""

    def __init__(self, files: Sequence[str]):
        self.by_stem: dict[str, list[str]] = {}
        for f in files:
            self.by_stem.setdefault(_stem(f), []).append(f)

    def named(self, link: Link) -> list[str]:
        want = link.path.strip().replace("\\", "/").lower()
        if want.endswith(MARKDOWN_SUFFIXES):
            want = posixpath.splitext(want)[0]
        return self.by_stem.get(posixpath.basename(want), [])


def _stem(path: str) -> str:
    return posixpath.splitext(posixpath.basename(path))[0].lower()


def _names(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word`` as a link writes a name: not inside a
    longer name (a one-letter name is in every file's text); an encoded ``/``
    (``%2f``, ``%5c``) may stand before it."""
    i = text.find(word)
    while i >= 0:
        j = i + len(word)
        before = i == 0 or not _name_char(text[i - 1]) or text[max(0, i - 3) : i] in _ENCODED_SEP
        if before and (j >= len(text) or not _name_char(text[j])):
            return True
        i = text.find(word, i + 1)
    return False


_ENCODED_SEP = ("%2f", "%5c")


def _name_char(c: str) -> bool:
    return c.isalnum() or c in "_-"


def _mentioning(
    corpus: Corpus, names: set[str], always: set[str], wiki_names: Iterable[str] = ()
) -> list[str]:
    """The files whose text names one of ``names`` (file names without suffix,
    folder names): only they can hold a link to a file so named (a markdown link
    writes the name, maybe %-encoded or without ``.md``; a wiki link writes it);
    or holds a wiki link to one of ``wiki_names`` (``[[name]]``, ``[[dir/name#h]]``).
    Reading text is cheap; parsing every file of a big folder was not."""
    words = set()
    for n in names:
        words |= {n.lower(), quote(n).lower(), quote(n, safe="").lower()}
    words.discard("")
    wiki = [re.escape(n.lower()) for n in sorted(wiki_names) if n]
    wiki_rx = (
        re.compile(
            r"\[\[\s*(?:[^\]|#\n]*/)?(?:" + "|".join(wiki) + r")(?:\.md|\.markdown)?\s*[\]|#^]"
        )
        if wiki
        else None
    )
    out = []
    for f in corpus.files:
        text = corpus.text(f) if f not in always else None
        if f in always or text is None:
            out.append(f)
            continue
        low = text.replace("\\", "").lower()
        if any(_names(low, w) for w in words) or (wiki_rx is not None and wiki_rx.search(low)):
            out.append(f)
    for f in always:
        if f not in out:
            out.append(f)
    return out


# -- headings ----------------------------------------------------------------------

_ATX_OPEN = re.compile(r" {0,3}#{1,6}(?:[ \t]+|$)")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")


def heading_span(doc: ParsedDocument, h: Heading) -> tuple[int, int, int, int]:
    """(line, col, end_line, end_col) of a heading's text, markers left out."""
    lines = doc.lines()
    text = lines[h.line]
    m = _ATX_OPEN.match(text)
    if m is not None and h.end_line == h.line + 1:
        rest = _ATX_CLOSE.sub("", text[m.end() :].rstrip()).rstrip()
        return h.line, m.end(), h.line, m.end() + len(rest)
    last = max(h.line, h.end_line - 2)  # setext: the text lines above the underline
    first_col = len(text) - len(text.lstrip())
    return h.line, first_col, last, len(lines[last].rstrip())


def heading_source(doc: ParsedDocument, h: Heading) -> str:
    """A heading's text as written (markup kept), on one line."""
    line, col, end_line, end_col = heading_span(doc, h)
    lines = doc.lines()
    if line == end_line:
        return lines[line][col:end_col]
    parts = [lines[line][col:], *lines[line + 1 : end_line], lines[end_line][:end_col]]
    return " ".join(p.strip() for p in parts)


def _replace(text: str, doc: ParsedDocument, span: tuple[int, int, int, int], new: str) -> str:
    a = doc.line_offset(span[0]) + span[1]
    b = doc.line_offset(span[2]) + span[3]
    return text[:a] + new + text[b:]


def _wiki_safe(text: str) -> bool:
    return not any(ch in text for ch in "[]|#\n")


def rename_heading(corpus: Corpus, rel: str, doc: ParsedDocument, h: Heading, name: str) -> Outcome:
    """Rename heading ``h`` of ``doc`` (the file ``rel``) to ``name`` (markdown
    text) and rewrite every link of the folder it would break."""
    name = name.strip()
    if not name:
        raise RenameError("a heading cannot be renamed to an empty name")
    _must_be_utf8(rel, doc, "its heading")
    if "\n" in name or "\r" in name:
        raise RenameError("a heading name must be one line")
    idx = doc.headings.index(h)
    span = heading_span(doc, h)
    new_doc = parse_text(_replace(doc.text, doc, span, name), rel)
    same_shape = len(new_doc.headings) == len(doc.headings) and all(
        (a.level, a.line) == (b.level, b.line)
        for a, b in zip(doc.headings, new_doc.headings, strict=False)
    )
    if not same_shape:
        raise RenameError(f"'{name}' would not stay one level-{h.level} heading")
    nh = new_doc.headings[idx]
    base = github_slug(nh.rendered)
    if not base:
        raise RenameError(f"'{name}' has no anchor (GitHub drops every character of it)")
    for j, other in enumerate(doc.headings):
        if j != idx and base in (github_slug(other.rendered), other.slug, new_doc.headings[j].slug):
            raise RenameError(
                f"the heading '{other.text}' (line {other.line + 1}) already has the anchor #{base}"
            )
    out = Outcome()
    add_file_edits(out, rel, doc, [Edit(*span, name)])
    names = _Names(corpus.files)
    for src in _mentioning(corpus, {_stem(rel), *corpus.aliases.of(rel)}, {rel}):
        sdoc = doc if src == rel else corpus.doc(src)
        if sdoc is None:
            continue
        sites = link_sites(sdoc, corpus.links(src, sdoc))
        add_file_edits(
            out,
            src,
            sdoc,
            (
                _heading_link_edit(corpus, names, src, site, rel, doc, new_doc)
                for site in sites
                if not (src == rel and span[0] <= site.line <= span[2])  # the heading itself
            ),
        )
    return out


def _must_be_utf8(rel: str, doc: ParsedDocument, what: str) -> None:
    """The file a rename starts in must take its edit: one that is not valid
    UTF-8 would be saved with every bad byte turned into U+FFFD, and skipping
    only its edit would point the folder's links at a name it does not have."""
    if doc.decode_errors:
        raise RenameError(
            f"{rel} is not valid UTF-8: mdseek does not edit it, so {what} is left as it is"
        )


def add_file_edits(
    out: Outcome, src: str, doc: ParsedDocument, edits: Iterable[Edit | None]
) -> None:
    """Add one file's edits (None: a place left as it is); a file that is not
    valid UTF-8 is left untouched and named in ``out.skipped`` instead."""
    for edit in edits:
        if edit is None:
            continue
        if doc.decode_errors:
            out.skipped.append((src, "it is not valid UTF-8"))
            out.edits.pop(src, None)
            return
        out.add(src, edit)


def _heading_link_edit(
    corpus: Corpus,
    names: _Names,
    src: str,
    site: Site,
    rel: str,
    doc: ParsedDocument,
    new_doc: ParsedDocument,
) -> Edit | None:
    wiki = site.kind == "wiki"
    t = (
        resolve(site.link, src, corpus.exists, names.named(site.link), corpus.aliases)
        if wiki
        else resolve(site.link, src, corpus.exists)
    )
    if t.path != rel or not t.anchor:
        return None
    old = find_heading(doc, t.anchor, t.by_text)
    if old is None:
        return None
    j = doc.headings.index(old)
    now = find_heading(new_doc, t.anchor, t.by_text)
    if now is not None and new_doc.headings.index(now) == j:
        return None  # still names the same heading
    nh = new_doc.headings[j]
    if wiki:
        by_text = find_heading(new_doc, nh.text, True)
        anchor = nh.text if _wiki_safe(nh.text) and by_text is nh else nh.slug
    else:
        anchor = _dest(nh.slug)
    _, frag = site.parts()
    if frag is None:
        return None
    return Edit(site.line, frag[0], site.line, frag[0] + len(frag[1]), anchor)


# -- aliases -----------------------------------------------------------------------

_YAML_PLAIN_UNSAFE = re.compile(r"""[:#,\[\]{}&*!|>'"%@`]|^[-?\s]|\s$""")


def rename_alias(corpus: Corpus, rel: str, doc: ParsedDocument, old: str, name: str) -> Outcome:
    """Rename the front-matter alias ``old`` of the note ``rel`` to ``name``: the
    alias where the front matter declares it, and every wiki link that reaches
    the note by it (``[[Old]]``, ``[[Old#Heading]]``, ``[[Old|text]]``)."""
    new = " ".join(name.split())
    if not new:
        raise RenameError("an alias cannot be renamed to an empty name")
    _must_be_utf8(rel, doc, "its alias")
    if not _wiki_safe(new) or "^" in new:
        raise RenameError(f"'{new}' cannot be written in a wiki link (no [ ] | # ^)")
    aliases = corpus.aliases
    others = [f for f in aliases.claims(new) if f != rel]
    if others:
        raise RenameError(f"'{new}' is already an alias of {', '.join(others)}")
    shadow = aliases.shadowed(new)
    if shadow is not None:
        raise RenameError(f"[[{new}]] would lead to {shadow}: a file name wins over an alias")
    out = Outcome()
    add_file_edits(
        out,
        rel,
        doc,
        (_alias_edit(doc, s, new) for s in alias_sites(doc) if key(s.name) == key(old)),
    )
    if rel not in out.edits:
        raise RenameError(f"{rel} does not declare the alias '{old}'")
    names = _Names(corpus.files)
    for src in _mentioning(corpus, {old}, set()):
        sdoc = doc if src == rel else corpus.doc(src)
        if sdoc is None:
            continue
        add_file_edits(
            out,
            src,
            sdoc,
            (
                _alias_link_edit(corpus, names, src, site, rel, old, new)
                for site in link_sites(sdoc, corpus.links(src, sdoc))
                if site.kind == "wiki"
            ),
        )
    return out


def _alias_edit(doc: ParsedDocument, site: AliasSite, new: str) -> Edit:
    """The declaration of an alias rewritten, quoted as YAML needs."""
    line = doc.lines()[site.line]
    quote = line[site.start - 1] if site.start > 0 and line[site.start - 1] in "'\"" else ""
    if quote == "'":
        text = new.replace("'", "''")
    elif quote or _YAML_PLAIN_UNSAFE.search(new):
        text = new.replace("\\", "\\\\").replace('"', '\\"')
        text = text if quote else f'"{text}"'
    else:
        text = new
    return Edit(site.line, site.start, site.line, site.end, text)


def _alias_link_edit(
    corpus: Corpus, names: _Names, src: str, site: Site, rel: str, old: str, new: str
) -> Edit | None:
    link = site.link
    t = resolve(link, src, corpus.exists, names.named(link), corpus.aliases)
    if not t.alias or t.path != rel or key(link.path) != key(old):
        return None
    (col, path), _ = site.parts()
    lead = len(path) - len(path.lstrip())
    return Edit(site.line, col + lead, site.line, col + len(path.rstrip()), new)


# -- moving files ------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    old: str  # workspace-relative
    new: str
    folder: bool = False

    def map(self, rel: str) -> str | None:
        if rel == self.old:
            return self.new
        if self.folder and rel.startswith(self.old + "/"):
            return self.new + rel[len(self.old) :]
        return None


class _Layout:
    """The folder as it will be after the moves."""

    def __init__(self, corpus: Corpus, moves: Sequence[Move]):
        self.corpus, self.moves = corpus, moves
        self.files = [self.after(f) for f in corpus.files]
        self._files = set(self.files)
        self.names = _Names(self.files)
        self.aliases = corpus.aliases.moved(self.after, self.files)

    def after(self, rel: str) -> str:
        for m in self.moves:
            new = m.map(rel)
            if new is not None:
                return new
        return rel

    def before(self, rel: str) -> str | None:
        """Where a path of the new layout is now (None: a moved-away place)."""
        for m in self.moves:
            back = Move(m.new, m.old, m.folder).map(rel)
            if back is not None:
                return back
        if any(m.map(rel) is not None for m in self.moves):
            return None
        return rel

    def exists(self, rel: str) -> bool:
        if rel in self._files:
            return True
        old = self.before(rel)
        return old is not None and self.corpus.exists(old)


def move_files(corpus: Corpus, moves: Sequence[Move]) -> Outcome:
    """Edits (addressed to the files where they are *now*) that keep every link
    reaching its target once ``moves`` are done: links to moved files, and the
    moved files' own relative links."""
    layout = _Layout(corpus, moves)
    names = _Names(corpus.files)
    moved = {f for f in corpus.files if layout.after(f) != f}
    named = {_stem(f) for f in moved} | {posixpath.basename(m.old) for m in moves if m.folder}
    # [[new name]] may have meant another note (or none): only a wiki link can change meaning
    new_names = {_stem(layout.after(f)) for f in moved}
    out = Outcome()
    for src in _mentioning(corpus, named, moved, new_names):
        sdoc = corpus.doc(src)
        if sdoc is None:
            continue
        new_src = layout.after(src)
        sites = link_sites(sdoc, corpus.links(src, sdoc))
        add_file_edits(
            out, src, sdoc, (_move_edit(corpus, names, layout, src, new_src, s) for s in sites)
        )
    return out


def _move_edit(
    corpus: Corpus, names: _Names, layout: _Layout, src: str, new_src: str, site: Site
) -> Edit | None:
    link = site.link
    wiki = site.kind == "wiki"
    if not link.path:
        return None  # #anchor in the same document
    if wiki:
        old = resolve(link, src, corpus.exists, names.named(link), corpus.aliases)
    else:
        old = resolve(link, src, corpus.exists)
    if old.path is None or (wiki and not old.exists):
        return None
    want = layout.after(old.path)
    new = _layout_resolve(layout, link, new_src) if wiki else resolve(link, new_src, layout.exists)
    if new.path == want:
        return None
    (col, path), _ = site.parts()
    if wiki:
        text = wiki_name(want, layout.names.by_stem.get(_stem(want), []))
        if _layout_resolve(layout, _wiki(text), new_src).path != want:
            text = posixpath.splitext(want)[0]
    else:
        text = _path_text(path, new_src, want, site.angle)
    return Edit(site.line, col, site.line, col + len(path), text)


def _layout_resolve(layout: _Layout, link: Link, src: str) -> Target:
    """A wiki link resolved in the folder as it will be after the moves."""
    return resolve(link, src, layout.exists, layout.names.named(link), layout.aliases)


def _wiki(name: str) -> Link:
    return Link("wiki", name, name, None, "", 0, 0, 0, 0)


def _path_text(written: str, src: str, want: str, angle: bool) -> str:
    """A link's new path part, written as the old one was (root-relative or
    relative, ``./``, without the ``.md`` suffix, inside ``<>``)."""
    if written.startswith("/"):
        p = "/" + want
    else:
        p = posixpath.relpath(want, posixpath.dirname(src) or ".")
        if written.startswith("./") and not p.startswith("../"):
            p = "./" + p
    plain = written.split("?", 1)[0]
    if not plain.lower().endswith(MARKDOWN_SUFFIXES) and p.lower().endswith(MARKDOWN_SUFFIXES):
        p = posixpath.splitext(p)[0]
    if angle:
        return p.replace("<", "%3C").replace(">", "%3E")
    return _dest(p)


def new_file_path(source: str, target: str, written: str, kind: str, name: str) -> str:
    """The workspace path a file gets when a link to it (written in ``source``,
    path part ``written``) is renamed to ``name`` (a path as the link writes it;
    for a wiki link a name, or a path from the folder's root when it has a ``/``)."""
    name = name.strip()
    if not name:
        raise RenameError("a file cannot be renamed to an empty name")
    if kind == "wiki":
        joined = name if "/" in name else posixpath.join(posixpath.dirname(target), name)
    else:
        plain = unquote(name) if not written.startswith("<") else name
        joined = (
            plain.lstrip("/")
            if plain.startswith("/")
            else posixpath.join(posixpath.dirname(source), plain)
        )
    rel = _inside(joined)
    if not rel:
        raise RenameError(f"'{name}' is outside the workspace folder")
    if not rel.lower().endswith(MARKDOWN_SUFFIXES):
        rel += posixpath.splitext(target)[1] or ".md"
    return rel


# -- what the cursor is on ---------------------------------------------------------


@dataclass(frozen=True)
class RenameTarget:
    """What a rename at a position renames, and the range and text to offer."""

    kind: str  # "heading", "file" or "alias"
    path: str  # the file holding the heading / the file / the note the alias names
    heading: Heading | None
    span: tuple[int, int, int, int]  # what the editor shows as being renamed
    placeholder: str  # for an alias: the alias
    site: Site | None = None  # the link the rename started on (file renames)
    source: str = ""  # the file holding that link


def rename_target(
    corpus: Corpus, rel: str, doc: ParsedDocument, line: int, col: int
) -> RenameTarget | None:
    """A heading under the cursor, or the heading or file a link under it points to."""
    for h in doc.headings:
        if h.line <= line < h.end_line:
            span = heading_span(doc, h)
            return RenameTarget("heading", rel, h, span, heading_source(doc, h))
    if line < doc.body_start_line:
        for a in alias_sites(doc):
            if a.line == line and a.start <= col <= a.end:
                return RenameTarget("alias", rel, None, (line, a.start, line, a.end), a.name)
        return None
    site = next(
        (
            s
            for s in link_sites(doc, corpus.links(rel, doc))
            if s.kind != "image" and s.line == line and s.col <= col <= s.end
        ),
        None,
    )
    link = site.link if site else link_at(find_links(doc), line, col)
    if link is None:
        return None
    wiki = link.kind == "wiki"
    if wiki:
        t = resolve(link, rel, corpus.exists, _Names(corpus.files).named(link), corpus.aliases)
    else:
        t = resolve(link, rel, corpus.exists)
    if t.path is None or not t.exists or t.external:
        return None
    whole = (link.line, link.start, link.end_line, link.end)
    path_part, frag = site.parts() if site else ((0, ""), None)
    on_path = site is not None and bool(link.path) and site.covers(line, col, path_part)
    if t.anchor and not on_path:
        tdoc = doc if t.path == rel else corpus.doc(t.path)
        th = find_heading(tdoc, t.anchor, t.by_text) if tdoc else None
        if th is None or tdoc is None:
            return None
        span = (
            (line, frag[0], line, frag[0] + len(frag[1]))
            if frag and site and site.covers(line, col, frag)
            else whole
        )
        return RenameTarget("heading", t.path, th, span, heading_source(tdoc, th))
    if not link.path or site is None:
        return None  # a file is renamed from a link that writes its path
    span = (site.line, path_part[0], site.line, path_part[0] + len(path_part[1]))
    if t.alias:  # [[Alias]]: the alias is renamed, not the file
        return RenameTarget("alias", t.path, None, span, path_part[1].strip(), site, rel)
    return RenameTarget("file", t.path, None, span, path_part[1], site, rel)
