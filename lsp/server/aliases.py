"""Each workspace folder's front-matter aliases, as the editor sees them: open
buffers first (an alias typed and not saved counts), else the files on disk.

A folder's files are read once (front matter only) and again when their size
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

from mdseek.index.text.aliases import AliasMap, doc_aliases, text_aliases
from mdseek.index.text.files import read_found

from .documents import MAX_READ

if TYPE_CHECKING:
    from .documents import Documents
    from .roots import Root

log = logging.getLogger(__name__)

_Stamp = tuple[int, int]  # (size, mtime_ns)
RECHECK_SECONDS = 1.0  # files changed on disk are noticed within this time


class FolderAliases:
    """The alias map of one folder, kept up to date."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: list[str] | None = None  # the file list the map was built from
        self._open: dict[str, tuple[str, ...]] = {}
        self._disk: dict[str, tuple[_Stamp, tuple[str, ...]]] = {}
        self._map = AliasMap()
        self._checked = 0.0  # when the files' sizes and times were last compared

    def get(self, root: Root, docs: Documents, roots: list[Path]) -> AliasMap:
        files = root.markdown_files()
        opened: dict[str, tuple[str, ...]] = {}
        for p in docs.open_paths():
            if root.contains(p):
                rel = root.rel(p)
                doc = docs.parsed(p, rel, roots)
                if doc is not None:
                    opened[rel] = doc_aliases(doc)
        now = time.monotonic()
        with self._lock:
            fresh = files is self._files and now - self._checked < RECHECK_SECONDS
            if fresh and opened == self._open:
                return self._map
            disk = self._disk if fresh else None
        if disk is None:
            disk = self._read(root, files, docs, roots)
        in_folder = set(files)
        by_file = {rel: a for rel, (_, a) in disk.items()}
        by_file.update((rel, a) for rel, a in opened.items() if rel in in_folder)
        amap = AliasMap(by_file, files)
        with self._lock:
            self._files, self._open, self._disk, self._map = files, opened, disk, amap
            if not fresh:
                self._checked = now
        return amap

    def _read(
        self, root: Root, files: list[str], docs: Documents, roots: list[Path]
    ) -> dict[str, tuple[_Stamp, tuple[str, ...]]]:
        with self._lock:
            old = dict(self._disk)
        out: dict[str, tuple[_Stamp, tuple[str, ...]]] = {}
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
            out[rel] = (stamp, text_aliases(text, rel))
        return out
