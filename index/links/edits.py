"""What every rename and move shares: the :class:`Corpus` it reads, the
:class:`Outcome` of :class:`Edit` s it answers, :class:`RenameError`, and which
files can hold a link that changes (:func:`_mentioning`).

Pure: documents come from a :class:`Corpus` (the protocol layer reads open
buffers or files), and the answer is an :class:`Outcome` of edits in engine
coordinates (0-based lines, code-point columns of the normalised text).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import quote

from ..text.aliases import AliasMap
from ..text.parse import ParsedDocument
from . import links as _links
from .links import MARKDOWN_SUFFIXES, Link
from .sites import SiteList, link_sites


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
    creates: list[tuple[str, str]] = field(default_factory=list)  # new files: (rel path, text)
    deletes: list[str] = field(default_factory=list)  # files the editor removes

    def add(self, rel: str, edit: Edit) -> None:
        self.edits.setdefault(rel, []).append(edit)


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


def too_many_links(rel: str) -> str:
    """Why a rename or move leaves a file alone (one line, every front end)."""
    return f"{rel} has more than {_links.MAX_LINKS:,} links: mdseek does not rewrite its links"


def sites_to_rewrite(corpus: Corpus, src: str, doc: ParsedDocument) -> SiteList:
    """:func:`.sites.link_sites` of a file whose links an edit may rewrite; a file
    with more links than were read is refused (:func:`too_many_links`):
    an edit that skipped the unread ones would leave them broken, unsaid."""
    sites = link_sites(doc, corpus.links(src, doc))
    if sites.cut:
        raise RenameError(too_many_links(src))
    return sites


def _must_be_utf8(rel: str, doc: ParsedDocument, what: str) -> None:
    """The file a rename starts in must take its edit: one that is not valid
    UTF-8 would be saved with every bad byte turned into U+FFFD, and skipping
    only its edit would point the folder's links at a name it does not have."""
    if doc.decode_errors or doc.encoding != "utf-8":
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
        if doc.decode_errors or doc.encoding != "utf-8":
            out.skipped.append((src, "it is not valid UTF-8"))
            out.edits.pop(src, None)
            return
        out.add(src, edit)
