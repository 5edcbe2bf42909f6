"""A file's bytes as text, or why they are not text.

UTF-8 (a BOM optional) is read as it is; a file with a UTF-16 BOM as UTF-16.
Bytes that are not UTF-8 are read as cp1252 (Windows-1252, a superset of the
printable Latin-1) when every byte is one of its characters, none is a
control character and no valid multi-byte UTF-8 sequence is among them (so
a UTF-8 note with one stray byte stays UTF-8, the byte replaced). A file
holding NUL bytes, or whose bytes are mostly invalid UTF-8, is not text:
:class:`NotText` says why, and the caller skips it.
"""

from __future__ import annotations

import codecs
import logging
import re

log = logging.getLogger(__name__)

BAD_SHARE = 0.05  # invalid UTF-8 sequences per character above which a file is not text
BAD_MIN = 16  # ... and at least this many (a short note with a stray byte or two is text)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_MULTIBYTE = re.compile(rb"[\xc2-\xf4][\x80-\xbf]+")


class NotText(ValueError):
    """The bytes are not a text file (the message says why, in one line)."""


def decode(data: bytes, path: str = "<bytes>", quiet: bool = False) -> tuple[str, int]:
    """:func:`decode_as` without the encoding: the text and its replaced sequences."""
    text, errors, _ = decode_as(data, path, quiet)
    return text, errors


def decode_as(data: bytes, path: str = "<bytes>", quiet: bool = False) -> tuple[str, int, str]:
    """``data`` as text, the number of invalid sequences replaced with U+FFFD
    (logged, as a cp1252 reading is, unless ``quiet``) and the encoding read
    ("utf-8", "utf-16" or "cp1252"); raises :class:`NotText` for a file that is
    not text."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), 0, "utf-16"
        except UnicodeDecodeError:
            raise NotText("a UTF-16 byte-order mark, but not valid UTF-16") from None
    if b"\0" in data:
        raise NotText("it holds NUL bytes (a binary file, not text)")
    try:
        return data.decode("utf-8-sig"), 0, "utf-8"
    except UnicodeDecodeError:
        pass
    if not _MULTIBYTE.search(data):
        try:
            text = data.decode("cp1252")
        except UnicodeDecodeError:
            text = ""
        if text and len(_CONTROL.findall(text)) <= len(text) // 100:
            if not quiet:
                log.warning("%s: not UTF-8; read as cp1252 (Windows-1252)", path)
            return text, 0, "cp1252"
    text = data.decode("utf-8-sig", errors="replace")
    errors = text.count("\ufffd")
    if errors >= BAD_MIN and errors > BAD_SHARE * len(text):
        raise NotText(
            f"mostly invalid UTF-8 ({errors:,} invalid sequences in {len(text):,} characters)"
        )
    if not quiet:
        log.warning("%s: invalid UTF-8, %d byte sequence(s) replaced with U+FFFD", path, errors)
    return text, errors, "utf-8"
