"""Obsidian's additions to links: block ids (``^id`` ending a paragraph or
list item, or alone on the line after a block, reached by ``[[note#^id]]`` or
``[t](note.md#^id)``) and attachments (``![[image.png]]``, ``[[file.pdf]]``:
a wiki target with a suffix other than markdown's names a file, not a note).

Embeds (``![[note]]``, ``![[note#Heading]]``) need nothing here: the wiki link
inside them is found, resolved and previewed like any other. Pure functions.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence

from ..text.document import ParsedDocument
from .links import MARKDOWN_SUFFIXES

_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")
NOT_TEXT = ("fence", "code_block", "html_block", "front_matter")


def is_block_ref(anchor: str | None) -> bool:
    return anchor is not None and anchor.startswith("^")


def block_ids(doc: ParsedDocument) -> dict[str, int]:
    """Block id (without '^', lower-cased: Obsidian ignores case) -> its 0-based line."""
    lines = doc.lines()
    out: dict[str, int] = {}
    for b in doc.blocks:
        if b.kind in NOT_TEXT:
            continue
        for n in range(b.start_line, min(b.end_line, len(lines))):
            m = _BLOCK_ID.search(lines[n])
            if m:
                out.setdefault(m.group(1).lower(), n)
    return out


# What a note embeds or links besides notes, and an editor opens on a click:
# pictures, PDFs, sounds and videos (Obsidian's attachment types). Any other
# file of a folder (``.env``, a key, a config) is never offered as a link target.
MEDIA_SUFFIXES = frozenset(
    ".png .jpg .jpeg .gif .bmp .svg .webp .avif .pdf"
    " .mp3 .wav .m4a .ogg .flac .3gp .mp4 .webm .ogv .mov .mkv".split()
)


def is_media(name: str) -> bool:
    return posixpath.splitext(name.strip())[1].lower() in MEDIA_SUFFIXES


_SECRET_SUFFIXES = frozenset(
    ".key .pem .p12 .pfx .crt .der .kdbx .keystore .jks .gpg .asc .env .secret".split()
)


def may_open(rel: str) -> bool:
    """Whether a document link may open this file of the folder (any file, but a
    hidden one -- ``.env``, ``.git/config`` -- or a key): a click opens it in the
    editor, so a stranger's document makes no secret one click away."""
    parts = rel.strip().split("/")
    if any(p.startswith(".") for p in parts):
        return False
    return posixpath.splitext(parts[-1])[1].lower() not in _SECRET_SUFFIXES


def is_attachment(name: str) -> bool:
    """A wiki target naming a file that is not a note (``image.png``, ``a.pdf``)."""
    ext = posixpath.splitext(name.strip())[1].lower()
    return bool(ext) and ext not in MARKDOWN_SUFFIXES and " " not in ext and len(ext) <= 6


def find_attachment(
    name: str,
    source: str,
    exists: Callable[[str], bool],
    named: Callable[[str], Sequence[str]] | None = None,
) -> str | None:
    """The workspace path of an attachment: next to the linking note, then from
    the root, then -- as Obsidian finds ``![[image.png]]`` in any folder of the
    vault -- a file of that name anywhere (``named``: the folder's files called
    so, case ignored), the nearest to the note."""
    name = name.strip().replace("\\", "/")
    for cand in (posixpath.join(posixpath.dirname(source), name), name.lstrip("/")):
        rel = posixpath.normpath(cand)
        if not rel.startswith(("../", "/")) and rel not in ("..", ".") and exists(rel):
            return rel
    if named is None or "/" in name.strip("/"):
        return None
    here = posixpath.dirname(source)

    def distance(f: str) -> tuple[int, int, str]:
        common = posixpath.commonpath([here, posixpath.dirname(f)]) if here else ""
        up = here.count("/") + bool(here) - (common.count("/") + bool(common))
        return (up + f.count("/") - common.count("/") - bool(common), len(f), f)

    found = [f for f in named(posixpath.basename(name).lower()) if exists(f)]
    return min(found, key=distance) if found else None
