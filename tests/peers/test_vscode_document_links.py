"""VS Code's markdown language service, src/test/documentLinks.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms:
* The peer's "Link computer" and "Link provider" suites both become
  ``textDocument/documentLink`` on the document (``doc.md`` here; ``test.md`` /
  ``x.md`` there). VS Code's provider returns every link the computer finds
  except reference links without a definition; the computer tests ported here
  are those where the two agree.
* Ranges: VS Code's document link covers the destination (``hrefRange``),
  mdseek's the whole link (``[text](dest)``): each expected range must lie in
  exactly one of mdseek's and each of mdseek's hold exactly one
  (:func:`peer_support.match_spans`).
* mdseek gives a link to a missing file no document link (the diagnostics name
  it), where VS Code links it anyway; so the case's folder holds the files the
  links name (empty), except in ``Should find links with titles``, kept as the
  peer wrote it to show that difference.
* A target the peer asserts as ``#L<line>,<col>`` is mdseek's ``#L<line>``.
* The peer's ``other`` and ``space file`` documents are ``other.md`` and
  ``space file.md`` here: mdseek reads ``.md`` and ``.markdown`` files only.

Six computer tests of reference links without a definition (which VS Code's
own documentLink drops) are ported with the definition added (their name says
so). Not ported: two more such tests (``[![alt][img]][def]``, and
``- [@just-web/contributions]:`` lines, which CommonMark reads as definitions
where the peer does not), computer tests of an inner document's URI (a VS
Code notebook concept), of HTML ``id`` targets (2 tests) and the peer's
skipped test.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_document_links, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

HTML = "mdseek reads markdown links only, not src or href attributes of inline HTML"


def computer(name: str, text: str, links: list, files: dict | None = None, **kw: object) -> dict:
    """A "Link computer" case: ``text`` is the peer's document."""
    return {"name": name, "files": {"doc.md": text, **(files or {})}, "links": links, **kw}


