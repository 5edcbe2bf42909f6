"""Link parsing and resolution (index/links/links.py): pure, no LSP."""

from __future__ import annotations

import pytest
from lsp_support import FIXTURES, fixture_queries

from mdseek.index.links.context import anchor_context
from mdseek.index.links.links import find_heading, find_links, link_at, resolve
from mdseek.index.text.parse import parse_bytes, parse_text

FILES = [p.relative_to(FIXTURES).as_posix() for p in FIXTURES.rglob("*.md")]


def exists(rel: str) -> bool:
    return (FIXTURES / rel).is_file()


DOC = """# T

see [a *b*][r] and [c](x%20y.md#z) `[[no]]` [[yes#H]] ![i](p.md)
> quote [q](../up.md) and
> [[wiki|alias]] <https://x.y> [s]

- item [[#Severity levels]]
  more [multi
  line](m.md)

```
[[fenced]] [f](f.md)
```

    [[indented code]] [g](g.md)

| a | b |
|---|---|
| [t](t.md#x) | [[tw]] |

[r]: other.md#q "t"
[s]: <sp ace.md>
"""


def test_finds_links_with_positions_never_in_code():
    links = find_links(DOC)
    lines = DOC.split("\n")
    got = [(k.kind, k.path, k.anchor, k.line, lines[k.line][k.start : k.start + 3]) for k in links]
    assert got == [
        ("markdown", "other.md", "q", 2, "[a "),
        ("markdown", "x y.md", "z", 2, "[c]"),
        ("wiki", "yes", "H", 2, "[[y"),
        ("markdown", "../up.md", None, 3, "[q]"),
        ("wiki", "wiki", None, 4, "[[w"),
        ("markdown", "sp ace.md", None, 4, "[s]"),
        ("wiki", "", "Severity levels", 6, "[[#"),
        ("markdown", "m.md", None, 7, "[mu"),
        ("markdown", "t.md", "x", 18, "[t]"),
        ("wiki", "tw", None, 18, "[[t"),
    ]
    assert [k.reference for k in links if k.kind == "markdown"] == [
        True,
        False,
        False,
        True,
        False,
        False,
    ]
    multi = next(k for k in links if k.path == "m.md")
    assert (multi.end_line, lines[multi.end_line][: multi.end]) == (8, "  line](m.md)")
    assert next(k for k in links if k.kind == "wiki" and k.path == "wiki").text == "alias"
    assert all("fenced" not in k.href and "indented" not in k.href for k in links)
    assert not [k for k in links if k.path in ("f.md", "g.md", "p.md")]  # code and images


def test_link_at_and_columns_are_code_points():
    doc = "# É\n\nCafé ☕ [x](a.md#b) and 😀 [[n]]\n"
    links = find_links(doc)
    line = doc.split("\n")[2]
    assert line[links[0].start] == "[" and line[links[0].end - 1] == ")"
    assert line[links[1].start : links[1].end] == "[[n]]"
    assert link_at(links, 2, links[0].start + 2) is links[0]
    assert link_at(links, 2, 0) is None


@pytest.mark.parametrize(
    "entry", fixture_queries()["links"], ids=lambda e: f"{e['kind']}:{e['path']}:{e['line']}"
)
def test_fixture_links_resolve(entry):
    doc = parse_bytes((FIXTURES / entry["path"]).read_bytes(), entry["path"])
    on_line = [k for k in find_links(doc) if k.line == entry["line"]]
    assert on_line
    targets = [resolve(k, entry["path"], exists, FILES) for k in on_line]
    if entry["kind"] == "broken_file":
        assert any(not t.exists and t.path for t in targets)
        return
    t = next(t for t in targets if t.path == entry["target_path"])
    assert t.exists
    if entry["kind"] == "broken_heading":
        tdoc = parse_bytes((FIXTURES / t.path).read_bytes(), t.path)
        assert t.anchor and find_heading(tdoc, t.anchor, t.by_text) is None
        return
    if entry["target_heading"] is None:
        assert t.anchor is None
        return
    tdoc = parse_bytes((FIXTURES / t.path).read_bytes(), t.path)
    h = find_heading(tdoc, t.anchor, t.by_text)
    assert h is not None and (h.text, h.line) == (entry["target_heading"], entry["target_line"])


