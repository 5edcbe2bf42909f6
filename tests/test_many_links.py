"""A file of many links costs time linear in its size, and past MAX_LINKS its
links are not read (issue 40: 200,000 links in a 5 MB file took over 30 s for
a document's links, its diagnostics, a hover and a rename). Counts, not clocks."""

from __future__ import annotations

import sys

import pytest
from test_rename import Corpus, apply

from mdseek.index.links import links as links_mod
from mdseek.index.links import rename as rename_mod
from mdseek.index.links.edits import RenameError
from mdseek.index.links.links import LinkList, find_links
from mdseek.index.links.move import Move, move_files
from mdseek.index.links.rename import rename_heading
from mdseek.index.links.sites import link_sites
from mdseek.index.text.parse import parse_text


@pytest.fixture
def max_links(monkeypatch):
    monkeypatch.setattr(links_mod, "MAX_LINKS", 50)
    return 50


def test_past_the_limit_the_rest_of_a_files_links_are_not_read(max_links):
    # one paragraph per line, and all of them in one paragraph (one inline parse)
    apart = "# T\n\n" + "".join(f"[l{i}](#t) and [[w{i}]]\n\n" for i in range(80))
    together = "# T\n\n" + "".join(f"[l{i}](#t) " for i in range(80)) + "\n"
    for text in (apart, together):
        found = find_links(parse_text(text, "x.md"))
        assert isinstance(found, LinkList) and found.cut
        assert max_links // 3 <= len(found) <= max_links  # a wiki link holds two [
        assert found[0].text == "l0" and found[0].line == 2
        sites = link_sites(parse_text(text, "x.md"))
        assert sites.cut and len([s for s in sites if s.kind == "inline"]) <= max_links
    small = find_links(parse_text("# T\n\n[a](#t) [[b]]\n", "x.md"))
    assert not small.cut and [lk.text for lk in small] == ["a", "b"]


def test_a_rename_or_move_that_would_rewrite_a_file_past_the_limit_is_refused(max_links):
    many = "# T\n\n" + "".join(f"[l{i}](a.md#alpha)\n\n" for i in range(60))
    texts = {"a.md": "# Alpha\n\ntext\n", "many.md": many, "b.md": "[one](a.md#alpha)\n"}
    c = Corpus(texts)
    with pytest.raises(RenameError, match="many.md has more than 50 links"):
        rename_heading(c, "a.md", c.doc("a.md"), c.doc("a.md").headings[0], "Beta")
    with pytest.raises(RenameError, match="many.md has more than 50 links"):
        move_files(c, [Move("a.md", "z.md")])
    del texts["many.md"]
    c = Corpus(texts)
    out = rename_heading(c, "a.md", c.doc("a.md"), c.doc("a.md").headings[0], "Beta")
    assert apply(texts["b.md"], out.edits["b.md"]) == "[one](a.md#beta)\n"


def _lines_run(fn, *args) -> tuple[object, int]:
    """``fn(*args)`` and the number of lines of index/links/links.py it ran."""
    target = links_mod.__file__
    n = 0

    def trace(frame, event, arg):
        nonlocal n
        if frame.f_code.co_filename != target:
            return None
        if event == "line":
            n += 1
        return trace

    sys.settrace(trace)
    try:
        out = fn(*args)
    finally:
        sys.settrace(None)
    return out, n


def test_links_of_a_long_paragraph_cost_lines_linear_in_the_links():
    """A link's line and column were found by scanning every line of its
    paragraph, and each wiki link was checked against every code span of it:
    quadratic in a paragraph of links on lines of their own."""

    def para(n: int) -> str:
        return "# T\n\n" + "".join(f"`c{i}` [l{i}](#t) [[w{i}]]\n" for i in range(n))

    d1, d2 = parse_text(para(400), "x.md"), parse_text(para(800), "x.md")
    (_, n1), (f2, n2) = _lines_run(find_links, d1), _lines_run(find_links, d2)
    assert len(f2) == 1600 and (f2[-1].line, f2[-1].start) == (801, 18)
    assert n2 < 2.3 * n1, (n1, n2)  # twice the links: about twice the work


