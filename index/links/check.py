"""What is wrong with a document's links and headings, as data: a link to a
file or note that does not exist, to a heading or block its target does not
have, by an alias several notes claim; a heading whose text one above it has
already; a front-matter alias no link can reach by it.

Pure: the caller hands in the document's links, headings and alias sites and
a view of its folder (:class:`FolderView`: how a link resolves, what a target
holds); no file is read here. Each :class:`Problem` says what (``kind``),
where (a :class:`Span` in engine coordinates: 0-based lines, code-point
columns, ends exclusive), a message for the user, related places, and what a
quick fix needs (``fix``). The front ends turn them into their own shapes
(the language server's ``Diagnostic``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..text.aliases import AliasMap, AliasSite
from ..text.document import Heading
from ..text.slug import github_slug
from .links import MARKDOWN_SUFFIXES, HeadingIndex, Link, Target
from .obsidian import is_attachment, is_block_ref

BROKEN_LINK = "broken-link"
DUPLICATE_HEADING = "duplicate-heading"
ALIAS_UNREACHABLE = "alias-unreachable"


@dataclass(frozen=True)
class Span:
    """A place in a document: 0-based lines, code-point columns, end exclusive."""

    line: int
    start: int
    end_line: int
    end: int


@dataclass(frozen=True)
class Related:
    """Another place a problem names (``path``: workspace-relative)."""

    path: str
    span: Span
    message: str


@dataclass(frozen=True)
class Problem:
    kind: str  # BROKEN_LINK, DUPLICATE_HEADING or ALIAS_UNREACHABLE
    span: Span
    message: str
    related: tuple[Related, ...] = ()
    fix: dict | None = None  # what a quick fix needs: {"kind": "missing" | "anchor", ...}


class TargetFacts(Protocol):
    """What an anchor is checked against: a target's headings and HTML ids."""

    @property
    def headings(self) -> Sequence[Heading]: ...

    @property
    def html_anchors(self) -> dict[str, int]: ...


class FolderView(Protocol):
    """The folder as the checked document sees it."""

    def resolve(self, link: Link) -> Target: ...

    def attachment(self, name: str) -> str | None: ...  # ![[image.png]]: the file, if any

    def facts(self, rel: str) -> TargetFacts | None: ...  # None: unreadable

    def block_ids(self, rel: str) -> Iterable[str] | None: ...  # lower case; None: unreadable

    def is_folder(self, rel: str) -> bool: ...  # a folder of the workspace (a link may name one)
    def ignored(self, rel: str) -> str | None: ...  # "ignored by .gitignore", or None


_LINE_FRAGMENT = re.compile(r"L?\d+(?:,\d+)?(?:-L?\d+(?:,\d+)?)?", re.IGNORECASE)


def is_line_fragment(anchor: str) -> bool:
    """``#L10``, ``#L10,4``, ``#L10-L20``, ``#10-20``: a place by line (GitHub,
    VS Code), not a heading -- unless a heading has that anchor."""
    return bool(_LINE_FRAGMENT.fullmatch(anchor))


def link_span(link: Link) -> Span:
    return Span(link.line, link.start, link.end_line, link.end)


