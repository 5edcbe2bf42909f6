"""marksman's Tests/ParserTests.fs (headings, wiki links, markdown links, tags;
snapshots Tests/_snapshots/HeadingTests.json and WikiLinkTests.json), ported.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms: the peer parses a text into elements; each kind of
element is asked of mdseek through the request that shows it:

* a heading (``H1: range=…``) is a ``textDocument/documentSymbol``: its name
  is the peer's ``title``, its selection range the peer's ``range`` (the
  heading's line);
* a wiki link (``WL``) and a markdown link (``ML``) is a
  ``textDocument/documentLink`` over the whole link, as the peer's element
  range; a definition (``MLD``) one over its destination, the peer's ``url``
  range. mdseek links only what resolves, so the case's folder holds the notes,
  files and headings the links name (a heading a link names in its own document
  is added on a last line, moving nothing);
* a tag (``T: name=tag``) is a ``workspace/symbol`` answer to ``#tag``: its
  place, the peer's element range (``#`` included); one case per tag.

The other ten ``WikiLinkTests`` are ported with their targets in
:mod:`test_marksman_wiki_links`. Not ported: ``FootnoteTests`` (skipped by the
peer) and ``DocUrlTests`` (the peer's URL type, no answer of its own).
"""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types
from peer_support import (
    as_tuple,
    lines,
    params,
    run_document_links,
    run_symbols,
    server_fixture,
    workspace,
)

pytestmark = pytest.mark.slow

client = server_fixture()

UNDEFINED = "CommonMark: a reference link whose label has no [label]: definition is text, not a link (VS Code agrees); marksman's parser keeps it as a link element"
EMPTY = "a link with an empty destination ([]()) leads nowhere, so it gets no document link (VS Code agrees for [](<>)); marksman's parser keeps it as an element"
ESCAPE = "mdseek, as Obsidian (whose note names cannot hold a '#'), ends a wiki link's note name at its first '#'; marksman reads '\\#' as a '#' of the name (note F#)"
TAGS = "mdseek reads tags by Obsidian's rules: a tag starts a line or follows a space (docs/language-server.md), so (#tag and ,#tag2 are text"
CM_LIST = "CommonMark: a '-' line after a blank line starts a list item, so '-' and '-' are a list, not a setext heading"


def heads(name: str, text: str, *symbols: tuple, **kw: object) -> dict:
    """(title, selection range, children...) of each heading."""

    def tree(items: tuple) -> list[dict]:
        return [{"name": n, "selection": sel, "children": tree(kids)} for n, sel, *kids in items]

    return {
        "name": name,
        "kind": "symbols",
        "files": {"doc.md": text},
        "symbols": tree(symbols),
        **kw,
    }


def links(name: str, text: str, found: list, files: dict | None = None, **kw: object) -> dict:
    return {
        "name": name,
        "kind": "links",
        "files": {"doc.md": text, **(files or {})},
        "links": found,
        "exact": True,
        **kw,
    }


def tag(name: str, text: str, query: str, places: list, **kw: object) -> dict:
    return {
        "name": name,
        "kind": "tags",
        "files": {"doc.md": text},
        "query": query,
        "places": places,
        **kw,
    }


