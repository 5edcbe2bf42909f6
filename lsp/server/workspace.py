"""What every feature reads: the workspace folders (each a :class:`Root`), the
editor buffers, the negotiated position encoding, the settings — and the
lookups built on them (which folder holds a file, the parsed text at a URI,
where a link points).

No pygls here and no handlers: the feature modules (:mod:`.navigation`,
:mod:`.search`, :mod:`.diagnostics`, :mod:`.links`) take a ``Workspace`` and
return protocol types; :mod:`.server` wires them to the protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types

from mdseek.index.api import NotIndexed, OutsideRoot, confine_in
from mdseek.index.links.links import Link, Target, find_heading, resolve
from mdseek.index.text.aliases import AliasMap
from mdseek.index.text.document import Heading, ParsedDocument
from mdseek.index.text.files import FoundFile, check_file

from .aliases import FolderAliases
from .config import Settings
from .convert import Positions, path_to_uri, uri_to_path
from .documents import Documents
from .roots import Root


@dataclass
class Cursor:
    """A position in a parsed document, in engine coordinates."""

    path: Path
    doc: ParsedDocument
    line: int
    col: int


class Workspace:
    def __init__(self) -> None:
        self.roots: list[Root] = []
        self.docs = Documents(self.admit)
        self.pos = Positions()
        self.settings = Settings()
        self.cancelled = 0  # requests dropped because the client cancelled them
        self._aliases: dict[Path, FolderAliases] = {}

    # -- folders --------------------------------------------------------------

    def root_for(self, path: Path) -> Root | None:
        """The innermost workspace folder holding ``path``."""
        best = None
        for r in self.roots:
            if r.contains(path) and (best is None or len(str(r.path)) > len(str(best.path))):
                best = r
        return best

    @property
    def root_paths(self) -> list[Path]:
        return [r.path for r in self.roots]

    def admit(self, path: Path) -> FoundFile | None:
        """The file on disk at ``path`` if its folder indexes it (the index's
        rule, :func:`check_file`: a symlink's target passes the filter too),
        else None: what every feature reads from disk goes through here."""
        root = self.root_for(path)
        if root is None:
            try:
                path = path.resolve()
            except (OSError, RuntimeError):
                return None
            root = self.root_for(path)
            if root is None:
                return None
        return check_file(root.path, path, root.settings.file_filter())

    # -- documents --------------------------------------------------------------

    def doc_for_uri(self, uri: str) -> tuple[Path, ParsedDocument] | None:
        path = uri_to_path(uri)
        if path is None:
            return None
        root = self.root_for(path)
        rel = root.rel(path) if root else path.name
        doc = self.docs.parsed(path, rel, self.root_paths)
        return (path, doc) if doc is not None else None

    def uri_for(self, path: Path) -> str:
        return self.docs.uri_of(path) or path_to_uri(path)

    def cursor(self, uri: str, position: types.Position) -> Cursor | None:
        found = self.doc_for_uri(uri)
        if found is None:
            return None
        path, doc = found
        line, col = self.pos.from_client(doc.lines(), position)
        return Cursor(path, doc, line, col)

    @staticmethod
    def heading_at(doc: ParsedDocument, line: int) -> Heading | None:
        for h in doc.headings:
            if h.line <= line < h.end_line:
                return h
        return None

    # -- links ------------------------------------------------------------------

    def written_links(
        self, path: Path, doc: ParsedDocument, used_definitions: bool = True
    ) -> list[Link]:
        """See :meth:`.documents.Documents.written_links`."""
        return self.docs.written_links(path, doc, used_definitions)

    def aliases(self, root: Root) -> AliasMap:
        """The folder's front-matter aliases (open buffers as typed)."""
        cache = self._aliases.setdefault(root.path, FolderAliases())
        return cache.get(root, self.docs, self.root_paths)

    def resolve_link(self, root: Root | None, path: Path, link: Link) -> Target:
        if root is None:  # a loose file: only links inside itself
            if link.kind == "markdown" and link.external:
                return Target(None, None, False, False, external=True)
            if link.path:
                return Target(None, link.anchor, link.kind == "wiki", False, outside=True)
            return Target(path.name, link.anchor, link.kind == "wiki", True)
        if link.kind != "wiki" or not link.path:
            return resolve(link, root.rel(path), root.exists)
        files = root.markdown_files()
        return resolve(link, root.rel(path), root.exists, files, self.aliases(root))

    def target_doc(
        self, root: Root | None, path: Path, target: Target
    ) -> tuple[Path, ParsedDocument] | None:
        if target.path is None or not target.exists:
            return None
        if root is None:
            doc = self.docs.parsed(path, path.name, [])
            return (path, doc) if doc else None
        if (root.path / target.path).resolve() == path.resolve():
            doc = self.docs.parsed(path, target.path, self.root_paths)  # the file itself
            return (path, doc) if doc else None
        return self.linked_doc(root, target.path)

    def linked_doc(self, root: Root, rel: str) -> tuple[Path, ParsedDocument] | None:
        """A file that a link names, if the folder indexes it: the MCP's rules
        (include/exclude, size limit, inside the folder, no symlink out), so a
        hover or a quick fix never shows a byte of ``.env`` or of a file elsewhere."""
        try:
            rel, real = confine_in(root.path, root.settings.file_filter(), rel)
        except (OutsideRoot, NotIndexed):
            return None
        doc = self.docs.parsed(real, rel, self.root_paths)
        return (real, doc) if doc else None

    def linked_file(self, root: Root, rel: str) -> Path | None:
        """The real path of a file a document link may open: any file inside the
        folder that its filter does not exclude, but a hidden one or a key
        (symlinks resolved, the target checked too; a click opens it in the
        editor, no byte of it is shown here, unlike :meth:`linked_doc`)."""
        try:
            return confine_in(root.path, root.settings.file_filter(), rel, any_file=True)[1]
        except (OutsideRoot, NotIndexed):
            return None

    def link_target(
        self, root: Root | None, path: Path, link: Link
    ) -> tuple[Path, ParsedDocument, Heading | None] | None:
        """The file, parsed document and heading (if the link names one) a link points to."""
        target = self.resolve_link(root, path, link)
        found = self.target_doc(root, path, target)
        if found is None:
            return None
        tpath, tdoc = found
        h = find_heading(tdoc, target.anchor, target.by_text) if target.anchor else None
        return tpath, tdoc, h
