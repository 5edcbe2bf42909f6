"""VS Code's markdown language service, src/test/smartSelect.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: ``provideSelectionRanges`` is
``textDocument/selectionRange`` at each ``$$CURSOR$$`` of the peer's document
(the peer leaves the markers in the text it tests, so do we); the lineage,
innermost first, is compared as the peer compares it: (start line, end line)
per stop, or whole ranges.

Both start at a link's text, then the link, and go from a block to its
heading's content (the lines under it) and its section; mdseek leaves the word
to the editor as VS Code does (VS Code's own word selection comes first). The
cases where they differ are marked: mdseek stops at a heading's line before its
section and ends with the whole document, and VS Code's first stop in a
paragraph of exactly two lines is the cursor's line.

Inside a table both stop at the cell's content, the cell, the row and (in a
body row) the body before the table.

Not ported: the other 34 tests -- bold and italic spans (inside a table's cell
too), the parts of a link (text, destination, title, angle brackets), inline
code (inside a table's cell too), link definitions, autolinks, images (stops
mdseek does not make), and the long heading-nesting tests (the heading-content
stops the cases above already show).
"""

from __future__ import annotations

import pytest
from peer_support import CURSOR, lines, params, run_selection, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

DOC = "mdseek's last stop is the whole document"
PAIR = "VS Code's first stop in a paragraph of exactly two lines is the cursor's line (in a paragraph of one or three lines, the paragraph); mdseek's is the paragraph"
HEADING_LINE = "mdseek stops at the heading line before its section"


def select(name: str, text: str, *chains: list, **kw: object) -> dict:
    return {"name": name, "files": {}, "text": text, "chains": list(chains), **kw}


