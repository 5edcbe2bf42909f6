"""Front-matter aliases (index/text/aliases.py) and the one resolver's rule for them
(index/links.resolve): every front-matter form, where each alias is written, a
file name winning over an alias, an alias two notes claim resolving to neither,
and the rename engine keeping alias links. Expected values are written by hand."""

from __future__ import annotations

import pytest
from test_rename import Corpus, apply

from mdseek.index.links.edits import RenameError
from mdseek.index.links.links import find_links, resolve
from mdseek.index.links.move import Move, move_files
from mdseek.index.links.rename import rename_alias, rename_target
from mdseek.index.text.aliases import (
    AliasMap,
    alias_sites,
    note_aliases,
    search_title,
    text_aliases,
)
from mdseek.index.text.parse import parse_text


@pytest.mark.parametrize(
    ("front", "want"),
    [
        ("aliases: [IR, Outage playbook]", ("IR", "Outage playbook")),
        ("aliases:\n  - IR\n  - 'Outage: P1'", ("IR", "Outage: P1")),
        ("alias: On call, Pager rota", ("On call", "Pager rota")),
        ("aliases: 2024", ()),  # not a string nor a list
        ("aliases: [IR, ir, '  IR  ']", ("IR",)),  # repeats (case and spaces aside) once
        ("aliases: []\nalias: [Old name]", ("Old name",)),
        ("title: T", ()),
    ],
)
def test_every_front_matter_form(front: str, want: tuple[str, ...]):
    text = f"---\n{front}\n---\n# T\n"
    assert note_aliases(parse_text(text).front_matter) == want
    assert text_aliases(text) == want  # the front-matter-only reading agrees


def test_text_aliases_reads_only_a_front_matter_at_the_top():
    assert text_aliases("# T\n\n---\naliases: [X]\n---\n") == ()
    assert text_aliases("---\naliases: [X]\n") == ()  # never closed: not front matter
    assert text_aliases("\ufeff---\r\naliases: [X]\r\n---\r\n") == ("X",)


def test_alias_sites_point_at_each_name():
    doc = parse_text(
        '---\ntitle: T\naliases: [IR, "Outage: P1"]\nalias:\n  - Pager rota\ntags: [IR]\n---\n# T\n'
    )
    got = [(s.name, s.line, s.start, s.end) for s in alias_sites(doc)]
    assert got == [("IR", 2, 10, 12), ("Outage: P1", 2, 15, 25), ("Pager rota", 4, 4, 14)]


def test_search_title_adds_the_aliases_the_title_does_not_say():
    assert (
        search_title("Incident response", ("IR", "incident RESPONSE")) == "Incident response (IR)"
    )
    assert search_title("T", ()) == "T"


FILES = {
    "ops/incident response.md": "---\naliases: [IR]\n---\n# Incident response\n\n## Paging\n",
    "a.md": "---\naliases: [Shared, setup]\n---\n# A\n",
    "b.md": "---\naliases: [shared]\n---\n# B\n",
    "guide/setup.md": "# Setup\n",
    "guide/install.md": "# Install\n",
    "notes/x.md": "[[ir]] [[IR#Paging]] [[  Ir  |text]] [[Shared]] [[setup]] [[incident response]]\n",
}


def targets(corpus: Corpus, src: str) -> list[tuple[str | None, str | None, bool, tuple[str, ...]]]:
    doc = corpus.doc(src)
    return [
        (t.path, t.anchor, t.alias, t.ambiguous)
        for t in (
            resolve(lk, src, corpus.exists, corpus.files, corpus.aliases) for lk in find_links(doc)
        )
    ]


def test_the_resolver_rule():
    corpus = Corpus(dict(FILES))
    ir = "ops/incident response.md"
    assert targets(corpus, "notes/x.md") == [
        (ir, None, True, ()),
        (ir, "Paging", True, ()),
        (ir, None, True, ()),
        (None, None, False, ("a.md", "b.md")),  # two notes claim it: neither is picked
        ("guide/setup.md", None, False, ()),  # a file name wins over a.md's alias
        (ir, None, False, ()),
    ]
    assert corpus.aliases.shadowed("SETUP") == "guide/setup.md"


def test_a_move_keeps_alias_links_and_follows_file_name_links():
    corpus = Corpus(dict(FILES))
    out = move_files(corpus, [Move("ops/incident response.md", "archive/2024.md")])
    assert {f: [(e.line, e.col, e.end_col, e.text) for e in es] for f, es in out.edits.items()} == {
        "notes/x.md": [(0, 60, 77, "2024")]
    }


def test_a_move_onto_an_alias_name_keeps_the_link_on_its_note():
    # [[IR]] leads to the note whose alias it is; a file renamed to ir.md would
    # take the name over (a file name wins), so the link is rewritten to stay
    files = dict(FILES)
    corpus = Corpus(files)
    out = move_files(corpus, [Move("guide/setup.md", "guide/ir.md")])
    x = files["notes/x.md"]
    assert apply(x, out.edits["notes/x.md"]) == (
        "[[incident response]] [[incident response#Paging]] [[incident response|text]]"
        " [[Shared]] [[ir]] [[incident response]]\n"
    )


def test_renaming_an_alias_renames_its_declaration_and_its_links():
    files = dict(FILES)
    corpus = Corpus(files)
    src = parse_text(files["notes/x.md"], "notes/x.md")
    t = rename_target(corpus, "notes/x.md", src, 0, 3)
    assert t is not None and (t.kind, t.path, t.placeholder) == (
        "alias",
        "ops/incident response.md",
        "ir",
    )
    ir = "ops/incident response.md"
    out = rename_alias(corpus, ir, corpus.doc(ir), "ir", "On-call #1".replace("#", "no. "))
    assert apply(files[ir], out.edits[ir]).split("\n")[1] == "aliases: [On-call no. 1]"
    assert apply(files["notes/x.md"], out.edits["notes/x.md"]) == (
        "[[On-call no. 1]] [[On-call no. 1#Paging]] [[  On-call no. 1  |text]]"
        " [[Shared]] [[setup]] [[incident response]]\n"
    )
    for name, says in (
        ("Shared", "already an alias of a.md, b.md"),
        ("INSTALL", "would lead to guide/install.md"),
        ("a|b", "cannot be written in a wiki link"),
        ("  ", "empty"),
    ):
        with pytest.raises(RenameError, match=says):
            rename_alias(corpus, ir, corpus.doc(ir), "IR", name)


def test_an_empty_map_changes_nothing():
    assert not AliasMap() and AliasMap({"a.md": ()}).claims("x") == []