CASES: list[dict] = [
    computer("Should not return anything for empty document", "", []),
    computer(
        "Should not return anything for simple document without links",
        lines("# a", "fdasfdfsafsa"),
        [],
    ),
    computer("Should detect basic http links", "a [b](https://example.com) c", [(0, 6, 0, 25)]),
    computer(
        "Should detect basic workspace links#1",
        "a [b](./file) c",
        [(0, 6, 0, 12)],
        {"file": None},
    ),
    computer(
        "Should detect basic workspace links#2",
        "a [b](file.png) c",
        [(0, 6, 0, 14)],
        {"file.png": None},
    ),
    computer(
        "Should detect links with title", 'a [b](https://example.com "abc") c', [(0, 6, 0, 25)]
    ),
    computer(
        "Should handle links with escaped characters in name (#35245)",
        "a [b\\]](./file)",
        [(0, 8, 0, 14)],
        {"file": None},
    ),
    computer(
        "Should handle links with balanced parens#1",
        "a [b](https://example.com/a()c) c",
        [(0, 6, 0, 30)],
    ),
    computer(
        "Should handle links with balanced parens#2",
        "a [b](https://example.com/a(b)c) c",
        [(0, 6, 0, 31)],
    ),
    computer(
        "Should handle links with balanced parens#3",
        "[A link](http://ThisUrlhasParens/A_link(in_parens))",
        [(0, 9, 0, 50)],
    ),
    computer(
        "Should ignore bracketed text inside link title (#150921)#1",
        "[some [inner] in title](link)",
        [(0, 24, 0, 28)],
        {"link": None},
    ),
    computer(
        "Should ignore bracketed text inside link title (#150921)#2",
        "[some [inner] in title](<link>)",
        [(0, 25, 0, 29)],
        {"link": None},
    ),
    computer(
        "Should ignore bracketed text inside link title (#150921)#3",
        "[some [inner with space] in title](link)",
        [(0, 35, 0, 39)],
        {"link": None},
    ),
    computer(
        "Should ignore bracketed text inside link title (#150921)#4",
        lines("# h", "[[a]](http://example.com)"),
        [(1, 6, 1, 24)],
    ),
    computer(
        "Should handle two links without space",
        "a ([test](test)[test2](test2)) c",
        [(0, 10, 0, 14), (0, 23, 0, 28)],
        {"test": None, "test2": None},
    ),
    computer(
        "should handle hyperlinked images (#49238)#1",
        "[![alt text](image.jpg)](https://example.com)",
        [(0, 25, 0, 44), (0, 13, 0, 22)],
        {"image.jpg": None},
    ),
    computer(
        "should handle hyperlinked images (#49238)#2",
        "[![a]( whitespace.jpg )]( https://whitespace.com )",
        [(0, 26, 0, 48), (0, 7, 0, 21)],
        {"whitespace.jpg": None},
    ),
    computer(
        "should handle hyperlinked images (#49238)#3",
        "[![a](img1.jpg)](file1.txt) text [![a](img2.jpg)](file2.txt)",
        [(0, 17, 0, 26), (0, 6, 0, 14), (0, 50, 0, 59), (0, 39, 0, 47)],
        {"img1.jpg": None, "img2.jpg": None, "file1.txt": None, "file2.txt": None},
    ),
    computer("Should not find empty reference link#1", "[][]", []),
    computer("Should not find empty reference link#2", "[][cat]", []),
    computer(
        "Should not consider link references starting with ^ character valid (#107471)",
        "[^reference]: https://example.com",
        [],
    ),
    computer(
        "Should only find one link for definition (#141285)",
        lines("[Works]: https://example.com"),
        [(0, 9, 0, 28)],
    ),
    computer(
        "Should find reference link shorthand (#141285)",
        lines("[ref]", "[ref]: https://example.com"),
        [(0, 1, 0, 4), (1, 7, 1, 26)],
        convention="CommonMark: a reference definition cannot interrupt a paragraph, so '[ref]: ...' under '[ref]' is paragraph text and '[ref]' no link",
    ),
    computer(
        "Should find link with space in definition name",
        lines("[my ref]: https://example.com"),
        [(0, 10, 0, 29)],
    ),
    computer(
        "Should not find link for unclosed bracket ",
        lines("[unclosed", "", "[ref]: https://example.com"),
        [(2, 7, 2, 26)],
    ),
    computer(
        "Should find reference link with escaped brackets",
        lines(
            r"[some text][\[test\]]",
            r"[\[test\]][]",
            r"[\[test\]]",
            "",
            r"[\[test\]]: http://example.com",
        ),
        [(0, 12, 0, 20), (1, 1, 1, 9), (2, 1, 2, 9), (4, 12, 4, 30)],
    ),
    computer(
        "Should not find reference link shorthand when prefixed with ! (#164)",
        lines("[!note]", "[!anything]"),
        [],
    ),
    computer(
        "Should not include reference links with escaped leading brackets",
        lines("\\[bad link][good]", "\\[good]", "[good]: http://example.com"),
        [(2, 8, 2, 26)],
        convention="CommonMark: a reference definition cannot interrupt a paragraph, so '[good]: ...' under a paragraph line is text",
    ),
    computer(
        "Should not include links with escaped leading characters (#15)",
        lines(
            "\\[text](http://example.com)",
            "\\<http://example.com>",
            "",
            "\\[def]: http://example.com",
        ),
        [],
    ),
    computer(
        "Should not consider links in code fenced with backticks",
        lines("```", "[b](https://example.com)", "```"),
        [],
    ),
    computer(
        "Should not consider links in code fenced with tilde",
        lines("~~~", "[b](https://example.com)", "~~~"),
        [],
    ),
    computer("Should not consider links in indented code", "    [b](https://example.com)", []),
    computer("Should not consider links in inline code span", "`[b](https://example.com)`", []),
    computer(
        "Should not consider links with code span inside", "[li`nk](https://example.com`)", []
    ),
    computer(
        "Should not consider links in multiline inline code span",
        lines("`` ", "[b](https://example.com)", "``"),
        [],
    ),
    computer(
        "Should not consider link references in code fenced with backticks (#146714)",
        lines("```", "[a] [bb]", "```"),
        [],
    ),
    computer(
        "Should not consider reference sources in code fenced with backticks (#146714)",
        lines(
            "```",
            "[a]: http://example.com;",
            "[b]: <http://example.com>;",
            "[c]: (http://example.com);",
            "```",
        ),
        [],
    ),
    computer(
        "Should not consider links in multiline inline code span between between text",
        lines("[b](https://1.com) `[b](https://2.com)", "[b](https://3.com) ` [b](https://4.com)"),
        [(0, 4, 0, 17), (1, 25, 1, 38)],
    ),
    computer(
        "Should not consider links in multiline inline code span with new line after the first backtick",
        lines("`", "[b](https://example.com)`"),
        [],
    ),
    computer(
        "Should not miss links in invalid multiline inline code span",
        lines("`` ", "", "[b](https://example.com)", "", "``"),
        [(2, 4, 2, 23)],
    ),
    computer(
        "Should find autolinks",
        "pre <http://example.com> post",
        [(0, 5, 0, 23)],
    ),
    computer(
        "Should not detect links inside html comment blocks",
        lines(
            "<!-- <http://example.com> -->",
            "<!-- [text](./foo.md) -->",
            "<!-- [text]: ./foo.md -->",
            "",
            "<!--",
            "<http://example.com>",
            "-->",
            "",
            "<!--",
            "[text](./foo.md)",
            "-->",
            "",
            "<!--",
            "[text]: ./foo.md",
            "-->",
        ),
        [],
        {"foo.md": None},
    ),
    computer(
        "Should not mark checkboxes as links",
        lines("- [x]", "- [X]", "- [ ]", "* [x]", "* [X]", "* [ ]", "", "[x]: http://example.com"),
        [(7, 5, 7, 23)],
    ),
    computer(
        "Should still find links on line with checkbox",
        lines("- [x] [x]", "- [X] [x]", "- [] [x]", "", "[x]: http://example.com"),
        [(0, 7, 0, 8), (1, 7, 1, 8), (2, 6, 2, 7), (4, 5, 4, 23)],
    ),
    computer(
        "Should find link only within angle brackets",
        "[link](<path>)",
        [(0, 8, 0, 12)],
        {"path": None},
    ),
    computer(
        "Should find link within angle brackets even with link title",
        '[link](<path> "test title")',
        [(0, 8, 0, 12)],
        {"path": None},
    ),
    computer(
        "Should find link within angle brackets even with surrounding spaces",
        "[link]( <path> )",
        [(0, 9, 0, 13)],
        {"path": None},
    ),
    computer(
        "Should find link within angle brackets for image hyperlinks",
        "![link](<path>)",
        [(0, 9, 0, 13)],
        {"path": None},
    ),
    computer(
        "Should not find link due to incorrect angle bracket notation or usage",
        lines("[link](<path )", "[link](<> path>)", "[link](> path)"),
        [],
        {"path": None},
    ),
    computer(
        "Should find link within angle brackets even with space inside link",
        "[link](<pa th>)",
        [(0, 8, 0, 13)],
        {"pa th": None},
    ),
    computer(
        "Should find link within angle brackets with spaces in fragment",
        "[link](<pa th#fr agment>)",
        [(0, 8, 0, 23)],
        {"pa th": None},
    ),
    computer(
        "Should find links with titles",
        lines(
            '[link](<no such.md> "text")',
            "[link](<no such.md> 'text')",
            "[link](<no such.md> (text))",
            '[link](no-such.md "text")',
            "[link](no-such.md 'text')",
            "[link](no-such.md (text))",
        ),
        [
            (0, 8, 0, 18),
            (1, 8, 1, 18),
            (2, 8, 2, 18),
            (3, 7, 3, 17),
            (4, 7, 4, 17),
            (5, 7, 5, 17),
        ],
        convention="mdseek gives a link to a missing file no document link (the diagnostics name it)",
    ),
    computer(
        "Should find links with titles [the files exist]",
        lines(
            '[link](<no such.md> "text")',
            "[link](<no such.md> 'text')",
            "[link](<no such.md> (text))",
            '[link](no-such.md "text")',
            "[link](no-such.md 'text')",
            "[link](no-such.md (text))",
        ),
        [
            (0, 8, 0, 18),
            (1, 8, 1, 18),
            (2, 8, 2, 18),
            (3, 7, 3, 17),
            (4, 7, 4, 17),
            (5, 7, 5, 17),
        ],
        {"no such.md": "", "no-such.md": ""},
    ),
    computer(
        "Should not include link with empty angle bracket",
        lines(
            "[](<>)", "[link](<>)", '[link](<> "text")', "[link](<> 'text')", "[link](<> (text))"
        ),
        [],
    ),
    computer(
        "Should handle reference links with backticks",
        lines("[`github`][github]", "", "[github]: https://github.com"),
        [(0, 11, 0, 17), (2, 10, 2, 28)],
    ),
    computer(
        "Should find reference link with nested brackets",
        lines("[[test]]", "", "[test]: http://example.com"),
        [(0, 2, 0, 6), (2, 8, 2, 26)],
    ),
    computer(
        "Should find src in block html <img>",
        lines('<img src="cat.png">', "", "<img src='cat.png'>", "", "<img src='cat.png' />"),
        [(0, 10, 0, 17), (2, 10, 2, 17), (4, 10, 4, 17)],
        {"cat.png": None},
        convention=HTML,
    ),
    computer(
        "Should find src in inline html <img>",
        'text <img src="cat.png"> more text',
        [(0, 15, 0, 22)],
        {"cat.png": None},
        convention=HTML,
    ),
    computer(
        "Should ignore html link in code block",
        lines('inline `<img src="cat.png">`', "", "~~~", '<img src="cat.png">', "~~~"),
        [],
        {"cat.png": None},
    ),
    computer(
        "Should not find reference links in inline code (#153)",
        "- `[!xyz].js` `ab.js` `[^xyz].js` `[!x-z].js`。",
        [],
    ),
    computer(
        "Should not catastrophical backtrack on slashes",
        lines("# symbol", "[" + "\\" * 60),
        [],
    ),
    computer(
        "Should not crash on definition that spans multiple lines (#192)",
        lines("Options", "[positional parameters]:", "-R: recursively list subdirectories."),
        [],
    ),
    computer(
        "Should find multi-line links",
        lines(
            "[te",
            "xt](foo.md)",
            "[te",
            "xt](foo.md#abc 'text')",
            "[te",
            "xt](<foo.md#abc>)",
            "",
            "[",
            "text",
            "](",
            "foo.md",
            ")",
        ),
        [(1, 4, 1, 10), (3, 4, 3, 14), (5, 5, 5, 15), (10, 0, 10, 6)],
        {"foo.md": lines("# abc")},
    ),
    computer(
        "Should support angle bracket fragment links",
        lines("# A b c", "[text](<#a b c>):"),
        [(1, 8, 1, 14)],
    ),
    # -- Link provider -------------------------------------------------------------------
    computer(
        "Should include defined reference links (#141285)",
        lines("[ref]", "[ref][]", "[ref][ref]", "", "[ref]: http://example.com"),
        [(0, 1, 0, 4), (1, 1, 1, 4), (2, 6, 2, 9), (4, 7, 4, 25)],
    ),
    computer(
        "Should not include reference link shorthand when definition does not exist (#141285)",
        "[ref]",
        [],
    ),
    computer(
        "Should find reference links case insensitively",
        lines("[ref]", "[rEf][]", "[ref][ReF]", "", "[REF]: http://example.com"),
        [(0, 1, 0, 4), (1, 1, 1, 4), (2, 6, 2, 9), (4, 7, 4, 25)],
    ),
    computer(
        "Should use first link reference found in document#1",
        lines("[abc]", "", "[abc]: http://example.com/1", "[abc]: http://example.com/2"),
        [(0, 1, 0, 4), (2, 7, 2, 27), (3, 7, 3, 27)],
    ),
    computer(
        "Should use first link reference found in document#2",
        lines("[abc]", "", "[abc]: http://example.com/1", "[abc]: http://example.com/2"),
        [((0, 1, 0, 4), ("doc.md", 2))],
        targets_only=True,
        convention="a reference-style link leads to its target (here http://example.com/1), not to its definition's line",
    ),
    computer(
        "Should not encode link",
        "[link](http://example/%A5%C8)",
        [((0, 7, 0, 28), "http://example/%A5%C8")],
    ),
    computer(
        "Should resolve href fragment links in angle brackets",
        lines("# a b c", "[link](<#a b c>)", "[link](<#a-b-c>)"),
        [((1, 8, 1, 14), ("doc.md", 0)), ((2, 8, 2, 14), ("doc.md", 0))],
    ),
    {
        "name": "Should resolve href fragment links in angle brackets in other files",
        "files": {
            "space file.md": lines("# a b c"),
            "other.md": lines("[link](<space file#a b c>)", "[link](<space file#a-b-c>)"),
        },
        "at": "other.md",
        "links": [
            ((0, 8, 0, 24), ("space file.md", 0)),
            ((1, 8, 1, 24), ("space file.md", 0)),
        ],
    },
    computer(
        "Should find definitions links with spaces in angle brackets (#136073)",
        lines("[a]: <b c>", "[b]: <cd>"),
        [(0, 6, 0, 9), (1, 6, 1, 8)],
        {"b c": None, "cd": None},
    ),
    computer(
        "Should find angle bracket link in escaped link (#15)",
        lines("\\[text](<http://example.com>)", "", "\\[text]: <http://example.com>"),
        [(0, 9, 0, 27), (2, 10, 2, 28)],
    ),
    computer(
        "Should find link with spaces in angle brackets for image hyperlinks with titles",
        '![link](< path > "test")',
        [(0, 9, 0, 15)],
        {"path": None},  # CommonMark (markdown-it) trims the spaces inside <...>
    ),
    computer(
        "Should find reference links to images",
        lines("[![alt](img)][def]", "", "[def]: http://example.com"),
        [(0, 8, 0, 11), (0, 14, 0, 17), (2, 7, 2, 25)],
        {"img": None},
    ),
    computer(
        "Should find links to images references",
        lines("[![alt][def]](img)", "", "[def]: http://example.com"),
        [(0, 14, 0, 17), (0, 8, 0, 11), (2, 7, 2, 25)],
        {"img": None},
    ),
    computer(
        "Should find angle bracket links with escapes",
        lines("![text](<\\<cat\\>.gif>)", "", "[def]: <\\<cat\\>.gif>"),
        [(0, 9, 0, 20), (2, 8, 2, 19)],
        {"<cat>.gif": None},
    ),
    # The peer's reference links below have no definition: VS Code's link
    # provider (what an editor asks) drops such links, so each case adds the
    # definition its label names on a last line, and that line's link.
    computer(
        "Should find image reference links [with its definition]",
        lines("![][cat]", "", "[cat]: http://example.com"),
        [(0, 4, 0, 7), (2, 7, 2, 25)],
    ),
    computer(
        "Should find inline image reference links [with its definition]",
        lines("ab ![][cat] d", "", "[cat]: http://example.com"),
        [(0, 7, 0, 10), (2, 7, 2, 25)],
    ),
    computer(
        "Should find reference link with space in reference name [with its definition]",
        lines("[text][my ref]", "", "[my ref]: http://example.com"),
        [(0, 7, 0, 13), (2, 10, 2, 28)],
    ),
    computer(
        "Should find reference link shorthand using empty closing brackets (#141285) [with its definition]",
        lines("[ref][]", "", "[ref]: http://example.com"),
        [(0, 1, 0, 4), (2, 7, 2, 25)],
    ),
    computer(
        "Should find reference link shorthand using space in reference name [with its definition]",
        lines("[my ref][]", "", "[my ref]: http://example.com"),
        [(0, 1, 0, 7), (2, 10, 2, 28)],
    ),
    computer(
        "Should find reference link shorthand for link with space in label (#141285) [with its definition]",
        lines("[ref with space]", "", "[ref with space]: http://example.com"),
        [(0, 1, 0, 15), (2, 18, 2, 36)],
    ),
    computer(
        "Should resolve link to header over HTML id when both match",
        lines("# My Header", "", '<div id="my-header"></div>', "", "[link](#my-header)"),
        [((4, 7, 4, 17), ("doc.md", 0))],
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_document_links(client, tmp_path, case):
    await run_document_links(client, tmp_path, case)
