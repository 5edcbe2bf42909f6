"""What every chunking must hold, checked the same way by the hand-written
cases (tests/test_chunk.py) and the generated ones (tests/test_chunk_fuzz.py)."""

from __future__ import annotations

from mdseek.index.text.markdown import has_visible_text


def assert_tiles(doc, chunks) -> None:
    """The chunks' spans tile the document's body: in order, none empty, each
    holding its text exactly, no visible text between or after them; a body
    that shows text has chunks (text that shows nothing is never one)."""
    text = doc.text
    body_start = doc.line_offset(doc.body_start_line)
    pos = body_start
    for c in chunks:
        assert c.start_offset >= pos, "chunks overlap or are out of order"
        assert not has_visible_text(text[pos : c.start_offset]), "text left out between chunks"
        assert c.start_offset < c.end_offset and c.text == text[c.start_offset : c.end_offset]
        assert c.start_line <= c.end_line
        pos = c.end_offset
    assert not has_visible_text(text[pos:]), "text left out after the last chunk"
    if has_visible_text(text[body_start:]):
        assert chunks