def test_a_heading_rename_looks_each_anchor_up_once(monkeypatch):
    """Each link's anchor was found by scanning the headings, and its heading's
    place by another scan: links times headings."""
    calls = []
    real = links_mod.find_heading

    def counting(*a, **kw):
        calls.append(a[1])
        return real(*a, **kw)

    monkeypatch.setattr(links_mod, "find_heading", counting)
    monkeypatch.setattr(rename_mod, "find_heading", counting, raising=False)
    heads = "".join(f"## Part {i}\n\ntext\n\n" for i in range(300))
    body = "".join(f"[p{i}](#part-{i}) " for i in range(300))
    text = "# Top\n\n" + body + "\n\n" + heads
    c = Corpus({"a.md": text})
    doc = c.doc("a.md")
    out = rename_heading(c, "a.md", doc, doc.headings[5], "Renamed")
    new = apply(text, out.edits["a.md"])
    assert "[p4](#renamed)" in new and "## Renamed\n" in new and "[p5](#part-5)" in new
    assert len(calls) <= 5, len(calls)  # was two scans a link: 600


def test_a_files_diagnostics_read_each_link_target_once(tmp_path, monkeypatch):
    """The target of every link was looked up again for each link (a path
    built and a file stat'ed: 200,000 times for one 5 MB file)."""
    import asyncio

    from mdseek.lsp.server.diagnostics import link_diagnostics
    from mdseek.lsp.server.roots import Root
    from mdseek.lsp.server.workspace import Workspace

    (tmp_path / "b.md").write_text("# B\n\n## One\n\n## Two\n")
    text = "# A\n\n" + "".join(
        f"[x{i}](b.md#{['one', 'two', 'three'][i % 3]})\n\n" for i in range(300)
    )
    (tmp_path / "a.md").write_text(text)
    loop = asyncio.new_event_loop()
    try:
        ws = Workspace()
        ws.roots.append(Root(tmp_path.resolve(), ws.settings, 1, loop))
        read = []
        facts = ws.docs.link_facts
        monkeypatch.setattr(ws.docs, "link_facts", lambda p, *a: read.append(p) or facts(p, *a))
        diags = link_diagnostics(ws, (tmp_path / "a.md").resolve())
    finally:
        loop.close()
    assert diags is not None and len(diags) == 100
    assert {d.message for d in diags} == {"No heading '#three' in b.md"}
    assert diags[0].range.start.line == 6
    assert len(read) == 2, len(read)  # a.md and b.md, once each (was 301)


def test_a_file_without_a_bracket_is_not_parsed_for_links(monkeypatch):
    """Every link, image and reference definition starts with "[": a 5 MB
    paragraph file paid two full markdown-it passes for none."""
    from mdseek.index.links import sites as sites_mod

    parsed = []
    for mod, name in ((links_mod, "_parser_for"), (sites_mod, "_site_parser_for")):
        real = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda t, real=real: parsed.append(1) or real(t))
    doc = parse_text("# Prose\n\nNo link here (none), `code` and <b>html</b>.\n", "x.md")
    assert find_links(doc) == [] and link_sites(doc) == []
    assert parsed == []
    assert len(find_links(parse_text("# T\n\n[a](#t)\n", "y.md"))) == 1 and parsed == [1]


def test_a_rename_from_a_link_reads_its_files_sites_once(monkeypatch):
    """A rename started on a link asked for its own file's sites twice (the
    one under the cursor, then the edits): a full markdown-it pass each."""
    from mdseek.index.links import sites as sites_mod
    from mdseek.index.links.rename import rename_target

    parsed = []
    real = sites_mod._site_parser_for
    monkeypatch.setattr(sites_mod, "_site_parser_for", lambda t: parsed.append(1) or real(t))
    text = "# Top\n\n## Part\n\nSee [the part](#part).\n"
    c = Corpus({"a.md": text})
    doc = c.doc("a.md")
    t = rename_target(c, "a.md", doc, 4, 6)
    assert t is not None and t.heading is not None and t.heading.text == "Part"
    out = rename_heading(c, "a.md", doc, t.heading, "Piece")
    assert apply(text, out.edits["a.md"]) == "# Top\n\n## Piece\n\nSee [the part](#piece).\n"
    assert parsed == [1]


