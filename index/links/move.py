"""Moving files or folders without breaking a link: the text edits
(:func:`move_files`), and the path a file gets when a link to it is renamed
(:func:`new_file_path`).

Every link is resolved again in the new layout (moved files' own relative
links from their new place) and rewritten when it would not reach the moved
target; as for a heading rename (:mod:`.rename`), the places come from
:func:`.sites.link_sites` and are resolved with :func:`.links.resolve`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from .edits import (
    Corpus,
    Edit,
    Outcome,
    RenameError,
    _mentioning,
    _Names,
    _stem,
    add_file_edits,
    sites_to_rewrite,
)
from .links import MARKDOWN_SUFFIXES, Link, Target, _dest, _inside, resolve, wiki_name
from .sites import Site


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
        sites = sites_to_rewrite(corpus, src, sdoc)
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
    if new.path == want and not (new.by_title and not old.by_title):
        return None  # (a link by file name stays one: a title reaching the note is no reason)
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
