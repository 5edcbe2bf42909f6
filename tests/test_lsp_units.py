"""The protocol layer's pure parts: position conversion and document symbols."""

from __future__ import annotations

from lsprotocol import types

from mdseek.index.text.parse import parse_text
from mdseek.lsp.server.convert import Positions, path_to_uri, uri_to_path
from mdseek.lsp.server.documents import Documents
from mdseek.lsp.server.features import document_symbols, hover_section


def test_positions_utf16_utf8_utf32():
    lines = ["a😀b é"]
    for enc, want in (
        (types.PositionEncodingKind.Utf16, 4),
        (types.PositionEncodingKind.Utf8, 6),
        (types.PositionEncodingKind.Utf32, 3),
    ):
        pos = Positions(enc)
        p = pos.to_client(lines, 0, 3)  # before " "
        assert p.character == want
        assert pos.from_client(lines, p) == (0, 3)


def test_uri_round_trip_with_spaces(tmp_path):
    p = tmp_path / "a b" / "c (d).md"
    p.parent.mkdir()
    p.write_text("x")
    u = path_to_uri(p)
    assert "%20" in u and uri_to_path(u) == p.resolve()


def test_document_symbols_nest_and_cover_sections():
    doc = parse_text("# T\n\nintro\n\n## A\n\na\n\n### A1\n\nx\n\n## B\n\nb\n")
    (t,) = document_symbols(doc, Positions())
    assert t.name == "T" and [c.name for c in t.children] == ["A", "B"]
    a = t.children[0]
    assert [c.name for c in a.children] == ["A1"]
    assert a.range.start.line == 4 and a.range.end.line == 10  # through A1, not B
    assert a.selection_range.start.line == 4 and a.selection_range.end.character == 4


def test_hover_defuses_command_links():
    doc = parse_text("# T\n\n## S\n\nclick [me](command:workbench.action.quit) now\n")
    h = hover_section(doc, doc.headings[1], "t.md", "file:///t.md")
    assert "command:" not in h.contents.value
    assert isinstance(h.contents, types.MarkupContent)


def test_document_links_are_computed_once_per_version(tmp_path):
    f = tmp_path / "a.md"
    f.write_text("# A\n\nSee [b](b.md).\n")
    docs = Documents()
    d1 = docs.parsed(f, "a.md", [tmp_path])
    first = docs.links(f, d1)
    assert [lk.path for lk in first] == ["b.md"]
    assert docs.links(f, docs.parsed(f, "a.md", [tmp_path])) is first  # same version: cached
    f.write_text("# A\n\nSee [c](c.md#x) and [b](b.md).\n")  # size changes: a new version
    d2 = docs.parsed(f, "a.md", [tmp_path])
    assert d2 is not d1
    assert [(lk.path, lk.anchor) for lk in docs.links(f, d2)] == [("c.md", "x"), ("b.md", None)]
    docs.set_buffer(f, "file:///a.md", 1, "# A\n\n[[Note]]\n")  # an open buffer wins over the disk
    d3 = docs.parsed(f, "a.md", [tmp_path])
    assert [lk.kind for lk in docs.links(f, d3)] == ["wiki"]


def test_lines_without_parsing_number_lines_as_the_parsed_document(tmp_path, monkeypatch):
    """A search result's range reads the file's lines only: the same lines as the
    parsed document (BOM, CRLF, lone CR, invalid UTF-8), the buffer over the
    disk, nothing outside the workspace, and no markdown parse."""
    from mdseek.lsp.server import documents as documents_mod

    f = tmp_path / "w" / "a.md"
    f.parent.mkdir()
    f.write_bytes(b"\xef\xbb\xbf# A\r\n\r\nx\ry \xff\xfe z\n## B\n")
    outside = tmp_path / "b.md"
    outside.write_text("# B\n")
    roots = [f.parent]
    want = Documents().parsed(f, "a.md", roots).lines()
    assert want[0] == "# A" and len(want) == 6

    def no_parse(*a, **k):
        raise AssertionError("parsed")

    monkeypatch.setattr(documents_mod, "parse_bytes", no_parse)
    monkeypatch.setattr(documents_mod, "parse_text", no_parse)
    docs = Documents()
    assert docs.lines(f, roots) == want
    assert docs.lines(outside, roots) is None and docs.lines(f.parent / "gone.md", roots) is None
    docs.set_buffer(f, "file:///a.md", 2, "# A\r\nedited\n")
    assert docs.lines(f, roots) == ["# A", "edited", ""]


