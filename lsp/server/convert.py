"""Every conversion between the engine's coordinates and the protocol's, in one place.

The engine speaks workspace-relative posix paths, 0-based lines and code-point
columns (Python ``str`` indices) of the normalised text. The protocol speaks
``file:`` URIs and columns in the negotiated position encoding (UTF-16 unless
the client offered UTF-8 or UTF-32 and pygls chose it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote, unquote_to_bytes, urlsplit

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace.position_codec import PositionCodec

# -- URIs ---------------------------------------------------------------------


def uri_to_path(uri: str) -> Path | None:
    """The absolute, resolved filesystem path of a ``file:`` URI (None otherwise).
    Percent-escapes that are not UTF-8 (a file name in another encoding) give
    the name's real bytes back (surrogate escapes, as ``os.fsdecode`` does)."""
    p = to_fs_path(uri)
    if not p or "\x00" in p:  # no file has a NUL in its name
        return None
    if "\ufffd" in p and os.name == "posix":
        raw = unquote_to_bytes(urlsplit(uri).path)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            p = os.fsdecode(raw)
    try:
        return Path(p).resolve()
    except (OSError, RuntimeError):
        return Path(p)


def path_to_uri(path: str | Path) -> str:
    """A ``file:`` URI; a name that is not UTF-8 is percent-encoded byte by byte."""
    try:
        return from_fs_path(str(path)) or Path(path).as_uri()
    except UnicodeEncodeError:
        return Path(path).as_uri()


def uri_at_line(uri: str, line: int) -> str:
    """A clickable link to a line: ``file:///x.md#L12`` (1-based, as editors show it)."""
    return f"{uri}#L{line + 1}"


def markdown_link_target(uri: str) -> str:
    """A URI safe inside markdown ``(...)``: spaces and parentheses escaped."""
    return quote(uri, safe=":/#%@!$&'*+,;=?~-._")


# -- positions ------------------------------------------------------------------


STRIDE = 256  # code points between two remembered client columns of a long line


class Positions:
    """Code-point columns <-> client columns for one negotiated encoding.

    A column is counted in C (an ASCII line's columns are its code points; any
    other prefix is encoded and measured), and a long line that is not ASCII
    keeps its client column every :data:`STRIDE` code points (the last line
    asked about, remembered), so the columns of many links on one line cost
    no more than the line itself: pygls's codec counted each prefix
    character by character in Python, and 200,000 links on lines of ten
    took 150 of a document-links request's 260 s (issue 40)."""

    def __init__(self, encoding: str | types.PositionEncodingKind | None = None):
        self.codec = PositionCodec(encoding or types.PositionEncodingKind.Utf16)
        enc = getattr(self.codec.encoding, "value", self.codec.encoding)
        # the codec's own choice: an encoding it does not know counts as UTF-16
        self._kind = enc if enc in ("utf-8", "utf-32") else "utf-16"
        self._marks: tuple[str, list[int] | None] | None = None  # (line, its marks)

    def units(self, text: str) -> int:
        """``text``'s length in the negotiated encoding's code units."""
        if self._kind == "utf-32" or text.isascii():
            return len(text)
        if self._kind == "utf-8":
            return len(text.encode("utf-8", "surrogatepass"))
        return len(text.encode("utf-16-le", "surrogatepass")) // 2

    def _line_marks(self, text: str) -> list[int] | None:
        """The client column at every :data:`STRIDE` code points of ``text``
        (None for an ASCII line: its columns are its code points)."""
        got = self._marks  # one read: worker threads share this object
        if got is not None and got[0] is text:
            return got[1]
        marks: list[int] | None = None
        if not (self._kind == "utf-32" or text.isascii()):
            marks = [0]
            for i in range(STRIDE, len(text) + 1, STRIDE):
                marks.append(marks[-1] + self.units(text[i - STRIDE : i]))
        self._marks = (text, marks)
        return marks

    def column(self, text: str, col: int) -> int:
        """The client column of code-point column ``col`` of the line ``text``."""
        col = max(0, min(col, len(text)))
        if col <= STRIDE:
            return self.units(text[:col])
        marks = self._line_marks(text)
        if marks is None:
            return col
        k = col // STRIDE
        return marks[k] + self.units(text[k * STRIDE : col])

    def to_client(self, lines: Sequence[str], line: int, col: int) -> types.Position:
        """Engine (line, code-point col) -> protocol Position (clamped to the text)."""
        if line >= len(lines):
            return types.Position(line=max(0, line), character=0)
        return types.Position(line=line, character=self.column(lines[line], col))

    def from_client(self, lines: Sequence[str], pos: types.Position) -> tuple[int, int]:
        """Protocol Position -> engine (line, code-point col)."""
        if pos.line >= len(lines):
            return pos.line, 0
        text = lines[pos.line]
        if self._kind == "utf-32" or text.isascii():
            return pos.line, max(0, min(pos.character, len(text)))
        units = 0
        for i, ch in enumerate(text):
            if units >= pos.character:
                return pos.line, i
            units += self.units(ch)
        return pos.line, len(text)

    def range(
        self, lines: Sequence[str], line: int, col: int, end_line: int, end_col: int
    ) -> types.Range:
        return types.Range(
            start=self.to_client(lines, line, col), end=self.to_client(lines, end_line, end_col)
        )

    def lines_range(self, lines: Sequence[str], start_line: int, end_line: int) -> types.Range:
        """Lines ``start_line`` .. ``end_line`` (exclusive), from the first column of
        the first to the end of the last (so a range never ends on the next line)."""
        last = max(start_line, end_line - 1)
        # Trailing blank lines of a section are not part of what it shows.
        while last > start_line and last < len(lines) and not lines[last].strip():
            last -= 1
        end_col = len(lines[last]) if last < len(lines) else 0
        return self.range(lines, start_line, 0, last, end_col)


def start_range() -> types.Range:
    """The start of a file (a link to a file without an anchor)."""
    p = types.Position(line=0, character=0)
    return types.Range(start=p, end=p)
