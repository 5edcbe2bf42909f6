"""The pure rename engine (index/links/: sites.py, rename.py, move.py) on small
hand-written documents: where link targets are written, heading text spans, and
the edits of a heading rename or a file move. Expected values are written by hand."""

from __future__ import annotations

import pytest

from mdseek.index.links.edits import RenameError
from mdseek.index.links.links import find_links
from mdseek.index.links.move import Move, move_files, new_file_path
from mdseek.index.links.rename import (
    heading_source,
    heading_span,
    rename_alias,
    rename_heading,
    rename_target,
)
from mdseek.index.links.sites import link_sites
from mdseek.index.text.aliases import AliasMap, doc_aliases
from mdseek.index.text.parse import parse_bytes, parse_text


class Corpus:
    def __init__(self, texts: dict[str, str | bytes]):
        self.texts = texts
        self.files = [f for f in texts if f.endswith(".md")]

    def doc(self, rel: str):
        t = self.texts[rel]
        return parse_bytes(t, rel) if isinstance(t, bytes) else parse_text(t, rel)

    def text(self, rel: str):
        t = self.texts[rel]
        return t.decode("utf-8", "replace") if isinstance(t, bytes) else t

    def links(self, rel: str, doc):
        return find_links(doc)

    def exists(self, rel: str) -> bool:
        return rel in self.texts

    @property
    def aliases(self) -> AliasMap:
        return AliasMap({f: doc_aliases(self.doc(f)) for f in self.files}, self.files)


def apply(text: str, edits) -> str:
    lines = text.split("\n")

    def offset(line: int, col: int) -> int:
        return sum(len(ln) + 1 for ln in lines[:line]) + col

    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        a, b = offset(e.line, e.col), offset(e.end_line, e.end_col)
        text = text[:a] + e.text + text[b:]
    return text


DOC = """# T

Inline [a](x.md#h "title"), image ![i](img/p.png), angle [b](<a b.md#h>),
code `[c](x.md#h)`, autolink <https://e.x/x.md#h>, url [u](https://e.x/x.md#h).

> quoted [q](x.md#h)

- item [l](x.md#h) and [[x#H|alias]]

[ref]: x.md#h 'title'

```
[f](x.md#h) [[x#H]]
```

    [i](x.md#h)
"""


def test_link_sites_every_form_and_nothing_in_code():
    sites = [(s.kind, s.line, s.raw) for s in link_sites(parse_text(DOC, "d.md"))]
    assert sites == [
        ("inline", 2, "x.md#h"),
        ("image", 2, "img/p.png"),
        ("inline", 2, "<a b.md#h>"),
        ("inline", 3, "https://e.x/x.md#h"),  # written, but resolves to no file
        ("inline", 5, "x.md#h"),
        ("inline", 7, "x.md#h"),
        ("wiki", 7, "x#H"),
        ("definition", 9, "x.md#h"),
    ]


def test_renaming_rewrites_links_in_quotes_lists_and_definitions():
    x = "# X\n\n## H ##\n\ntext\n"
    c = Corpus({"d.md": DOC, "x.md": x, "a b.md": "# H\n"})
    out = rename_heading(c, "x.md", c.doc("x.md"), c.doc("x.md").headings[1], "New *one*")
    assert apply(x, out.edits["x.md"]) == "# X\n\n## New *one* ##\n\ntext\n"  # closing kept
    got = apply(DOC, out.edits["d.md"]).split("\n")
    assert (
        got[2] == 'Inline [a](x.md#new-one "title"), image ![i](img/p.png), angle [b](<a b.md#h>),'
    )
    assert got[3] == DOC.split("\n")[3]  # code span, autolink and URL untouched
    assert got[5] == "> quoted [q](x.md#new-one)"
    assert got[7] == "- item [l](x.md#new-one) and [[x#New one|alias]]"
    assert got[9] == "[ref]: x.md#new-one 'title'"
    assert got[11:] == DOC.split("\n")[11:]  # fence and indented code untouched


