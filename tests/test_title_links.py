"""Wiki links reaching a note by its title (marksman's rule, after Obsidian's
file name and the front-matter aliases): the resolver's order, a title two notes
share leading nowhere, the cheap title reading agreeing with the parser, the
check and the rename engine following. Expected values are written by hand."""

from __future__ import annotations

import pytest
from test_link_check import Facts, Folder, head, wiki
from test_rename import Corpus, apply

from mdseek.index.engine.linked import LinkedWith, Span
from mdseek.index.links.check import link_problems
from mdseek.index.links.links import find_links, resolve
from mdseek.index.links.move import Move, move_files
from mdseek.index.links.rename import rename_heading
from mdseek.index.text.aliases import AliasMap, doc_aliases, doc_title, text_title
from mdseek.index.text.parse import parse_text


class TitledCorpus(Corpus):
    @property
    def aliases(self) -> AliasMap:
        docs = {f: self.doc(f) for f in self.files}
        return AliasMap(
            {f: doc_aliases(d) for f, d in docs.items()},
            self.files,
            {f: doc_title(d) for f, d in docs.items()},
        )


FILES = {
    "doc2.md": "# Doc 2\n\n## Sub\n",
    "notes/d1.md": "---\ntitle: Doc 1\n---\n## Sub\n",
    "setup.md": "# Setup\n",
    "other.md": "# setup\n",  # a file name wins over a title
    "x.md": "---\naliases: [Shared title]\n---\n# X\n",
    "y.md": "# Shared title\n",  # an alias wins over a title
    "p.md": "# Twice\n",
    "q.md": "# twice\n",  # a title two notes share
    "untitled.md": "text\n",  # its title is its file name only: not a title
    "src.md": (
        "[[Doc 2]] [[doc-2]] [[  DOC 2 |t]] [[Doc 2#Sub]] [[Doc 1#Sub]] [[setup]]"
        " [[Shared title]] [[Twice]] [[doc2]] [[Untitled]] [[untitled-x]]\n"
    ),
}


def test_a_wiki_link_reaches_a_note_by_its_title_after_file_names_and_aliases():
    corpus = TitledCorpus(dict(FILES))
    got = [
        (t.path, t.anchor, t.exists, t.by_title, t.ambiguous)
        for t in (
            resolve(lk, "src.md", corpus.exists, corpus.files, corpus.aliases)
            for lk in find_links(corpus.doc("src.md"))
        )
    ]
    assert got == [
        ("doc2.md", None, True, True, ()),
        ("doc2.md", None, True, True, ()),  # the title's slug
        ("doc2.md", None, True, True, ()),
        ("doc2.md", "Sub", True, True, ()),
        ("notes/d1.md", "Sub", True, True, ()),  # a front-matter title
        ("setup.md", None, True, False, ()),
        ("x.md", None, True, False, ()),
        (None, None, False, True, ("p.md", "q.md")),
        ("doc2.md", None, True, False, ()),
        ("untitled.md", None, True, False, ()),
        ("untitled-x.md", None, False, False, ()),
    ]


def test_the_check_says_a_shared_title_is_ambiguous_and_a_title_link_is_fine():
    aliases = AliasMap(
        {}, ["n1.md", "n2.md", "b.md"], {"n1.md": "Same", "n2.md": "same", "b.md": "Bee"}
    )
    facts = Facts([head("Intro", 0)])
    folder = Folder(
        {"a.md": Facts([]), "n1.md": facts, "n2.md": facts, "b.md": facts}, aliases=aliases
    )
    (p,) = link_problems([wiki("Same", line=3), wiki("Bee#Intro"), wiki("bee")], folder)
    assert p.message == "Ambiguous link: 'Same' is the title of n1.md and n2.md"
    (p,) = link_problems([wiki("Bee#Nope")], folder)
    assert "Nope" in p.message and "b.md" in p.message


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("# Doc 2\n\ntext\n", "Doc 2"),
        ("Doc 2\n=====\n\ntext\n", "Doc 2"),
        ("---\ntitle: From front\n---\n# Heading\n", "From front"),
        ("---\ntags: [a]\n---\n\n# After front\n", "After front"),
        ("```sh\n# a comment\n```\n\n# Real\n", "Real"),
        ("intro\n\n## Second level\n\n# Late\n", None),  # the first heading is no H1
        ("just text\n", None),
        ("", None),
        ("text\n---\n", None),  # a setext H2
    ],
)
def test_the_cheap_title_reading_agrees_with_the_parser(text: str, want: str | None):
    assert doc_title(parse_text(text, "n.md")) == want
    assert text_title(text, "n.md") == want


