"""Tags: ``#tag`` in the text and ``tags:`` in the front matter (Obsidian's rules).

In text, a tag is ``#`` after the start of a line or a space, then letters,
digits, ``_``, ``-`` and ``/`` (nesting: ``#area/sub``), with at least one
character that is not a digit, ``_``, ``-`` or ``/`` (``#1984`` is not a tag).
Never in fenced or indented code, HTML blocks, code spans, link destinations
(``[t](#anchor)``), autolinks or bare URLs, and never the ``#`` marks of a
heading (a tag written in a heading's text counts). In the front matter,
``tags:`` (or ``tag:``) holds a YAML list or a string of names separated by
commas or spaces, each with or without a leading ``#``.

Names compare without case (``#Ops`` and ``#ops`` are one tag); positions are
0-based lines and code-point columns of the normalised text, the name without
its ``#``. Pure: a parsed document in, tags out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text.document import ParsedDocument

_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/-]+)")
_NOT_ONLY = re.compile(r"[^\d_/-]")
# Spans of a line where a '#' is not a tag: code spans, link destinations,
# autolinks, URLs, HTML tags.
_MASK = re.compile(
    r"(`+)(?!`).*?(?<!`)\1(?!`)"  # code span
    r"|\]\([^)]*\)"  # inline link destination
    r"|\]\[[^\]]*\]"  # reference label
    r"|<[A-Za-z][A-Za-z0-9+.-]*:[^\s<>]*>"  # autolink
    r"|\b[A-Za-z][A-Za-z0-9+.-]*://\S+"  # bare URL
    r"|</?[A-Za-z][^<>]*>"  # HTML tag
)
_HEADING_MARK = re.compile(r"^ {0,3}#{1,6}(?=\s|$)")
SKIPPED = ("fence", "code_block", "html_block", "front_matter", "hr")
_FM_KEY = re.compile(r"^(tags?)\s*:(.*)$", re.IGNORECASE)
_FM_NAME = re.compile(r"#?([\w/-]+)")


@dataclass(frozen=True)
class Tag:
    name: str  # as written, without '#'
    line: int
    start: int  # column of the name (after '#')
    end: int
    front_matter: bool = False

    @property
    def key(self) -> str:
        return self.name.lower()


def is_tag_name(name: str) -> bool:
    return bool(name) and bool(re.fullmatch(r"[\w/-]+", name)) and bool(_NOT_ONLY.search(name))


def find_tags(doc: ParsedDocument) -> list[Tag]:
    lines = doc.lines()
    out = _front_matter_tags(doc)
    for b in doc.blocks:
        if b.kind in SKIPPED:
            continue
        for n in range(b.start_line, min(b.end_line, len(lines))):
            out += line_tags(lines[n], n, heading=b.kind == "heading")
    return out


def tags_on_line(doc: ParsedDocument, line: int) -> list[Tag]:
    """:func:`find_tags`'s tags on the line ``line`` only (what is under a
    cursor: all of a 5 MB file's took a rename 0.3 s and more)."""
    lines = doc.lines()
    out = [t for t in _front_matter_tags(doc) if t.line == line]
    for b in doc.blocks:
        if b.kind not in SKIPPED and b.start_line <= line < min(b.end_line, len(lines)):
            out += line_tags(lines[line], line, heading=b.kind == "heading")
    return out


def line_tags(text: str, line: int, heading: bool = False) -> list[Tag]:
    if heading:
        m = _HEADING_MARK.match(text)
        if m:
            text = " " * m.end() + text[m.end() :]
    masked = _MASK.sub(lambda m: " " * len(m.group(0)), text)
    out = []
    for m in _TAG.finditer(masked):
        name = m.group(1).rstrip("/")
        if _NOT_ONLY.search(name):
            out.append(Tag(name, line, m.start(1), m.start(1) + len(name)))
    return out


def renamed(name: str, old_key: str, new: str) -> str | None:
    """A tag's name once the tag ``old_key`` is renamed to ``new``: the tag itself
    and the tags nested under it (``#area/sub`` -> ``#new/sub``); None for any
    other tag. Names compare without case."""
    key = name.lower()
    if key == old_key:
        return new
    if key.startswith(old_key + "/"):
        return new + name[len(old_key) :]
    return None


def tag_at(tags: list[Tag], line: int, col: int) -> Tag | None:
    """The tag whose ``#name`` holds the column (the '#' included)."""
    for t in tags:
        if t.line == line and t.start - 1 <= col <= t.end:
            return t
    return None


def _front_matter_tags(doc: ParsedDocument) -> list[Tag]:
    if not doc.front_matter:
        return []
    value = doc.front_matter.get("tags", doc.front_matter.get("tag"))
    if isinstance(value, str):
        wanted = {n.lower() for n in _FM_NAME.findall(value)}
    elif isinstance(value, list):
        wanted = {str(v).lstrip("#").lower() for v in value if isinstance(v, (str, int))}
    else:
        return []
    wanted = {w for w in wanted if is_tag_name(w)}
    out: list[Tag] = []
    for n, rest, base, _ in doc.front_matter_value_lines(_FM_KEY):
        for t in _FM_NAME.finditer(rest):
            if t.group(1).lower() in wanted:
                out.append(Tag(t.group(1), n, base + t.start(1), base + t.end(1), True))
    return out
