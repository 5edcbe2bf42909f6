"""Extract a section to a new note, and inline a linked note back: the text
edits and the files made and removed, with every link of the folder kept on
its target.

**Extract** (:func:`extract_section`): the section of a heading, with its
subsections, moves to a new file beside its own, named from the heading (its
anchor, ``replica-promotion.md``; in a wiki vault the heading's text,
``Replica promotion.md``). Its headings move up so the first is a level-1
title. In its place stays the heading, now a link to the new note (``##
[Replica promotion](replica-promotion.md)``, ``## [[Replica promotion]]``):
the outline keeps its shape. Links to its headings, anywhere in the folder,
follow them to the new note; its own links to the rest of the old file get
the file's name. The section's trailing blank lines stay where they were.

**Inline** (:func:`inline_note`): the reverse, offered on a link that names a
note as a whole (no anchor) and stands alone, as a heading's whole text or on
a line of its own, when no other link in the folder names that note as a
whole (links to its headings are fine: they follow). The note's text replaces
that line, its headings moved down to sit under the link's heading (or its
section); the note is removed. A note with front matter is not inlined.

Extract, then inline of the link it left, gives back every file's bytes (the
places links are written keep their form: relative or not, with or without
``.md``, the anchor as written while it still names its heading).

How: the folder after the change is laid out first (:class:`_Layout`: where
every line of the two files goes, the moved headings' levels), both new files
parsed; then every place a link is written (:func:`.sites.link_sites`) in the
files that can name the two files is resolved as before and as after, and
rewritten where its target moved or it moved away from its target. Pure: the
files come from a :class:`.edits.Corpus`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

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
from .links import (
    Link,
    Target,
    _dest,
    _inside,
    find_heading,
    link_at,
    link_destination,
    resolve,
    wiki_name,
)
from .move import _path_text
from .obsidian import block_ids, is_block_ref
from .rename import heading_source
from .sites import Site

_ATX = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)")
_NOT_IN_NAME = re.compile(r'[\\/:*?"<>|#^\[\]]')


@dataclass(frozen=True)
class _Layout:
    """Lines ``l0``..``l1`` of ``a`` move into ``b`` in place of its lines
    ``s0``..``s1``, their headings ``shift`` levels deeper; ``stub`` stands where
    they were in ``a`` (``a_gone``: ``a`` is removed, the block was all of it)."""

    a: str
    b: str
    l0: int
    l1: int
    s0: int
    s1: int
    shift: int
    stub: tuple[str, ...]
    a_gone: bool

    def place(self, path: str, line: int) -> tuple[str, int] | None:
        """Where a line is after the change (None: a line of ``b`` replaced)."""
        if path == self.a:
            if self.l0 <= line < self.l1:
                return self.b, self.s0 + line - self.l0
            return self.a, line if line < self.l0 else line - (self.l1 - self.l0) + len(self.stub)
        if path == self.b:
            if line < self.s0:
                return self.b, line
            if line < self.s1:
                return None
            return self.b, line - (self.s1 - self.s0) + (self.l1 - self.l0)
        return path, line


def _shifted(doc: ParsedDocument, lines: list[str], lay: _Layout) -> list[str]:
    """The block's lines with its headings ``lay.shift`` levels deeper."""
    out = lines[lay.l0 : lay.l1]
    if not lay.shift:
        return out
    for h in doc.headings:
        if not lay.l0 <= h.line < lay.l1:
            continue
        level = h.level + lay.shift
        i = h.line - lay.l0
        m = _ATX.match(out[i]) if h.end_line == h.line + 1 else None
        if m is not None:
            if not 1 <= level <= 6:
                raise RenameError(f"the heading '{h.text}' would need level {level} (1 to 6)")
            out[i] = out[i][: m.start(1)] + "#" * level + out[i][m.end(1) :]
        elif h.end_line == h.line + 2 and i + 1 < len(out):  # setext: its underline
            if level > 2:
                raise RenameError(
                    f"the heading '{h.text}' is underlined: it cannot become level {level}"
                )
            out[i + 1] = out[i + 1].replace("=-"[h.level - 1], "=-"[level - 1])
    return out