def test_setext_heading_and_its_source_text():
    text = "Intro\n\nUsing `foo`\nand bar\n-------\n\n[s](#using-fooand-bar)\n"
    doc = parse_text(text, "s.md")
    h = doc.headings[0]
    assert heading_span(doc, h) == (2, 0, 3, 7)
    assert heading_source(doc, h) == "Using `foo` and bar"
    c = Corpus({"s.md": text})
    out = rename_heading(c, "s.md", doc, h, "Short")
    assert apply(text, out.edits["s.md"]) == "Intro\n\nShort\n-------\n\n[s](#short)\n"


def test_a_wiki_link_gets_the_slug_when_the_name_cannot_be_written_in_one():
    c = Corpus({"a.md": "# A\n\n## B\n", "n.md": "[[a#B]]\n"})
    out = rename_heading(c, "a.md", c.doc("a.md"), c.doc("a.md").headings[1], "x | y")
    assert apply("[[a#B]]\n", out.edits["n.md"]) == "[[a#x--y]]\n"


def test_errors_name_the_problem():
    c = Corpus({"a.md": "# A\n\n## B\n\n## C\n"})
    doc = c.doc("a.md")
    with pytest.raises(RenameError, match="the heading 'C' .* #c"):
        rename_heading(c, "a.md", doc, doc.headings[1], "c")
    with pytest.raises(RenameError, match="one line"):
        rename_heading(c, "a.md", doc, doc.headings[1], "b\nc")
    setext = Corpus({"s.md": "Title\n=====\n"})
    with pytest.raises(RenameError, match="would not stay"):  # "- item" over "=====": a list
        rename_heading(setext, "s.md", setext.doc("s.md"), setext.doc("s.md").headings[0], "- item")
    with pytest.raises(RenameError, match="outside the workspace"):
        new_file_path("a.md", "b.md", "b.md", "markdown", "../../b.md")
    with pytest.raises(RenameError, match="empty"):
        new_file_path("a.md", "b.md", "b.md", "markdown", " ")
    assert new_file_path("d/a.md", "d/b.md", "b.md", "markdown", "c%20d") == "d/c d.md"
    assert new_file_path("a.md", "d/b.md", "b", "wiki", "c") == "d/c.md"


def test_a_file_that_is_not_utf8_is_skipped_and_named():
    c = Corpus(
        {"a.md": "# A\n\n## B\n", "bad.md": b"[x](a.md#b) caf\xe9\n", "ok.md": "[y](a.md#b)\n"}
    )
    out = rename_heading(c, "a.md", c.doc("a.md"), c.doc("a.md").headings[1], "D")
    assert "bad.md" not in out.edits and out.skipped == [("bad.md", "it is not valid UTF-8")]
    assert apply("[y](a.md#b)\n", out.edits["ok.md"]) == "[y](a.md#d)\n"


def test_a_heading_or_alias_of_a_file_that_is_not_utf8_is_not_renamed():
    # Its own edit would be saved as UTF-8: every Latin-1 byte of the file lost.
    c = Corpus(
        {
            "bad.md": b"---\naliases: [Old]\n---\n# Caf\xe9\n\n## B\n",
            "n.md": "[x](bad.md#b) [[Old]]\n",
        }
    )
    doc = c.doc("bad.md")
    with pytest.raises(RenameError, match=r"^bad\.md is not valid UTF-8: .*left as it is$"):
        rename_heading(c, "bad.md", doc, doc.headings[1], "D")
    with pytest.raises(RenameError, match=r"^bad\.md is not valid UTF-8"):
        rename_alias(c, "bad.md", doc, "Old", "New")


class CountingCorpus(Corpus):
    """Counts the files a rename parses: the cost that grows with the folder."""

    def __init__(self, texts):
        super().__init__(texts)
        self.parsed: set[str] = set()
        self.aliases_read = super().aliases  # the editor keeps them: not counted
        self.parsed.clear()

    def doc(self, rel: str):
        self.parsed.add(rel)
        return super().doc(rel)

    @property
    def aliases(self) -> AliasMap:
        return self.aliases_read


