"""marksman's wiki-link tests, ported: Tests/ParserTests.fs (module
WikiLinkTests, with its snapshots Tests/_snapshots/WikiLinkTests.json) and the
``EncodingTests``, ``TitleLess`` and ``RegressionTests`` modules of
Tests/RefsTests.fs.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms:
* The parser tests assert where a wiki link is (``WL: [[note]]; (0,0)-(0,8)``)
  and what it names. Here: ``textDocument/documentLink`` on the document, in a
  folder holding the notes and headings the links name, must give each link
  with exactly the peer's range (marksman's range is the whole link, as
  mdseek's) and lead to the named note (and heading's line).
* ``Dest.tryResolveElement`` at a position is ``textDocument/definition``
  there: the peer's destination (a note, or a note's heading) is the file and
  line mdseek goes to; "no destination" is no location.

Wiki links: marksman (default ``complWikiStyle = title-slug``) also reaches a
note by its title (``[[Doc 2]]`` for ``# Doc 2`` in ``doc2.md``), as mdseek does
when no file name matches; marksman decodes ``%20`` in them and reaches a note
by its title from a markdown link too, mdseek reads a wiki link as written and
a markdown link's path. Cases that turn on that are marked.

``parse_wiki_no_doc_and_no_title``, ``parse_wiki_all_empty``,
``parse_wiki_escaped_hash*`` and ``complex_example_1`` are ported with the rest
of ParserTests.fs in :mod:`test_marksman_parser`. Not ported: the ConnTest
graph (marksman's internals).
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_definition, run_document_links, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

ENCODED = (
    "marksman decodes %20 in a wiki link; mdseek, as Obsidian, reads a wiki link's text as written"
)


def parsed(name: str, text: str, links: list, files: dict, **kw: object) -> dict:
    """A parser test: ``links`` [(range, (note, heading line?))]."""
    return {
        "name": name,
        "files": {"doc.md": text, **files},
        "links": links,
        "exact": True,
        **kw,
    }


ENCODING = {
    "doc1.md": lines(
        "# Doc 1",
        "",
        "## Heading 1",
        "",
        "## Heading 2",
        "",
        "[[#Heading 1]]",
        "[[#Heading%201]]",
        "[[Doc 2]]",
        "[[Doc%202]]",
        "[[Doc 2#Heading %231]]",
        "[](Doc%202)",
        "[](Doc%202#heading-1)",
        "[[doc.3.with.dots.md]]",
        "[[doc.3.with.dots]]",
    ),
    "doc2.md": lines("# Doc 2", "", "## Heading #1"),
    "doc.3.with.dots.md": "Doc 3",
}


def resolved(name: str, pos: tuple[int, int], defs: list, **kw: object) -> dict:
    return {"name": name, "files": ENCODING, "at": "doc1.md", "pos": pos, "defs": defs, **kw}


CASES: list[dict] = [
    parsed("parser_xref_note", "[[note]]", [((0, 0, 0, 8), ("note.md",))], {"note.md": ""}),
    parsed(
        "parser_xref_note_heading",
        "[[note#heading]]",
        [((0, 0, 0, 16), ("note.md", 1))],
        {"note.md": lines("x", "## heading")},
    ),
    parsed("parser_xref_text_before", "Before [[N]]", [((0, 7, 0, 12), ("N.md",))], {"N.md": ""}),
    parsed(
        "parser_xref_text_after", "[[note]]! Other", [((0, 0, 0, 8), ("note.md",))], {"note.md": ""}
    ),
    parsed(
        "parser_xref_text_around", "To [[note]]!", [((0, 3, 0, 11), ("note.md",))], {"note.md": ""}
    ),
    parsed(
        "parser_xref_2nd_line",
        "# H1\nThis is [[note]] huh!\n",
        [((1, 8, 1, 16), ("note.md",))],
        {"note.md": ""},
    ),
    parsed("parse_wiki_empty_heading", "[[T#]]", [((0, 0, 0, 6), ("T.md",))], {"T.md": ""}),
    parsed(
        "parse_wiki_with_title",
        "[[T#head|title]]",
        [((0, 0, 0, 16), ("T.md", 0))],
        {"T.md": lines("# head")},
    ),
    parsed(
        "parse_wiki_empty_title",
        "[[T#head|]]",
        [((0, 0, 0, 11), ("T.md", 0))],
        {"T.md": lines("# head")},
    ),
    parsed(
        "parse_wiki_no_doc_and_title",
        lines("[[#head|title]]", "", "# head"),
        [((0, 0, 0, 15), ("doc.md", 2))],
        {},
    ),
    resolved("EncodingTests.headingNotEncoding", (6, 5), [("doc1.md", 2)]),
    resolved("EncodingTests.headingUrlEncoded", (7, 5), [("doc1.md", 2)], convention=ENCODED),
    resolved("EncodingTests.docNotEncoded", (8, 5), [("doc2.md", 0)]),
    resolved(
        "EncodingTests.docUrlEncoded",
        (9, 5),
        [("doc2.md", 0)],
        convention=ENCODED,
    ),
    resolved(
        "EncodingTests.docHeadingMixedEncoding", (10, 5), [("doc2.md", 2)], convention=ENCODED
    ),
    resolved(
        "EncodingTests.inlineDocUrlEncoding",
        (11, 5),
        [("doc2.md", 0)],
        convention="marksman reaches a note by its title from a markdown link too ([](Doc%202) for '# Doc 2' in doc2.md); mdseek follows the path",
    ),
    resolved(
        "EncodingTests.inlineDocHeadingMixedEncoding",
        (12, 5),
        [("doc2.md", 2)],
        convention="marksman reaches a note by its title from a markdown link too ([](Doc%202) for '# Doc 2' in doc2.md); mdseek follows the path",
    ),
    resolved("EncodingTests.docFileNameWithDots#1", (13, 5), [("doc.3.with.dots.md", 0)]),
    resolved("EncodingTests.docFileNameWithDots#2", (14, 5), [("doc.3.with.dots.md", 0)]),
    {
        "name": "TitleLess.refToH1 (titles on, marksman's default)",
        "files": {"d1.md": lines("# Doc1"), "d2.md": lines("[[Doc1]]")},
        "at": "d2.md",
        "pos": (0, 2),
        "defs": [("d1.md", 0)],
    },
    {
        "name": "RegressionTests.rootLink_issue275",
        "files": {"doc.md": lines("[](/)")},
        "pos": (0, 4),
        "defs": [],
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_wiki_links(client, tmp_path, case):
    if "links" in case:
        await run_document_links(client, tmp_path, case)
    else:
        await run_definition(client, tmp_path, case)
