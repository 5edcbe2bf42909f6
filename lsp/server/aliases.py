"""Each workspace folder's front-matter aliases and notes' titles (other names a
wiki link reaches a note by), as the editor sees them: open buffers first (an
alias typed and not saved counts), else the files on disk.

A folder's files are read once (front matter and the text up to the first heading) and again when their size
or modification time changes (compared at most once a second, or at once when
the folder's file list changes); the map is rebuilt then, or when an open
buffer's aliases change, so a resolver asks for it on every link at no cost. The rule that uses it is in
:mod:`mdseek.index.text.aliases`.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from mdseek.index.text.aliases import AliasMap, doc_aliases, doc_title, text_aliases, text_title
from mdseek.index.text.files import read_found

from .documents import MAX_READ

if TYPE_CHECKING:
    from .documents import Documents
    from .roots import Root

log = logging.getLogger(__name__)

_Stamp = tuple[int, int]  # (size, mtime_ns)
_Names = tuple[tuple[str, ...], str | None]  # a note's aliases and title
RECHECK_SECONDS = 1.0  # files changed on disk are noticed within this time


class FolderAliases:
    """The alias map of one folder, kept up to date."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: list[str] | None = None  # the file list the map was built from
        self._open: dict[str, _Names] = {}
        self._disk: dict[str, tuple[_Stamp, _Names]] = {}
        self._map = AliasMap()
        self._checked = 0.0  # when the files' sizes and times were last compared

    def get(self, root: Root, docs: Documents, roots: list[Path]) -> AliasMap:
        files = root.markdown_files()
        opened: dict[str, _Names] = {}
        for p in docs.open_paths():
            if root.contains(p):
                rel = root.rel(p)
                doc = docs.parsed(p, rel, roots)
                if doc is not None:
                    opened[rel] = (doc_aliases(doc), doc_title(doc))
        now = time.monotonic()
        with self._lock:
            fresh = files is self._files and now - self._checked < RECHECK_SECONDS
            if fresh and opened == self._open:
                return self._map
            disk = self._disk if fresh else None
        if disk is None:
            disk = self._read(root, files, docs, roots)
        in_folder = set(files)
        names = {rel: n for rel, (_, n) in disk.items()}
        names.update((rel, n) for rel, n in opened.items() if rel in in_folder)
        amap = AliasMap(
            {rel: a for rel, (a, _) in names.items()},
            files,
            {rel: t for rel, (_, t) in names.items()},
        )
        with self._lock:
            self._files, self._open, self._disk, self._map = files, opened, disk, amap
            if not fresh:
                self._checked = now
        return amap

    def _read(
        self, root: Root, files: list[str], docs: Documents, roots: list[Path]
    ) -> dict[str, tuple[_Stamp, _Names]]:
        with self._lock:
            old = dict(self._disk)
        out: dict[str, tuple[_Stamp, _Names]] = {}
        for rel in files:
            path = root.path / rel
            try:
                found = docs.on_disk(path, roots)  # the folder's rule (and MAX_READ)
                if found is None:
                    continue
                stamp = (found.size, found.mtime_ns)
                hit = old.get(rel)
                if hit is not None and hit[0] == stamp:
                    out[rel] = hit
                    continue
                text = read_found(found, MAX_READ).decode("utf-8-sig", errors="replace")
            except OSError as exc:
                log.info("aliases: cannot read %s: %s", path, exc)
                continue
            out[rel] = (stamp, (text_aliases(text, rel), text_title(text, rel)))
        return out