def test_link_facts_are_kept_for_more_files_than_parsed_documents(tmp_path, monkeypatch):
    """A folder-wide link check reads only what changed, however many files
    (parsed documents are kept for the last PARSED_KEPT only)."""
    from mdseek.lsp.server import documents as documents_mod

    monkeypatch.setattr(documents_mod, "PARSED_KEPT", 4)
    files = []
    for i in range(12):
        f = tmp_path / f"n{i}.md"
        f.write_text(f"# Note {i}\n\nSee [next](n{i + 1}.md#note-{i + 1}).\n")
        files.append(f)
    docs = Documents()
    first = [docs.link_facts(f, f.name, [tmp_path]) for f in files]
    assert [(lk.path, lk.anchor) for lk in first[3].links] == [("n4.md", "note-4")]
    assert [h.slug for h in first[3].headings] == ["note-3"]
    real_parse = documents_mod.parse_bytes
    parsed: list[str] = []

    def counting(data, rel, *a):
        parsed.append(rel)
        return real_parse(data, rel, *a)

    monkeypatch.setattr(documents_mod, "parse_bytes", counting)
    assert [docs.link_facts(f, f.name, [tmp_path]) for f in files] == first and parsed == []
    files[5].write_text("# Renamed\n\nNo links now.\n")
    again = [docs.link_facts(f, f.name, [tmp_path]) for f in files]
    assert parsed == ["n5.md"] and again[5].links == () and again[6] is first[6]
    docs.set_buffer(files[6], "file:///n6.md", 3, "# Six\n\n[[Wiki]]\n")  # the buffer wins
    assert [lk.kind for lk in docs.link_facts(files[6], "n6.md", [tmp_path]).links] == ["wiki"]
    assert docs.link_facts(tmp_path.parent / "outside.md", "x", [tmp_path]) is None


def _fenced_blocks(md: str) -> list[list[str]]:
    """The fenced blocks of ``md``, each as its lines (fences included)."""
    blocks, cur = [], None
    for ln in md.split("\n"):
        if ln.lstrip().startswith(("```", "~~~")):
            if cur is None:
                cur = [ln]
            else:
                blocks.append(cur + [ln])
                cur = None
        elif cur is not None:
            cur.append(ln)
    assert cur is None, f"a fence left open: {md!r}"
    return blocks


def test_hover_cuts_before_a_long_fence_never_inside_it():
    prose = "Pick the replica with the smallest lag, prefer the same zone as the workers. " * 4
    block = ["```bash"] + [
        f"patronictl -c /etc/patroni/prod-{i}.yml switchover \\" for i in range(14)
    ]
    block += ["  --force", "```"]
    text = "# T\n\n## Promote\n\n" + prose + "\n\n" + "\n".join(block) + "\n\nAfter it.\n"
    doc = parse_text(text)
    md = hover_section(doc, doc.headings[1], "t.md", "file:///t.md").contents.value  # type: ignore[union-attr]
    assert "patronictl" not in md  # the whole block is left out, not cut mid-command
    assert _fenced_blocks(md) == []
    assert "_…16 more lines_" in md  # 15 in the block, "After it." (no blank, no fence)
    assert md.count("](") == 0  # no link of its own: the link hovered is the one way there
    assert md.endswith("`t.md:3`")


def test_hover_shows_a_fence_that_opens_the_body_up_to_a_command_end():
    block = ["```sh"] + [f"step {i} \\" if i % 5 == 4 else f"step {i}" for i in range(30)] + ["```"]
    doc = parse_text("# T\n\n## Run\n\n" + "\n".join(block) + "\n")
    md = hover_section(doc, doc.headings[1], "t.md", "file:///t.md").contents.value  # type: ignore[union-attr]
    (shown,) = _fenced_blocks(md)
    assert shown[0] == "```sh" and shown[-1] == "```"
    assert not shown[-2].endswith("\\")  # never a cut in a continued command
    assert shown[1:-1] == block[1 : len(shown) - 1]  # the block's first lines, in order
    assert f"_…{30 - (len(shown) - 2)} more lines_" in md


def test_hover_shows_a_short_fence_whole():
    text = "# T\n\n## S\n\nRun this:\n\n```\nmake\nmake install\n```\n\nDone.\n"
    doc = parse_text(text)
    md = hover_section(doc, doc.headings[1], "t.md", "file:///t.md").contents.value  # type: ignore[union-attr]
    assert _fenced_blocks(md) == [["```", "make", "make install", "```"]]
    assert "Done." in md and "more line" not in md