C = CURSOR
CASES: list[dict] = [
    select("Smart select single word", f"Hel{C}lo", [(0, 0)]),
    select(
        "Smart select paragraph",
        "Many of the core components and extensions to "
        f"{C}VS Code live in their own repositories on GitHub. For example, the "
        "[node debug adapter](https://github.com/microsoft/vscode-node-debug) and the "
        "[mono debug adapter](https://github.com/microsoft/vscode-mono-debug) have their own "
        "repositories. For a complete list, please visit the "
        "[Related Projects](https://github.com/microsoft/vscode/wiki/Related-Projects) page "
        "on our [wiki](https://github.com/microsoft/vscode/wiki).",
        [(0, 0)],
    ),
    select(
        "Smart select multi-line paragraph",
        lines(
            f"Many of the core components and extensions to {C}VS Code live in their own repositories on GitHub. ",
            "For example, the[node debug adapter](https://github.com/microsoft/vscode-node-debug) and the [mono debug adapter]",
            "(https://github.com/microsoft/vscode-mono-debug) have their own repositories.",
        ),
        [(0, 2)],
    ),
    select(
        "Smart select html block",
        lines('<p align="center">', f'{C}<img alt="VS Code in action" src="x.png">', "</p>"),
        [(0, 2)],
    ),
    select(
        "Smart select block quote",
        lines("> b1", f"b1 {C}", "", "> b2"),
        [(1, 1), (0, 1)],
        convention=PAIR + "; and " + DOC,
    ),
    select(
        "Smart select header on header line",
        lines(f"# Header{C}", "Hello"),
        [(0, 1)],
        convention=HEADING_LINE,
    ),
    select(
        "Smart select single word w grandparent header on text line",
        lines("## ParentHeader", "# Header", f"{C}Hello"),
        [(2, 2), (1, 2)],
        convention=DOC,
    ),
    select(
        "Smart select html block w parent header",
        lines(
            "# Header",
            f'{C}<p align="center">',
            '<img alt="VS Code in action" src="x.png">',
            "</p>",
        ),
        [(1, 1), (1, 3), (0, 3)],
        convention=PAIR,
    ),
    select("Smart select fenced code block", lines("~~~", f"a{C}", "~~~"), [(0, 2)]),
    select(
        "Smart select list",
        lines("- item 1", f"- {C}item 2", "- item 3", "- item 4"),
        [(1, 1), (0, 3)],
    ),
    select(
        "Smart select list with fenced code block",
        lines("- item 1", "- ~~~", f"  {C}a", "  ~~~", "- item 3", "- item 4"),
        [(1, 3), (0, 5)],
    ),
    select(
        "Smart select multi cursor",
        lines(f"- {C}item 1", "- ~~~", "  a", "  ~~~", f"- {C}item 3", "- item 4"),
        [(0, 0), (0, 5)],
        [(4, 4), (0, 5)],
    ),
    select(
        "Smart select nested block quotes",
        lines("> item 1", "> item 2", f">> {C}item 3", ">> item 4"),
        [(2, 2), (2, 3), (0, 3)],
        convention=PAIR,
    ),
    select(
        "Smart select subheader content",
        lines(
            "# main header 1", "content 1", "## sub header 1", f"{C}content 2", "# main header 2"
        ),
        [(3, 3), (2, 3), (1, 3), (0, 3)],
        convention=DOC,
    ),
    select(
        "Smart select subheader line",
        lines(
            "# main header 1", "content 1", f"## sub header 1{C}", "content 2", "# main header 2"
        ),
        [(2, 3), (1, 3), (0, 3)],
        convention=HEADING_LINE + "; and " + DOC,
    ),
    select(
        "Smart select blank line",
        lines("# main header 1", "content 1", f"{C}             ", "content 2", "# main header 2"),
        [(1, 3), (0, 3)],
        convention=DOC,
    ),
    select(
        "Smart select line between paragraphs", lines("paragraph 1", C, "paragraph 2"), [(0, 2)]
    ),
    {
        "name": "Smart select empty document",
        "files": {},
        "text": "",
        "positions": [(0, 0)],
        "chains": [[]],
        "convention": "mdseek answers one selection range per position asked (the empty document's); VS Code answers none",
    },
    select(
        "Smart select without multiple ranges",
        lines("# main header 1", "", "", f"- {C}paragraph", "- content"),
        [(3, 3), (3, 4), (1, 4), (0, 4)],
    ),
    select(
        "Smart select last list item",
        lines("- level 1", "- level 2", "- level 2", f"- level {C}1"),
        [(3, 3), (0, 3)],
    ),
    select(
        "Smart select table",
        lines("a", "", "| a | b |", "|---|---|", f"| 1 | 2{C} |", "| 3 | 4 |", "", "b"),
        [(4, 4), (4, 4), (4, 4), (4, 5), (2, 5)],
        convention=DOC,
    ),
    select(
        "Smart select multi nested block quotes",
        lines("> item 1", ">> item 2", f">>> {C}item 3", ">>>> item 4"),
        [(2, 2), (2, 3), (1, 3), (0, 3)],
    ),
    select(
        "Smart select on second level of a list",
        lines(
            "* level 0",
            "   * level 1",
            "   * level 1",
            "       * level 2",
            "   * level 1",
            f"   * level {C}1",
            "* level 0",
        ),
        [(5, 5), (1, 5), (0, 5), (0, 6)],
    ),
    select(
        "Smart select on third level of a list",
        lines(
            "* level 0",
            "   * level 1",
            "   * level 1",
            f"       * level {C}2",
            "       * level 2",
            "   * level 1",
            "   * level 1",
            "* level 0",
        ),
        [(3, 3), (3, 4), (2, 4), (1, 6), (0, 6), (0, 7)],
    ),
    select(
        "Smart select level 2 then level 1",
        lines("* level 1", f"   * level {C}2", "   * level 2", "* level 1"),
        [(1, 1), (1, 2), (0, 2), (0, 3)],
    ),
    select(
        "Smart select on second level of a list [tabs]",
        lines(
            "* level 0",
            "\t* level 1",
            "\t* level 1",
            "\t\t* level 2",
            "\t* level 1",
            f"\t* level {C}1",
            "* level 0",
        ),
        [(5, 5), (1, 5), (0, 5), (0, 6)],
    ),
    select(
        "Smart select on third level of a list [tabs]",
        lines(
            "* level 0",
            "\t* level 1",
            "\t* level 1",
            f"\t\t* level {C}2",
            "\t\t* level 2",
            "\t* level 1",
            "\t* level 1",
            "* level 0",
        ),
        [(3, 3), (3, 4), (2, 4), (1, 6), (0, 6), (0, 7)],
    ),
    select(
        "Smart select level 2 then level 1 [tabs]",
        lines("* level 1", f"\t* level {C}2", "\t* level 2", "* level 1"),
        [(1, 1), (1, 2), (0, 2), (0, 3)],
    ),
    select(
        "Smart select table cell then row",
        lines("| a | b | c |", "|---|---|---|", f"| 1 | 2{C} | 3 |"),
        [(2, 5, 2, 18), (2, 4, 2, 19), (2, 0, 2, 23), (0, 0, 2, 23)],
    ),
    select(
        "Smart select table cell in first column",
        lines("| a | b | c |", "|---|---|---|", f"| {C}1 | 2 | 3 |"),
        [(2, 1, 2, 14), (2, 0, 2, 15), (2, 0, 2, 23), (0, 0, 2, 23)],
    ),
    select(
        "Smart select table cell in last column",
        lines("| a | b | c |", "|---|---|---|", f"| 1 | 2 | 3{C} |"),
        [(2, 9, 2, 22), (2, 8, 2, 23), (2, 0, 2, 23), (0, 0, 2, 23)],
    ),
    select(
        "Smart select table header cell",
        lines(f"| a{C} | b | c |", "|---|---|---|", "| 1 | 2 | 3 |"),
        [(0, 1, 0, 14), (0, 0, 0, 15), (0, 0, 0, 23), (0, 0, 2, 13)],
    ),
    select(
        "Smart select table with multiple body rows",
        lines("| a | b |", "|---|---|", "| 1 | 2 |", f"| 3 | 4{C} |"),
        [(3, 5, 3, 18), (3, 4, 3, 19), (3, 0, 3, 19), (2, 0, 3, 19), (0, 0, 3, 19)],
    ),
    select(
        "Smart select table row then body then entire table",
        lines(
            "# Header",
            "",
            "| col1 | col2 |",
            "|------|------|",
            "| a    | b    |",
            f"| c{C}    | d    |",
            "| e    | f    |",
            "",
            "More text",
        ),
        [
            (5, 1, 5, 17),
            (5, 0, 5, 18),
            (5, 0, 5, 25),
            (4, 0, 6, 15),
            (2, 0, 6, 15),
            (1, 0, 8, 9),
            (0, 0, 8, 9),
        ],
    ),
    select(
        "Smart select indented table cell",
        lines("- list item", "", "    | a | b |", "    |---|---|", f"    | 1{C} | 2 |"),
        [(4, 5, 4, 18), (4, 4, 4, 19), (4, 4, 4, 23), (2, 0, 4, 23), (0, 0, 4, 23)],
    ),
    select(
        "Smart select link inside text",
        lines(f"stuff here [te{C}xt](https://google.com) and here"),
        [(0, 12, 0, 26), (0, 11, 0, 47), (0, 0, 0, 56)],
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_smart_select(client, tmp_path, case):
    await run_selection(client, tmp_path, case)