def test_a_move_parses_only_the_files_that_can_link_the_moved_note():
    # Every note holds the letter "m" and the word "n0" inside longer words:
    # a move to "x/m.md" used to parse all of them (0.6 s in 1,000 notes).
    texts = {
        f"n{i}.md": f"# Note {i}\n\nSome more words, n0x and xn0 here.\n" for i in range(1, 60)
    }
    texts["n0.md"] = "# Zero\n\n[back](a.md)\n"
    texts["a.md"] = "[to zero](n0.md#zero) and [[n0]] and [enc](.%2Fn0.md)\n"
    texts["b.md"] = "[[M]] names another note: after the move it would mean this one\n"
    c = CountingCorpus(texts)
    out = move_files(c, [Move("n0.md", "x/m.md")])
    assert c.parsed == {"n0.md", "a.md", "b.md"}
    assert apply(texts["a.md"], out.edits["a.md"]) == (
        "[to zero](x/m.md#zero) and [[m]] and [enc](x/m.md)\n"
    )
    assert apply(texts["n0.md"], out.edits["n0.md"]) == "# Zero\n\n[back](../a.md)\n"


def test_moving_a_file_rewrites_links_both_ways_in_their_own_style():
    texts = {
        "a.md": "[b](./sub/b.md) [noext](sub/b) [root](/sub/b.md#x) [[b]] [self](#top) ![p](p.png)\n",
        "sub/b.md": "[a](../a.md) [[a]] ![p](../p.png)\n",
        "p.png": "",
    }
    c = Corpus(texts)
    out = move_files(c, [Move("sub/b.md", "other/deeper/c.md")])
    assert apply(texts["a.md"], out.edits["a.md"]) == (
        "[b](./other/deeper/c.md) [noext](other/deeper/c) [root](/other/deeper/c.md#x)"
        " [[c]] [self](#top) ![p](p.png)\n"
    )
    assert apply(texts["sub/b.md"], out.edits["sub/b.md"]) == (
        "[a](../../a.md) [[a]] ![p](../../p.png)\n"
    )


def test_rename_target_on_links():
    texts = {"a.md": "# A\n\n## Part two\n", "n.md": "See [x](a.md#part-two) and [[a]].\n"}
    c = Corpus(texts)
    n = c.doc("n.md")
    on_frag = rename_target(c, "n.md", n, 0, 16)
    assert (on_frag.kind, on_frag.placeholder, on_frag.span) == (
        "heading",
        "Part two",
        (0, 13, 0, 21),
    )
    on_path = rename_target(c, "n.md", n, 0, 9)
    assert (on_path.kind, on_path.placeholder, on_path.span) == ("file", "a.md", (0, 8, 0, 12))
    assert rename_target(c, "n.md", n, 0, 1) is None  # plain text
    wiki = rename_target(c, "n.md", n, 0, 30)
    assert (wiki.kind, wiki.path, wiki.placeholder) == ("file", "a.md", "a")


def test_links_written_percent_encoded_or_escaped_are_found():
    texts = {
        "notes/café menu.md": "# Menu\n\n## Hot\n",
        "a.md": "[x](notes/caf%C3%A9%20menu.md#hot) [y](<notes/café menu.md#hot>)\n",
        "b.md": "[z](notes/caf\\%C3\\%A9%20menu.md#hot)\n",  # markdown escapes in a destination
        "c.md": "nothing here\n",
    }
    c = Corpus(texts)
    doc = c.doc("notes/café menu.md")
    out = rename_heading(c, "notes/café menu.md", doc, doc.headings[1], "Cold")
    assert apply(texts["a.md"], out.edits["a.md"]) == (
        "[x](notes/caf%C3%A9%20menu.md#cold) [y](<notes/café menu.md#cold>)\n"
    )
    assert apply(texts["b.md"], out.edits["b.md"]) == "[z](notes/caf\\%C3\\%A9%20menu.md#cold)\n"
    assert "c.md" not in out.edits