CASES: list[dict] = [
    heads("HeadingTests.parse_empty", ""),
    heads("HeadingTests.parse_title_single", "# Title text", ("Title text", (0, 0, 0, 12))),
    heads(
        "HeadingTests.parse_title_multiple",
        "# Title 1\n# Title ... (2)\r\n# 3rd Title",
        ("Title 1", (0, 0, 0, 9)),
        ("Title ... (2)", (1, 0, 1, 15)),
        ("3rd Title", (2, 0, 2, 11)),
    ),
    heads(
        "HeadingTests.parse_title_with_child_paragraph",
        "# Title 1\nSome text\r\n# Title 2",
        ("Title 1", (0, 0, 0, 9)),
        ("Title 2", (2, 0, 2, 9)),
    ),
    heads(
        "HeadingTests.parse_nested_headings",
        "# H1 \n## H2.1\n## H2.2\n",
        ("H1", (0, 0, 0, 5), ("H2.1", (1, 0, 1, 7)), ("H2.2", (2, 0, 2, 7))),
    ),
    links("WikiLinkTests.parse_wiki_no_doc_and_no_title", "[[|]]", [(0, 0, 0, 5)]),
    links("WikiLinkTests.parse_wiki_all_empty", "[[]]", [(0, 0, 0, 4)]),
    links(
        "WikiLinkTests.parse_wiki_escaped_hash",
        "[[F\\#]]",
        [(0, 0, 0, 7)],
        {"F#.md": "# F#"},  # reached by its title: [[F\\]]'s slug is f, as F#'s
    ),
    links(
        "WikiLinkTests.parse_wiki_escaped_hash_and_heading",
        "[[F\\##Section]]",
        [(0, 0, 0, 15)],
        {"F#.md": lines("# F#", "## Section")},  # by title, then the heading path #Section
    ),
    links(
        "WikiLinkTests.parse_wiki_escaped_hash_and_heading_with_hash",
        "[[F\\##Section #3]]",
        [(0, 0, 0, 18)],
        {"F#.md": lines("# F#", "## Section #3")},
        convention=ESCAPE,
    ),
    links(
        "WikiLinkTests.complex_example_1",
        "# H1\n\n## H2.1\nP2.1 [[ref1]]\n[[cp1\n## H2.2\nP2.2 [:cp2 next",
        [(3, 5, 3, 13)],
        {"ref1.md": "# ref1"},
    ),
    heads(
        "WikiLinkTests.complex_example_1 [headings]",
        "# H1\n\n## H2.1\nP2.1 [[ref1]]\n[[cp1\n## H2.2\nP2.2 [:cp2 next",
        ("H1", (0, 0, 0, 4), ("H2.1", (2, 0, 2, 7)), ("H2.2", (5, 0, 5, 7))),
    ),
    links("MdLinkTest.parser_link_1", "[title](url)", [(0, 0, 0, 12)], {"url": None}),
    links("MdLinkTest.parser_link_2", "[]", []),
    links("MdLinkTest.parser_link_3", "[][]", []),
    links("MdLinkTest.parser_link_4", "[]()", [(0, 0, 0, 4)], convention=EMPTY),
    links("MdLinkTest.parser_link_5", '[la bel](url "title")', [(0, 0, 0, 21)], {"url": None}),
    links(
        "MdLinkTest.parser_link_6",
        "[la bel](url title)",
        [(0, 0, 0, 8)],
        {"url": None},
        convention=UNDEFINED,
    ),
    links("MdLinkTest.parser_link_7", "[](url)", [(0, 0, 0, 7)], {"url": None}),
    links("MdLinkTest.parser_link_8", "[short_cut]", [(0, 0, 0, 11)], convention=UNDEFINED),
    links("MdLinkTest.parser_link_9", "[short cut][]", [(0, 0, 0, 13)], convention=UNDEFINED),
    links("MdLinkTest.parser_link_10", "[label][ref]", [(0, 0, 0, 12)], convention=UNDEFINED),
    links("MdLinkTest.parser_link_11", "[foo]: /foo 'foo title'", [(0, 7, 0, 11)], {"foo": None}),
    links("MdLinkTest.parser_link_12", "[foo]: /foo", [(0, 7, 0, 11)], {"foo": None}),
    links(
        "MdLinkTest.parser_link_13",
        "[foo]: /bar\nHere comes [foo].",
        [(0, 7, 0, 11), (1, 11, 1, 16)],
        {"bar": None},
    ),
    links(
        "MdLinkTest.parser_link_14",
        "[label][ref]\n\n[ref]: https://some.url",
        [(0, 0, 0, 12), (2, 7, 2, 23)],
    ),
    tag("TagsTests.tags_1", "#tag", "#tag", [(0, 0, 0, 4)]),
    tag(
        "TagsTests.tags_2",
        "(#tag\n(#tag\n(#tag)\n[?](#tag)",
        "#tag",
        [(0, 1, 0, 5), (1, 1, 1, 5), (2, 1, 2, 5)],
        convention=TAGS,
    ),
    links(
        "TagsTests.tags_2 [link]",
        lines("(#tag", "(#tag", "(#tag)", "[?](#tag)", "# tag"),
        [(3, 0, 3, 9)],
    ),
    tag("TagsTests.tags_3 [#tag1]", "#tag1,#tag2", "#tag1", [(0, 0, 0, 5)]),
    tag("TagsTests.tags_3 [#tag2]", "#tag1,#tag2", "#tag2", [(0, 6, 0, 11)], convention=TAGS),
    tag(
        "TagsTests.tags_nested [#tag1/subtag1]",
        "#tag1/subtag1,#tag2/subtag2/subsubtag2",
        "#tag1/subtag1",
        [(0, 0, 0, 13)],
    ),
    tag(
        "TagsTests.tags_nested [#tag2/subtag2/subsubtag2]",
        "#tag1/subtag1,#tag2/subtag2/subsubtag2",
        "#tag2/subtag2/subsubtag2",
        [(0, 14, 0, 38)],
        convention=TAGS,
    ),
    heads("RegressionTests.no156", "A\n\n-\n-", ("-\n-", (2, 0, 3, 1)), convention=CM_LIST),
    links(
        "RegressionTests.no235",
        "\n[\n'00000048', '00000681'\n]\n",
        [(1, 0, 3, 1)],
        convention=UNDEFINED,
    ),
    links("RegressionTests.no334", "[][][]", []),
]


async def run_tags(client: Any, tmp: Any, case: dict) -> None:
    async with workspace(client, tmp, case) as ws:
        found = await client.workspace_symbol_async(
            types.WorkspaceSymbolParams(query=case["query"])
        )
        got = sorted(
            as_tuple(s.location.range)
            for s in found or []
            if ws.rel(s.location.uri) == "doc.md" and s.name == case["query"]
        )
        assert got == sorted(tuple(p) for p in case["places"])


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_parser(client, tmp_path, case):
    kind = case["kind"]
    if kind == "symbols":
        await run_symbols(client, tmp_path, case)
    elif kind == "links":
        await run_document_links(client, tmp_path, case)
    else:
        await run_tags(client, tmp_path, case)