def test_a_move_keeps_a_title_link_as_it_is():
    corpus = TitledCorpus(dict(FILES))
    out = move_files(corpus, [Move("doc2.md", "archive/old.md")])
    edits = out.edits.get("src.md", [])
    # only [[doc2]] (a file name) is rewritten; the title links still lead there
    assert [(e.col, e.end_col, e.text) for e in edits] == [(102, 106, "old")]
    # [[setup]] reached setup.md by its file name: after the move the title
    # (# Setup) would reach it too, yet the link follows the file name
    corpus = TitledCorpus({"setup.md": "# Setup\n", "src.md": "See [[setup]].\n"})
    out = move_files(corpus, [Move("setup.md", "guide/install.md")])
    assert [(e.col, e.end_col, e.text) for e in out.edits["src.md"]] == [(6, 11, "install")]


def test_renaming_the_title_heading_renames_the_links_that_reach_the_note_by_it():
    files = {
        "doc1.md": "# Doc 1\n\n## Part\n",
        "src.md": "[[Doc 1]] [[doc-1#Part]] [[ doc 1 |t]] [[doc1]]\n",
    }
    corpus = TitledCorpus(files)
    doc = corpus.doc("doc1.md")
    out = rename_heading(corpus, "doc1.md", doc, doc.headings[0], "New: Title")
    # the title as written stays written as a title, a slug as the slug; the file name is kept
    assert apply(files["src.md"], out.edits["src.md"]) == (
        "[[New: Title]] [[new-title#Part]] [[ New: Title |t]] [[doc1]]\n"
    )
    out = rename_heading(corpus, "doc1.md", doc, doc.headings[1], "Piece")
    assert apply(files["src.md"], out.edits["src.md"]) == (
        "[[Doc 1]] [[doc-1#Piece]] [[ doc 1 |t]] [[doc1]]\n"
    )


@pytest.mark.parametrize(
    "text",
    [
        "# Plain words: and 'quotes' (parens)\n",
        "\n\n#   Spaced   out  \n",
        "# Closed #\n",
        "# With `code`\n",
        "# With *emphasis* and [a link](x.md)\n",
        "# Tab\tinside\n",
        "# A &amp; B\n",
        "  # Indented\n",
        "# Trailing \\\n",
        "---\ntags: [a]\n---\n# After front\n",
        "---\ntitle: Front\n---\n# Heading\n",
        "#\n",
    ],
)
def test_the_no_parse_reading_of_a_leading_heading_agrees_with_the_parser(text: str):
    assert text_title(text, "n.md") == doc_title(parse_text(text, "n.md"))


@pytest.mark.parametrize(
    "title",
    [
        "Plain words",
        '"ADR 0001: quoted, with a colon"',
        "'Single quoted'",
        "yes",  # a boolean to YAML
        "On",
        "Null",
        "Key: value",  # a mapping
        "Words # a comment",
        "Ends with:",
        '"Escaped \\" quote"',
        "'It''s'",
        "2024",
        "  Spaced  ",
        '""',
        "[a, list]",
    ],
)
def test_the_no_yaml_reading_of_a_title_line_agrees_with_yaml(title: str):
    text = f"---\ntitle: {title}\n---\n# Heading\n"
    assert text_title(text, "n.md") == doc_title(parse_text(text, "n.md"))
    text = f"---\ntitle: {title}\ntitle: Twice\n---\n"
    assert text_title(text, "n.md") == doc_title(parse_text(text, "n.md"))


def test_a_link_by_title_counts_as_a_link_for_related_sections():
    texts = {"doc2.md": "# Doc 2\n\nText.\n", "src.md": "# Src\n\nSee [[doc-2]].\n"}

    def read(rel: str):
        return parse_text(texts[rel], rel)

    files = list(texts)
    assert LinkedWith(Span("src.md", 0, 3, 0), read, files).linked(Span("doc2.md", 0, 3, 0))
    assert LinkedWith(Span("doc2.md", 0, 3, 0), read, files).linked(Span("src.md", 0, 3, 0))