def link_problems(links: Iterable[Link], folder: FolderView) -> list[Problem]:
    """The broken links among ``links``, in their order. Links to one place
    resolve once, and each target is read and indexed once (a 5 MB file holds
    200,000 links to a few dozen places)."""
    resolved: dict[tuple, Target] = {}
    heads: dict[str, HeadingIndex | None] = {}
    blocks: dict[str, set[str] | None] = {}
    ignored: dict[str, str | None] = {}
    out: list[Problem] = []

    def broken(link: Link, message: str, fix: dict | None = None) -> None:
        out.append(Problem(BROKEN_LINK, link_span(link), message, fix=fix))

    for link in links:
        if link.kind == "wiki" and link.path and is_attachment(link.path):  # ![[image.png]]
            if folder.attachment(link.path) is None:
                broken(link, f"No such file: {link.path}")
            continue
        key = (link.kind, link.href, link.path, link.anchor)
        target = resolved.get(key) or resolved.setdefault(key, folder.resolve(link))
        if target.ambiguous:
            notes = " and ".join(target.ambiguous)
            what = "the title" if target.by_title else "an alias"
            broken(link, f"Ambiguous link: {link.path!r} is {what} of {notes}")
            continue
        if target.external or target.outside or target.path is None:
            continue
        if not target.exists and link.kind == "markdown" and folder.is_folder(target.path):
            continue  # [t](sub/): a folder that is there
        if target.path not in ignored:
            ignored[target.path] = folder.ignored(target.path)
        if why := ignored[target.path]:  # there, but an ignore file leaves it out
            broken(link, f"{target.path} is {why}: it is not indexed")
            continue
        if not target.exists:
            md = target.path.lower().endswith(MARKDOWN_SUFFIXES)
            missing = {"kind": "missing", "target": target.path} if md else None
            what = "note" if link.kind == "wiki" else "file"
            broken(link, f"No such {what}: {target.path}", missing)
            continue
        if target.anchor and is_block_ref(target.anchor):  # [[note#^id]]
            if target.path not in blocks:
                ids = folder.block_ids(target.path)
                blocks[target.path] = set(ids) if ids is not None else None
            known = blocks[target.path]
            if known is not None and target.anchor[1:].lower() not in known:
                broken(link, f"No block {target.anchor!r} in {target.path}")
            continue
        if target.anchor:
            if target.path not in heads:
                facts = folder.facts(target.path)
                heads[target.path] = HeadingIndex(facts) if facts is not None else None
            index = heads[target.path]
            if index is None or index.find(target.anchor, target.by_text) is not None:
                continue
            if link.kind == "markdown" and (
                is_line_fragment(target.anchor) or target.anchor in _html(index)
            ):
                continue
            shown = target.anchor if target.by_text else "#" + target.anchor
            fix: dict = {
                "kind": "anchor",
                "target": target.path,
                "anchor": target.anchor,
                "byText": target.by_text,
            }
            broken(link, f"No heading {shown!r} in {target.path}", fix)
    return out


def _html(index: HeadingIndex) -> dict[str, int]:
    return getattr(index.doc, "html_anchors", {})


def duplicate_headings(headings: Iterable[Heading]) -> list[tuple[Heading, Heading]]:
    """Each heading whose text another heading above it already has (same
    GitHub anchor before numbering), with that first one: links by text go to
    the first, and ``#x`` only ever reaches the first (the others are ``#x-1``...)."""
    first: dict[str, Heading] = {}
    out = []
    for h in headings:
        key = github_slug(h.rendered or h.text)
        if key in first:
            out.append((h, first[key]))
        else:
            first[key] = h
    return out


def heading_span(h: Heading, line_text: Callable[[int], str]) -> Span:
    """The heading's text line (for a setext heading, without the underline)."""
    return Span(h.line, 0, h.line, len(line_text(h.line)))


def duplicate_problems(
    rel: str, headings: Iterable[Heading], line_text: Callable[[int], str]
) -> list[Problem]:
    """A warning on each duplicate heading of the document ``rel``, naming the
    first (``line_text(n)``: the document's line ``n``, "" past its end)."""
    out = []
    for h, first in duplicate_headings(headings):
        message = (
            f"Duplicate heading {h.text!r} (also on line {first.line + 1}): "
            f"links by its text reach the first; this one is #{h.slug}"
        )
        where = Related(rel, heading_span(first, line_text), "the first heading with this text")
        out.append(Problem(DUPLICATE_HEADING, heading_span(h, line_text), message, (where,)))
    return out


def alias_problems(rel: str, sites: Iterable[AliasSite], aliases: AliasMap) -> list[Problem]:
    """A warning on each alias of the front matter of ``rel`` that no link can
    reach by it: another note claims it too, or a file has that name (a file
    name wins)."""
    out = []
    for site in sites:
        others = [f for f in aliases.claims(site.name) if f != rel]
        shadow = aliases.shadowed(site.name)
        if shadow is not None and shadow != rel:
            why = f"[[{site.name}]] leads to {shadow} (a file name wins over an alias)"
        elif others:
            who = " and ".join(others) + (" declares" if len(others) == 1 else " declare")
            why = f"{who} it too, so [[{site.name}]] is ambiguous"
        else:
            continue
        span = Span(site.line, site.start, site.line, site.end)
        out.append(Problem(ALIAS_UNREACHABLE, span, f"Alias {site.name!r} leads nowhere: {why}"))
    return out