def test_links_that_climb_out_of_the_workspace_are_outside():
    doc = "[a](../../../../etc/passwd) [b](/abs.md) [[../../../x]]\n"
    ts = [resolve(k, "handbook/notes/n.md", exists, FILES) for k in find_links(doc)]
    assert ts[0].outside and ts[0].path is None
    assert ts[1].path == "abs.md"  # root-relative, GitHub style
    assert ts[2].path is None and ts[2].outside


def test_external_and_extensionless_links():
    doc = "[w](https://example.com/a.md#x) [m](mailto:a@b) [e](engineering-onboarding)\n"
    ts = [resolve(k, "handbook/onboarding/x.md", exists, FILES) for k in find_links(doc)]
    assert ts[0].external and ts[1].external
    assert ts[2].path == "handbook/onboarding/engineering-onboarding.md" and ts[2].exists


def test_wiki_resolution_prefers_the_nearest_file():
    files = ["a/note.md", "b/note.md", "b/c/other.md"]
    ex = set(files).__contains__
    (k,) = find_links("[[note]]")
    assert resolve(k, "b/c/other.md", ex, files).path == "b/note.md"
    assert resolve(k, "a/x.md", ex, files).path == "a/note.md"
    (k,) = find_links("[[missing]]")
    t = resolve(k, "a/x.md", ex, files)
    assert not t.exists and t.path == "a/missing.md"


def test_find_heading_by_slug_text_and_duplicates():
    doc = parse_text("# T\n\n## Verification\n\nx\n\n## Verification\n\n## Café budget\n")
    assert find_heading(doc, "verification-1").line == 6
    assert find_heading(doc, "Verification", by_text=True).line == 2
    assert find_heading(doc, "café-budget").text == "Café budget"
    assert find_heading(doc, "nope") is None


def test_find_heading_by_an_obsidian_heading_path():
    """[[note#Section#Subsection]] (the Obsidian help vault writes 4 of them):
    the heading at the end of the path, the one under the first part."""
    doc = parse_text("# T\n\n## A\n\n### Mobile\n\n## B\n\n### Mobile\n\n### Only here\n")
    assert find_heading(doc, "B#Mobile", by_text=True).line == 8
    assert find_heading(doc, "A#Mobile", by_text=True).line == 4
    assert find_heading(doc, "Nope#Only here", by_text=True).line == 10  # the last part anywhere
    assert find_heading(doc, "B#Nope", by_text=True) is None


def test_anchor_context():
    c = anchor_context("see [x](../a.md#pro", 19)
    assert (c.kind, c.path, c.prefix, c.start) == ("markdown", "../a.md", "pro", 16)
    c = anchor_context("[[note#Prom", 11)
    assert (c.kind, c.path, c.prefix) == ("wiki", "note", "Prom")
    c = anchor_context("[x](#", 5)
    assert (c.kind, c.path, c.prefix) == ("markdown", "", "")
    assert anchor_context("plain # text", 7) is None


def test_inline_pass_only_where_a_bracket_is_finds_the_same_links(monkeypatch):
    """find_links parses inline markup only in paragraphs holding a ``[``; a
    full inline pass over every fixture and the tricky document finds the same."""
    from markdown_it.rules_core.inline import inline as full_inline

    from mdseek.index.links import links as links_mod

    texts = [DOC, "Escaped \\[x](y.md) and \\[[w]] but [z](z.md)\n\n<http://a.b> `[c](c.md)`\n"]
    texts += [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.rglob("*.md"))]
    selective = [find_links(t) for t in texts]
    assert sum(map(len, selective)) > 50  # the fixtures link to each other
    full = links_mod._parser.__wrapped__()  # a fresh parser, then the stock rule
    full.core.ruler.at("inline", full_inline)
    monkeypatch.setattr(links_mod, "_parser", lambda: full)
    assert [find_links(t) for t in texts] == selective
