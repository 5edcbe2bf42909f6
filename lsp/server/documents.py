"""The text the features read: an open editor buffer (unsaved text) when there
is one, else the file on disk — but only inside a workspace folder, and only a
file its folder indexes (:func:`mdseek.index.text.files.check_file`, asked
through the workspace's ``admit``: a symlink ``leak.md -> .env`` is never read).

Parsed documents are cached per (buffer version) or (file size, mtime), and so
are their links; the links and headings alone are kept for every file, so a
workspace-wide diagnostics pass re-reads only what changed, whatever the
folder's size.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from mdseek.index.links.links import Link, find_links, html_anchors
from mdseek.index.links.sites import link_sites
from mdseek.index.text.document import Heading, ParsedDocument
from mdseek.index.text.encoding import NotText, decode
from mdseek.index.text.files import FoundFile, read_found
from mdseek.index.text.parse import TooManyHeadings, normalise, parse_bytes, parse_text

log = logging.getLogger(__name__)

MAX_READ = 20_000_000  # never read a huge file for a hover
PARSED_KEPT = 512  # parsed documents kept (the open ones always)
FACTS_KEPT = 200_000  # files whose links and headings are kept
# a line that may be one (its label may escape brackets: ``[\[x\]]: ...``)
_DEFINITION = re.compile(r"^ {0,3}\[(?:\\.|[^\]\\\n])+\]:", re.MULTILINE)


@dataclass(frozen=True)
class LinkFacts:
    """What checking links needs of a file: its links (and the reference
    definitions no link uses), and its headings and HTML ids (for anchors into
    it). Small enough to keep for every file of a folder."""

    links: tuple[Link, ...]
    headings: tuple[Heading, ...]
    html_anchors: dict[str, int]  # <span id="x">: anchors too, with their lines


def inside_any(path: Path, roots: Iterable[Path]) -> Path | None:
    """The root ``path`` is inside (symlinks resolved), or None."""
    try:
        real = path.resolve()
    except OSError:
        return None
    for root in roots:
        try:
            real.relative_to(root)
            return root
        except ValueError:
            continue
    return None


Admit = Callable[[Path], "FoundFile | None"]  # a file on disk the features may read


class Documents:
    def __init__(self, admit: Admit | None = None) -> None:
        self._admit = admit
        self._open: dict[Path, tuple[str, int, str]] = {}  # path -> (uri, version, text)
        # path -> [version key, parsed document, its links (filled on first use)]
        self._parsed: dict[Path, list] = {}
        self._facts: dict[Path, tuple[tuple, LinkFacts]] = {}  # path -> (version key, facts)
        self._lock = threading.Lock()  # features may read from worker threads
        self._parsing: dict[Path, threading.Lock] = {}  # held while a path is parsed

    # -- buffers ------------------------------------------------------------

    def set_buffer(self, path: Path, uri: str, version: int | None, text: str) -> None:
        self._open[path] = (uri, version or 0, text)

    def close(self, path: Path) -> None:
        self._open.pop(path, None)
        with self._lock:
            self._parsed.pop(path, None)
            self._facts.pop(path, None)
            self._parsing.pop(path, None)

    def open_paths(self) -> list[Path]:
        return list(self._open)

    def uri_of(self, path: Path) -> str | None:
        o = self._open.get(path)
        return o[0] if o else None

    # -- reading --------------------------------------------------------------

    def _version(self, path: Path, roots: Iterable[Path]) -> tuple | None:
        return self._key(path, roots, self._open.get(path))

    def _key(
        self, path: Path, roots: Iterable[Path], o: tuple[str, int, str] | None
    ) -> tuple | None:
        """What identifies the text :meth:`parsed` would read now: the buffer
        ``o``'s version (read once by the caller: a change may arrive from the
        event loop meanwhile), or the file's size and mtime; None if outside
        every root, unreadable or too big."""
        if o is not None:
            return ("buf", o[1], len(o[2]), hash(o[2]))
        found = self.on_disk(path, roots)
        if found is None:
            return None
        return ("disk", found.size, found.mtime_ns)

    def on_disk(self, path: Path, roots: Iterable[Path]) -> FoundFile | None:
        """The file on disk at ``path`` if a feature may read it: inside a root,
        admitted by its folder's rule, within :data:`MAX_READ`."""
        if inside_any(path, roots) is None:
            return None
        if self._admit is not None:
            found = self._admit(path)
        else:
            try:
                st = path.stat()
            except OSError as exc:
                log.info("cannot read %s: %s", path, exc)
                return None
            if not path.is_file():
                return None
            found = FoundFile(path.name, path, st.st_size, st.st_mtime_ns)
        return found if found is not None and found.size <= MAX_READ else None

    def _read(self, path: Path, roots: Iterable[Path]) -> bytes:
        found = self.on_disk(path, roots)
        if found is None:
            raise OSError(f"{path}: not a file of the folder")
        return read_found(found, MAX_READ)

    def parsed(self, path: Path, rel: str, roots: Iterable[Path]) -> ParsedDocument | None:
        """The parsed buffer or file; None if it is outside every root, unreadable
        or over the heading limit (a refused version is remembered as such)."""
        o = self._open.get(path)  # once: the key and the text are of one version
        key = self._key(path, roots, o)
        if key is None:
            return None
        hit = self._parsed.get(path)
        if hit and hit[0] == key:
            return hit[1]
        with self._lock:
            parsing = self._parsing.setdefault(path, threading.Lock())
        with parsing:  # one parse of a version: a second request waits for it, not beside it
            hit = self._parsed.get(path)
            if hit and hit[0] == key:
                return hit[1]
            return self._parse(path, rel, key, o, roots)

    def _parse(
        self,
        path: Path,
        rel: str,
        key: tuple,
        o: tuple[str, int, str] | None,
        roots: Iterable[Path],
    ) -> ParsedDocument | None:
        doc: ParsedDocument | None = None
        try:
            doc = (
                parse_text(o[2], rel)
                if o is not None
                else parse_bytes(self._read(path, roots), rel)
            )
        except OSError as exc:
            log.info("cannot read %s: %s", path, exc)
            return None
        except (NotText, TooManyHeadings) as exc:  # refused (the index skips it too); kept as such
            log.info("not reading %s: %s", path, exc)
        with self._lock:
            self._parsed[path] = [key, doc, None]
            if len(self._parsed) > PARSED_KEPT:
                for k in [k for k in self._parsed if k not in self._open][: PARSED_KEPT // 2]:
                    self._parsed.pop(k, None)
                    self._parsing.pop(k, None)
        return doc

    def link_facts(self, path: Path, rel: str, roots: Iterable[Path]) -> LinkFacts | None:
        """The links and headings of the buffer or file, kept per version for
        every file (parsed documents are kept for the last few hundred only, and
        a check of a bigger folder's links parsed every file each time: 2.9 s
        at 1,000 files, after each save)."""
        key = self._version(path, roots)
        if key is None:
            return None
        hit = self._facts.get(path)
        if hit and hit[0] == key:
            return hit[1]
        doc = self.parsed(path, rel, roots)
        if doc is None:
            return None
        links = self.written_links(path, doc, used_definitions=False)
        facts = LinkFacts(tuple(links), tuple(doc.headings), html_anchors(doc))
        with self._lock:
            if len(self._facts) >= FACTS_KEPT:
                self._facts.clear()
            self._facts[path] = (key, facts)
        return facts

    def lines(self, path: Path, roots: Iterable[Path]) -> list[str] | None:
        """The lines of the buffer or file as :meth:`parsed` numbers them, without
        parsing when it is not cached: a search result's range needs only its
        heading line, and parsing each result's file cost a first search in a
        folder 50-90 ms. None if outside every root or unreadable."""
        o = self._open.get(path)
        key = self._key(path, roots, o)
        if key is None:
            return None
        hit = self._parsed.get(path)
        if hit and hit[0] == key and hit[1] is not None:
            return hit[1].lines()
        if o is not None:
            return normalise(o[2]).split("\n")
        try:
            data = self._read(path, roots)
        except OSError as exc:
            log.info("cannot read %s: %s", path, exc)
            return None
        try:
            text = decode(data, quiet=True)[0]  # as parse_bytes, without its log line
        except NotText:
            return None
        return normalise(text).split("\n")

    def snapshot(
        self, path: Path, rel: str, roots: Iterable[Path]
    ) -> tuple[int | None, ParsedDocument] | None:
        """The parsed buffer with its version, or the file with version None, as
        one consistent read (an edit computed from it carries that version, so a
        buffer changed since is never written). None outside every root."""
        o = self._open.get(path)  # read once: a change may arrive meanwhile
        if o is not None:
            key = self._key(path, roots, o)
            hit = self._parsed.get(path)
            if key is not None and hit and hit[0] == key and hit[1] is not None:
                if hit[1].path == rel:  # this version, parsed already (a 5 MB buffer: seconds)
                    return o[1], hit[1]
            try:
                return o[1], parse_text(o[2], rel)
            except TooManyHeadings:
                return None
        doc = self.parsed(path, rel, roots)
        return (None, doc) if doc is not None else None

    def links(self, path: Path, doc: ParsedDocument) -> list[Link]:
        """``find_links(doc)`` for the document :meth:`parsed` returned for ``path``,
        computed once per parsed version (a full markdown-it pass, the costly part
        of checking every file's links after each index update)."""
        entry = self._parsed.get(path)
        if entry is None or entry[1] is not doc:
            return find_links(doc)  # not (or no longer) the cached version
        if entry[2] is None:
            entry[2] = find_links(doc)
        return entry[2]

    def written_links(
        self, path: Path, doc: ParsedDocument, used_definitions: bool = True
    ) -> list[Link]:
        """:meth:`links`, the source of each inline image (``![i](x.png)``, checked
        and clickable as a link is), and the destination of each reference definition
        (``[ref]: x.md#anchor`` names its target even when no ``[t][ref]`` uses
        it, and a rename rewrites it); a footnote ``[^1]: ...`` is none. With
        ``used_definitions`` False, only the definitions no ``[t][ref]`` of the
        document uses: a used one counts once, at its use. Definitions are
        looked for only in a text that seems to hold one."""
        links = self.links(path, doc)
        if "![" not in doc.text and not _DEFINITION.search(doc.text):
            return links
        lines = doc.lines()
        sites = link_sites(doc, links)
        images = [s.link for s in sites if s.kind == "image"] + list(sites.image_refs)
        defs = [
            s.link
            for s in sites
            if s.kind == "definition" and not lines[s.line].lstrip().startswith("[^")
        ]
        if not used_definitions:
            used = {lk.href for lk in [*links, *sites.image_refs] if lk.reference}
            defs = [d for d in defs if d.href not in used]
        return [*links, *images, *defs]
