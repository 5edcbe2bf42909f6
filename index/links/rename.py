"""Renaming a heading or a front-matter alias without breaking a link: the
text edits; and what a rename at a position renames (:func:`rename_target`: a
heading, an alias or a file).

How (as marksman does it): collect every place a link target is *written*
(:func:`.sites.link_sites`), resolve each with :func:`.links.resolve` as every
other feature does, and rewrite only those whose resolution the change would
break. For a heading rename the document is parsed again with the new heading
text, and a link is rewritten when its anchor no longer names the same heading
(the renamed one, or a later duplicate whose ``-1``/``-2`` number shifted).

Moving files is :mod:`.move`; what both share (corpus, edits, which files to
read) is :mod:`.edits`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text.aliases import AliasSite, alias_sites, doc_title, key, title_slug
from ..text.document import Heading, ParsedDocument
from ..text.parse import parse_text
from ..text.slug import github_slug
from .edits import (
    Corpus,
    Edit,
    Outcome,
    RenameError,
    _mentioning,
    _must_be_utf8,
    _Names,
    _stem,
    add_file_edits,
    sites_to_rewrite,
)
from .links import HeadingIndex, _dest, find_heading, find_links, link_at, resolve
from .sites import Site, link_sites

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
    own = sites_to_rewrite(corpus, rel, doc)  # before the costlier parse: a refusal is quick
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
    heads = _Headings(doc, new_doc)
    old_title, new_title = doc_title(doc), doc_title(new_doc)
    heads.titles = (old_title, new_title) if old_title and new_title != old_title else None
    for src in _mentioning(corpus, {_stem(rel), *corpus.aliases.names_of(rel)}, {rel}):
        sdoc = doc if src == rel else corpus.doc(src)
        if sdoc is None:
            continue
        sites = own if src == rel else sites_to_rewrite(corpus, src, sdoc)
        add_file_edits(
            out,
            src,
            sdoc,
            (
                edit
                for site in sites
                if not (src == rel and span[0] <= site.line <= span[2])  # the heading itself
                for edit in _heading_link_edits(corpus, names, src, site, rel, heads)
            ),
        )
    return out


class _Headings:
    """A document's headings before and after a rename, each anchor looked up
    in a dict and each heading's place known (scanning them for each link was
    10,000 headings times 10,000 links)."""

    def __init__(self, doc: ParsedDocument, new_doc: ParsedDocument):
        self.old, self.new = HeadingIndex(doc), HeadingIndex(new_doc)
        self.new_headings = new_doc.headings
        self.old_at = {id(h): j for j, h in enumerate(doc.headings)}
        self.new_at = {id(h): j for j, h in enumerate(new_doc.headings)}
        self.titles: tuple[str, str | None] | None = None  # the note's title (old, new) if renamed


def _title_edit(site: Site, titles: tuple[str, str | None]) -> Edit | None:
    """A wiki link reaching its note by the title being renamed: the new title
    (as written, or its slug where the link wrote the slug or the title cannot
    be written in a wiki link)."""
    old, new = titles
    if not new:
        return None  # the note keeps no title: the link is left (and reported)
    col, path = site.parts()[0]
    written = path.strip()
    a = col + len(path) - len(path.lstrip())
    keep = key(written) == key(old) and _wiki_safe(new) and "^" not in new
    return Edit(site.line, a, site.line, a + len(written), new if keep else title_slug(new))


def _heading_link_edits(
    corpus: Corpus,
    names: _Names,
    src: str,
    site: Site,
    rel: str,
    heads: _Headings,
) -> list[Edit | None]:
    wiki = site.kind == "wiki"
    t = (
        resolve(site.link, src, corpus.exists, names.named(site.link), corpus.aliases)
        if wiki
        else resolve(site.link, src, corpus.exists)
    )
    out = []
    if t.path == rel and t.by_title and heads.titles is not None:
        out.append(_title_edit(site, heads.titles))
    if t.path == rel and t.anchor:
        out.append(_anchor_edit(site, t.anchor, t.by_text, heads, wiki))
    return out


def _anchor_edit(
    site: Site, anchor: str, by_text: bool, heads: _Headings, wiki: bool
) -> Edit | None:
    old = heads.old.find(anchor, by_text)
    if old is None:
        return None
    j = heads.old_at[id(old)]
    now = heads.new.find(anchor, by_text)
    if now is not None and heads.new_at[id(now)] == j:
        return None  # still names the same heading
    nh = heads.new_headings[j]
    if wiki:
        found = heads.new.find(nh.text, True)
        anchor = nh.text if _wiki_safe(nh.text) and found is nh else nh.slug
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
                for site in sites_to_rewrite(corpus, src, sdoc)
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
            if s.line == line and s.col <= col <= s.end  # an image's source too
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