def _lay_out(
    lay: _Layout, a_doc: ParsedDocument, a_lines: list[str], b_lines: list[str]
) -> tuple[list[str] | None, list[str]]:
    """The two files' lines after the change (``a``'s None when it is removed)."""
    block = _shifted(a_doc, a_lines, lay)
    new_b = b_lines[: lay.s0] + block + b_lines[lay.s1 :]
    new_a = None if lay.a_gone else a_lines[: lay.l0] + list(lay.stub) + a_lines[lay.l1 :]
    return new_a, new_b


class _Move:
    """One extract or inline: the layout, the documents before and after, and
    the edit of every link site it moves or whose target it moves."""

    def __init__(
        self, corpus: Corpus, lay: _Layout, a_doc: ParsedDocument, b_doc: ParsedDocument | None
    ):
        self.corpus, self.lay = corpus, lay
        self.old = {lay.a: a_doc}
        if b_doc is not None:
            self.old[lay.b] = b_doc
        self.b_lines = b_doc.lines() if b_doc is not None else [""]
        new_a, new_b = _lay_out(lay, a_doc, a_doc.lines(), self.b_lines)
        self.new: dict[str, ParsedDocument] = {lay.b: parse_text("\n".join(new_b), lay.b)}
        if new_a is not None:
            self.new[lay.a] = parse_text("\n".join(new_a), lay.a)
        files = [f for f in corpus.files if not (lay.a_gone and f == lay.a)]
        self.files_after = files if lay.b in files else [*files, lay.b]
        self.names = _Names(corpus.files)

    def _doc(self, rel: str) -> ParsedDocument | None:
        return self.old[rel] if rel in self.old else self.corpus.doc(rel)

    def _resolve(self, link: Link, src: str) -> Target:
        c = self.corpus
        if link.kind == "wiki":
            return resolve(link, src, c.exists, self.names.named(link), c.aliases)
        return resolve(link, src, c.exists)

    def _heading_after(self, path: str, h: Heading) -> tuple[str, Heading | None]:
        at = self.lay.place(path, h.line)
        if at is None or at[0] not in self.new:
            return path, None
        return at[0], next((x for x in self.new[at[0]].headings if x.line == at[1]), None)

    def target_after(self, t: Target) -> tuple[str, Heading | None, str | None] | None:
        """(file, heading, anchor as kept) a resolved link reaches after the change;
        None: unchanged, or not a place this change moves."""
        if t.path is None or t.path not in (self.lay.a, self.lay.b) or not t.exists:
            return None
        doc = self.old.get(t.path)
        if doc is None:
            return None
        if not t.anchor:
            return t.path, None, None
        if is_block_ref(t.anchor):
            line = block_ids(doc).get(t.anchor[1:].lower())
            at = self.lay.place(t.path, line) if line is not None else None
            return (at[0], None, t.anchor) if at is not None else None
        h = find_heading(doc, t.anchor, t.by_text)
        if h is None:
            return None
        path, nh = self._heading_after(t.path, h)
        return (path, nh, t.anchor) if nh is not None else None

    def site_edits(self, src: str, site: Site) -> list[Edit]:
        """The edits of one link site (in ``src``'s present coordinates)."""
        at = self.lay.place(src, site.line)
        if at is None:
            return []
        here = at[0]
        t = self._resolve(site.link, src)
        after = self.target_after(t)
        if t.path is None or not t.exists:
            return []
        there, heading, anchor = after if after is not None else (t.path, None, t.anchor)
        if there == t.path and here == src:
            path_text = None  # the path part stays
        else:
            path_text = self._path(site, src, here, there, bool(anchor))
        (pcol, written), frag = site.parts()
        out = []
        if path_text is not None and path_text != written:
            out.append(Edit(site.line, pcol, site.line, pcol + len(written), path_text))
        if heading is not None and frag is not None:
            new = self._anchor(site, there, heading)
            if new is not None and new != frag[1]:
                out.append(Edit(site.line, frag[0], site.line, frag[0] + len(frag[1]), new))
        return out

    def _path(self, site: Site, src: str, here: str, there: str, anchored: bool) -> str | None:
        (_, written), _ = site.parts()
        if there == here:
            return "" if anchored else None
        t = self._resolve(site.link, src).path
        if (
            written
            and there == t
            and (site.kind == "wiki" or posixpath.dirname(here) == posixpath.dirname(src))
        ):
            return None  # the same target, written from the same folder
        if site.kind == "wiki":
            return wiki_name(there, self.files_after)
        return _path_text(written or "x.md", here, there, site.angle)

    def _anchor(self, site: Site, there: str, h: Heading) -> str | None:
        doc = self.new.get(there)
        if doc is None:
            return None
        link = site.link
        wiki = site.kind == "wiki"
        if link.anchor and find_heading(doc, link.anchor, wiki) is h:
            return None  # still names it as written
        if (
            wiki
            and not any(ch in h.text for ch in "[]|#\n")
            and find_heading(doc, h.text, True) is h
        ):
            return h.text
        return _dest(h.slug)

    def outcome(self) -> Outcome:
        lay, corpus = self.lay, self.corpus
        out = Outcome()
        stems = {
            _stem(lay.a),
            _stem(lay.b),
            *corpus.aliases.names_of(lay.a),
            *corpus.aliases.names_of(lay.b),
        }
        always = {lay.a} | ({lay.b} if lay.b in self.old else set())
        own: dict[str, list[Edit]] = {}
        for src in _mentioning(corpus, stems, always):
            doc = self._doc(src)
            if doc is None:
                continue
            edits = [
                e for site in sites_to_rewrite(corpus, src, doc) for e in self.site_edits(src, site)
            ]
            if src in self.old:
                own[src] = edits
            else:
                add_file_edits(out, src, doc, edits)
        a_doc = self.old[lay.a]
        a_lines = _applied(a_doc.lines(), own.get(lay.a, []))
        b_lines = _applied(self.b_lines, own.get(lay.b, []))
        new_a, new_b = _lay_out(lay, a_doc, a_lines, b_lines)
        if lay.b in self.old:
            edit = _diff_edit(self.b_lines, new_b)
            add_file_edits(out, lay.b, self.old[lay.b], [edit])
        else:
            out.creates.append((lay.b, "\n".join(new_b)))
        if new_a is None:
            out.deletes.append(lay.a)
        else:
            add_file_edits(out, lay.a, a_doc, [_diff_edit(a_doc.lines(), new_a)])
        return out