def test_a_rename_looks_for_a_tag_on_the_cursors_line_only(tmp_path, monkeypatch):
    """Whether the cursor is on a #tag was answered by finding every tag of
    the file (every line of a 5 MB file, for one heading's rename)."""
    import asyncio

    from lsprotocol import types

    from mdseek.lsp.server import rename as lsp_rename
    from mdseek.lsp.server.roots import Root
    from mdseek.lsp.server.workspace import Workspace

    text = "# Top #topic\n\n" + "".join(f"Line {i} #tag{i}\n\n" for i in range(50))
    (tmp_path / "a.md").write_text(text)
    scanned = []
    real = lsp_rename.find_tags
    monkeypatch.setattr(lsp_rename, "find_tags", lambda d: scanned.append(1) or real(d))
    loop = asyncio.new_event_loop()
    try:
        ws = Workspace()
        ws.roots.append(Root(tmp_path.resolve(), ws.settings, 1, loop))
        uri = (tmp_path / "a.md").resolve().as_uri()
        got = lsp_rename.prepare_sync(ws, uri, types.Position(line=0, character=8))
        assert got is not None and got.placeholder == "topic"  # the tag, not the heading
        got = lsp_rename.prepare_sync(ws, uri, types.Position(line=0, character=2))
        assert got is not None and got.placeholder == "Top #topic"
    finally:
        loop.close()
    assert scanned == []


def test_a_rename_in_a_file_past_the_limit_is_refused_before_its_new_text_is_parsed(
    max_links, monkeypatch
):
    """The renamed file's new text was parsed (a second or more at 5 MB) before
    its links were found too many to rewrite."""
    parsed = []
    real = rename_mod.parse_text
    monkeypatch.setattr(rename_mod, "parse_text", lambda *a: parsed.append(1) or real(*a))
    text = "# Alpha\n\n" + "".join(f"[l{i}](#alpha)\n\n" for i in range(60))
    c = Corpus({"a.md": text})
    doc = c.doc("a.md")
    with pytest.raises(RenameError, match="a.md has more than 50 links"):
        rename_heading(c, "a.md", doc, doc.headings[0], "Beta")
    assert parsed == []


def test_a_cancelled_references_pass_stops_at_the_next_file(tmp_path, monkeypatch):
    """References and the lenses' counting pass read every file of the folder
    for links into one: a cancelled request read on to the last file."""
    import asyncio
    import contextvars

    from mdseek.index.api import Cancelled, CancelToken
    from mdseek.lsp.server import worker
    from mdseek.lsp.server.navigation import heading_references
    from mdseek.lsp.server.roots import Root
    from mdseek.lsp.server.workspace import Workspace

    (tmp_path / "target.md").write_text("# Target\n\n## Part\n")
    for i in range(20):
        (tmp_path / f"n{i:02}.md").write_text(f"# N{i}\n\n[t](target.md#part)\n")
    loop = asyncio.new_event_loop()
    try:
        ws = Workspace()
        ws.roots.append(Root(tmp_path.resolve(), ws.settings, 1, loop))
        path = (tmp_path / "target.md").resolve()
        doc = ws.docs.parsed(path, "target.md", ws.root_paths)
        assert doc is not None
        assert len(heading_references(ws, path, doc)[2]) == 20  # uncancelled: every link
        token, read = CancelToken(), []
        real = ws.docs.parsed

        def parsed(p, *a):
            read.append(p.name)
            if len(read) == 3:
                token.cancelled = True  # the client cancels while the third file is read
            return real(p, *a)

        monkeypatch.setattr(ws.docs, "parsed", parsed)

        def run():
            worker._TOKEN.set(token)
            return heading_references(ws, path, doc)

        with pytest.raises(Cancelled):
            contextvars.copy_context().run(run)
    finally:
        loop.close()
    assert len(read) == 3, read