def _applied(lines: list[str], edits: Sequence[Edit]) -> list[str]:
    """One-line edits applied to a copy of ``lines``."""
    out = list(lines)
    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        s = out[e.line]
        out[e.line] = s[: e.col] + e.text + s[e.end_col :]
    return out


def _diff_edit(old: list[str], new: list[str]) -> Edit | None:
    """One edit turning the lines ``old`` into ``new`` (the lines both share at
    the start and the end left alone)."""
    if old == new:
        return None
    p = 0
    while p < len(old) and p < len(new) and old[p] == new[p]:
        p += 1
    p = min(p, len(old) - 1, len(new) - 1)
    s = 0
    while s < len(old) - p and s < len(new) - p and old[-1 - s] == new[-1 - s]:
        s += 1
    if s:
        q, r = len(old) - s, len(new) - s
        return Edit(p, 0, q, 0, "".join(x + "\n" for x in new[p:r]))
    return Edit(p, 0, len(old) - 1, len(old[-1]), "\n".join(new[p:]))


# -- extract ----------------------------------------------------------------------------


def note_name(h: Heading, wiki: bool) -> str:
    """The new note's file name (no suffix) for a heading: its anchor, or in a
    wiki vault its text without the characters a wiki link or a file name refuses."""
    if wiki:
        name = " ".join(_NOT_IN_NAME.sub(" ", h.text).split()).strip(". ")
    else:
        name = github_slug(h.rendered or h.text)
    if not name:
        raise RenameError(f"the heading '{h.text}' gives no file name")
    return name


def extract_section(
    corpus: Corpus, rel: str, doc: ParsedDocument, h: Heading, wiki: bool
) -> tuple[str, Outcome]:
    """The new note's path and the outcome of moving heading ``h``'s section (with
    its subsections) of ``rel`` to it; RenameError when that file exists."""
    _must_be_utf8(rel, doc, "the section")
    lines = doc.lines()
    end = next(
        (x.line for x in doc.headings if x.line > h.line and x.level <= h.level), doc.line_count
    )
    end = min(end, len(lines))
    while end > h.end_line and not lines[end - 1].strip():
        end -= 1  # its trailing blank lines stay
    dst = posixpath.join(posixpath.dirname(rel), note_name(h, wiki) + ".md")
    if _inside(dst) != dst:
        raise RenameError(f"{dst} is outside the workspace folder")
    if corpus.exists(dst) or any(f.lower() == dst.lower() for f in corpus.files):
        raise RenameError(f"{dst} already exists: mdseek does not overwrite it")
    if wiki:
        link = f"[[{wiki_name(dst, [*corpus.files, dst])}]]"
    else:
        text = heading_source(doc, h)
        if "[" in text or "]" in text:
            text = re.sub(r"([\\\[\]])", r"\\\1", h.text)
        link = f"[{text}]({link_destination(rel, dst)})"
    stub = ("#" * h.level + " " + link,)
    lay = _Layout(rel, dst, h.line, end, 0, 0, 1 - h.level, stub, False)
    return dst, _Move(corpus, lay, doc, None).outcome()


# -- inline -----------------------------------------------------------------------------


@dataclass(frozen=True)
class InlineTarget:
    """A link that can take its note's text: the note, the line it stands on and
    the level the note's first heading gets."""

    note: str
    line: int
    level: int


def inline_target(
    corpus: Corpus, rel: str, doc: ParsedDocument, line: int, col: int
) -> InlineTarget | None:
    """What inline at this place would inline, or None: the cursor is not on a
    link that stands alone and names a note as a whole, or another link of the
    folder names that note too, or the note has front matter."""
    links = corpus.links(rel, doc)
    link = link_at(links, line, col)
    if link is None or link.anchor or link.line != link.end_line:
        return None
    names = _Names(corpus.files)

    def res(lk: Link, src: str) -> Target:
        if lk.kind == "wiki":
            return resolve(lk, src, corpus.exists, names.named(lk), corpus.aliases)
        return resolve(lk, src, corpus.exists)

    t = res(link, rel)
    if t.path is None or not t.exists or t.path == rel or not corpus.exists(t.path):
        return None
    text = doc.lines()[line]
    h = next((x for x in doc.headings if x.line == line and x.end_line == line + 1), None)
    m = _ATX.match(text) if h is not None else None
    body = text[m.end() :] if m is not None else text
    if body.strip().rstrip("#").strip() != text[link.start : link.end].strip():
        return None  # the link does not stand alone
    if h is not None:
        level = h.level
    else:
        sec = next((s for s in doc.sections if s.start_line <= line < s.end_line), None)
        level = (sec.heading.level + 1) if sec is not None and sec.heading else 1
    note = corpus.doc(t.path)
    if note is None or note.front_matter or note.body_start_line:
        return None
    whole = 0
    for src in _mentioning(corpus, {_stem(t.path), *corpus.aliases.names_of(t.path)}, {rel}):
        sdoc = doc if src == rel else corpus.doc(src)
        if sdoc is None:
            continue
        for lk in corpus.links(src, sdoc):
            if not lk.anchor and res(lk, src).path == t.path:
                whole += 1
                if whole > 1:
                    return None
    return InlineTarget(t.path, line, min(level, 6))


def inline_note(corpus: Corpus, rel: str, doc: ParsedDocument, it: InlineTarget) -> Outcome:
    """The note ``it.note`` in place of line ``it.line`` of ``rel``, and removed."""
    _must_be_utf8(rel, doc, "the link")
    note = corpus.doc(it.note)
    if note is None:
        raise RenameError(f"{it.note} cannot be read")
    _must_be_utf8(it.note, note, "the note")
    lines = note.lines()
    end = len(lines) - 1 if len(lines) > 1 and lines[-1] == "" else len(lines)
    top = note.headings[0].level if note.headings else 1
    lay = _Layout(it.note, rel, 0, end, it.line, it.line + 1, it.level - top, (), True)
    return _Move(corpus, lay, note, doc).outcome()
