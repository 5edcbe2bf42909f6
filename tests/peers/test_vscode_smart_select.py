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
section and ends with the whole document, its stops end at the last line that
is not blank, and VS Code's first stop in a paragraph of exactly two lines is
the cursor's line.

Inside a table both stop at the cell's content, the cell, the row and (in a
body row) the body before the table.

All of the peer's tests are ported (the two with several assertions, on
angle-bracket and image links, split into one case per assertion; its second
``Smart select without multiple ranges`` repeats the first word for word and is
one case here).
"""

from __future__ import annotations

import pytest
from peer_support import CURSOR, lines, params, run_selection, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

DOC = "mdseek's last stop is the whole document"
PAIR = "VS Code's first stop in a paragraph of exactly two lines is the cursor's line (in a paragraph of one or three lines, the paragraph); mdseek's is the paragraph"
HEADING_LINE = "mdseek stops at the heading line before its section"
TRIM = "mdseek's stops end at the last line that is not blank (here a section's text before its subsection); VS Code's run to the line before the subsection"


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
        "Smart select fenced code block then list then subheader content then subheader then header content then header",
        lines(
            "# main header 1",
            "content 1",
            "## sub header 1",
            "- item 1",
            "- ~~~",
            f"  {C}a",
            "  ~~~",
            "- item 3",
            "- item 4",
            "",
            "more content",
            "# main header 2",
        ),
        [(4, 6), (3, 8), (3, 10), (2, 10), (1, 10), (0, 10)],
        convention=DOC,
    ),
    select(
        "Smart select list with one element without selecting child subheader",
        lines(
            "# main header 1",
            "",
            f"- list {C}",
            "",
            "## sub header",
            "",
            "content 2",
            "# main header 2",
        ),
        [(2, 2), (1, 3), (1, 6), (0, 6)],
        convention=TRIM + "; and " + DOC,
    ),
    select(
        "Smart select content under header then subheaders and their content",
        lines(
            f"# main {C}header 1",
            "",
            "- list",
            "paragraph",
            "## sub header",
            "",
            "content 2",
            "# main header 2",
        ),
        [(0, 3), (0, 6)],
        convention=HEADING_LINE + "; and " + DOC,
    ),
    select(
        "Smart select last blockquote element under header then subheaders and their content",
        lines(
            "# main header 1",
            "",
            "> block",
            "> block",
            ">> block",
            f">> {C}block",
            "",
            "paragraph",
            "## sub header",
            "",
            "content 2",
            "# main header 2",
        ),
        [(5, 5), (4, 5), (2, 5), (1, 7), (1, 10), (0, 10)],
        convention=PAIR + "; and " + DOC,
    ),
    select(
        "Smart select content of subheader then subheader then content of main header then main header",
        lines(
            "# main header 1",
            "",
            "> block",
            "> block",
            ">> block",
            ">> block",
            "",
            "paragraph",
            "## sub header",
            "",
            "",
            C,
            "",
            "### main header 2",
            "- content 2",
            "- content 2",
            "- content 2",
            "content 2",
        ),
        [(11, 11), (9, 12), (9, 17), (8, 17), (1, 17), (0, 17)],
        convention=TRIM,
    ),
    select(
        "Smart select last line content of subheader then subheader then content of main header then main header",
        lines(
            "# main header 1",
            "",
            "> block",
            "> block",
            ">> block",
            ">> block",
            "",
            "paragraph",
            "## sub header",
            "",
            "",
            "",
            "",
            "### main header 2",
            "- content 2",
            "- content 2",
            "- content 2",
            f"- {C}content 2",
        ),
        [(17, 17), (14, 17), (13, 17), (9, 17), (8, 17), (1, 17), (0, 17)],
    ),
    select(
        "Smart select last line content after content of subheader then subheader then content of main header then main header",
        lines(
            "# main header 1",
            "",
            "> block",
            "> block",
            ">> block",
            ">> block",
            "",
            "paragraph",
            "## sub header",
            "",
            "",
            "",
            "",
            "### main header 2",
            "- content 2",
            "- content 2",
            "- content 2",
            f"- content 2{C}",
        ),
        [(17, 17), (14, 17), (13, 17), (9, 17), (8, 17), (1, 17), (0, 17)],
    ),
    select(
        "Smart select fenced code block then list then rest of content",
        lines(
            "# main header 1",
            "",
            "> block",
            "> block",
            ">> block",
            ">> block",
            "",
            "- paragraph",
            "- ~~~",
            "  my",
            f"  {C}code",
            "  goes here",
            "  ~~~",
            "- content",
            "- content 2",
            "- content 2",
            "- content 2",
            "- content 2",
        ),
        [(9, 11), (8, 12), (7, 17), (1, 17), (0, 17)],
    ),
    select(
        "Smart select fenced code block then list then rest of content on fenced line",
        lines(
            "# main header 1",
            "",
            "> block",
            "> block",
            ">> block",
            ">> block",
            "",
            "- paragraph",
            f"- ~~~{C}",
            "  my",
            "  code",
            "  goes here",
            "  ~~~",
            "- content",
            "- content 2",
            "- content 2",
            "- content 2",
            "- content 2",
        ),
        [(8, 12), (7, 17), (1, 17), (0, 17)],
    ),
    select(
        "Third level header from release notes",
        lines(
            "---",
            "Order: 60",
            "TOCTitle: October 2020",
            "PageTitle: Visual Studio Code October 2020",
            "MetaDescription: Learn what is new in the Visual Studio Code October 2020 Release (1.51)",
            "MetaSocialImage: 1_51/release-highlights.png",
            "Date: 2020-11-6",
            "DownloadVersion: 1.51.1",
            "---",
            "# October 2020 (version 1.51)",
            "",
            "**Update 1.51.1**: The update addresses these [issues](https://github.com/microsoft/vscode/issues?q=is%3Aissue+milestone%3A%22October+2020+Recovery%22+is%3Aclosed+).",
            "",
            "<!-- DOWNLOAD_LINKS_PLACEHOLDER -->",
            "",
            "---",
            "",
            "Welcome to the October 2020 release of Visual Studio Code. As announced in the [October iteration plan](https://github.com/microsoft/vscode/issues/108473), we focused on housekeeping GitHub issues and pull requests as documented in our issue grooming guide.",
            "",
            "We also worked with our partners at GitHub on GitHub Codespaces, which ended up being more involved than originally anticipated. To that end, we'll continue working on housekeeping for part of the November iteration.",
            "",
            "During this housekeeping milestone, we also addressed several feature requests and community [pull requests](#thank-you). Read on to learn about new features and settings.",
            "",
            "## Workbench",
            "",
            "### More prominent pinned tabs",
            "",
            f"{C}Pinned tabs will now always show their pin icon, even while inactive, to make them easier to identify. If an editor is both pinned and contains unsaved changes, the icon reflects both states.",
            "",
            "![Inactive pinned tabs showing pin icons](images/1_51/pinned-tabs.png)",
        ),
        [
            (27, 0, 27, 201),
            (26, 0, 29, 70),
            (25, 0, 29, 70),
            (24, 0, 29, 70),
            (23, 0, 29, 70),
            (10, 0, 29, 70),
            (9, 0, 29, 70),
        ],
        convention=DOC,
    ),
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
        "Smart select link inside href",
        f"stuff here [text](https{C}://google.com) and here",
        [(0, 18, 0, 46), (0, 17, 0, 47), (0, 11, 0, 47), (0, 0, 0, 56)],
    ),
    select(
        "Smart select link in text under header in list",
        lines(
            "# main header 1",
            "",
            "- list",
            "paragraph",
            "## sub header",
            "- list",
            f"- stuff here [te{C}xt](https://google.com) and here",
            "- list",
        ),
        [
            (6, 14, 6, 28),
            (6, 13, 6, 49),
            (6, 0, 6, 58),
            (5, 0, 7, 6),
            (4, 0, 7, 6),
            (1, 0, 7, 6),
            (0, 0, 7, 6),
        ],
    ),
    select(
        "Smart select link in href under header in list",
        lines(
            "# main header 1",
            "",
            "- list",
            "paragraph",
            "## sub header",
            "- list",
            f"- stuff here [text]({C}https://google.com) and here",
            "- list",
        ),
        [
            (6, 20, 6, 48),
            (6, 19, 6, 49),
            (6, 13, 6, 49),
            (6, 0, 6, 58),
            (5, 0, 7, 6),
            (4, 0, 7, 6),
            (1, 0, 7, 6),
            (0, 0, 7, 6),
        ],
    ),
    select(
        "Smart select link in paragraph with multiple links",
        "This[extension](https://marketplace.visualstudio.com/items?itemName=meganrogge.template-string-converter)"
        f"  addresses this [requ{C}est](https://github.com/microsoft/vscode/issues/56704) to convert "
        "Javascript/Typescript quotes to backticks when has been entered within a string.",
        [(0, 123, 0, 140), (0, 122, 0, 191), (0, 0, 0, 283)],
    ),
    select(
        "Smart select inline code block",
        f"[`code {C} link`]",
        [(0, 2, 0, 22), (0, 1, 0, 23), (0, 0, 0, 24)],
    ),
    select(
        "Smart select link with inline code block text",
        f"[`code {C} link`](http://example.com)",
        [(0, 2, 0, 22), (0, 1, 0, 23), (0, 0, 0, 44)],
    ),
    select(
        "Smart select link in checkbox list",
        f"- [ ] [text{C}](https://example.com)",
        [(0, 7, 0, 21), (0, 6, 0, 43), (0, 0, 0, 43)],
    ),
    select(
        "Smart select of link title",
        f'a [text](https://example.com "a{C}title") b',
        [(0, 29, 0, 47), (0, 9, 0, 47), (0, 8, 0, 48), (0, 2, 0, 48), (0, 0, 0, 50)],
    ),
    select(
        "Smart select of link with title should have extra stop with just href",
        f'a [text](https{C}://example.com "atitle") b',
        [(0, 9, 0, 38), (0, 9, 0, 47), (0, 8, 0, 48), (0, 2, 0, 48), (0, 0, 0, 50)],
    ),
    select(
        "Smart select of angle bracket link should create stops within angle bracket#1",
        f"a [text](<file {C}path>) b",
        [(0, 10, 0, 29), (0, 9, 0, 30), (0, 8, 0, 31), (0, 2, 0, 31), (0, 0, 0, 33)],
    ),
    {
        "name": "Smart select of angle bracket link should create stops within angle bracket#2",
        "files": {},
        "text": "a [text](<file path>) b",
        "positions": [(0, 9)],
        "chains": [[(0, 9, 0, 20), (0, 8, 0, 21), (0, 2, 0, 21), (0, 0, 0, 23)]],
    },
    select(
        "Smart select of angle bracket link should create stops within angle bracket#3",
        f'a [text](<file {C}path> "title") b',
        [
            (0, 10, 0, 29),
            (0, 9, 0, 30),
            (0, 9, 0, 38),
            (0, 8, 0, 39),
            (0, 2, 0, 39),
            (0, 0, 0, 41),
        ],
    ),
    select(
        "Smart select of link definition in ref name",
        f"[a{C}]: http://example.com",
        [(0, 1, 0, 12), (0, 0, 0, 33)],
    ),
    select(
        "Smart select of link definition in target",
        f"[a]: http{C}://example.com",
        [(0, 5, 0, 33), (0, 0, 0, 33)],
    ),
    select(
        "Smart select of autolinks ",
        f"a <http://{C}example.com> b",
        [(0, 3, 0, 31), (0, 2, 0, 32), (0, 0, 0, 34)],
    ),
    select(
        "Smart select for image link#1",
        f"[![alt](http://example.com)](http://example.com{C})",
        [(0, 29, 0, 57), (0, 28, 0, 58), (0, 0, 0, 58)],
    ),
    select(
        "Smart select for image link#2",
        f"[![alt](http://example.com/inner{C})](http://example.com/outer)",
        [(0, 8, 0, 42), (0, 7, 0, 43), (0, 1, 0, 43), (0, 0, 0, 70)],
    ),
    select(
        "Smart select bold",
        f"stuff here **new{C}item** and here",
        [(0, 13, 0, 30), (0, 11, 0, 32), (0, 0, 0, 41)],
    ),
    select(
        "Smart select bold within list where multiple bold elements exists",
        lines(
            "# main header 1",
            "",
            "- list",
            "paragraph",
            "## sub header",
            "- list",
            f"- stuff here [text] **{C}items in here** and **here**",
            "- list",
        ),
        [
            (6, 22, 6, 45),
            (6, 20, 6, 47),
            (6, 0, 6, 60),
            (5, 0, 7, 6),
            (4, 0, 7, 6),
            (1, 0, 7, 6),
            (0, 0, 7, 6),
        ],
    ),
    select(
        "Smart select bold link",
        f"**[extens{C}ion](https://google.com)**",
        [(0, 3, 0, 22), (0, 2, 0, 43), (0, 0, 0, 45)],
    ),
    select("Smart select italic", f"*some nice {C}text*", [(0, 1, 0, 25), (0, 0, 0, 26)]),
    select(
        "Smart select italic link",
        f"*[extens{C}ion](https://google.com)*",
        [(0, 2, 0, 21), (0, 1, 0, 42), (0, 0, 0, 43)],
    ),
    select("Smart select italic on end", f"*word1 word2 word3{C}*", [(0, 1, 0, 28), (0, 0, 0, 29)]),
    select(
        "Smart select italic then bold",
        f"outer text **bold words *italic {C} words* bold words** outer text",
        [(0, 25, 0, 48), (0, 24, 0, 49), (0, 13, 0, 60), (0, 11, 0, 62), (0, 0, 0, 73)],
    ),
    select(
        "Smart select bold then italic",
        f"outer text *italic words **bold {C} words** italic words* outer text",
        [(0, 27, 0, 48), (0, 25, 0, 50), (0, 12, 0, 63), (0, 11, 0, 64), (0, 0, 0, 75)],
    ),
    select(
        "Smart select table cell with bold content",
        lines(f"| a | **bold{C}** |", "|---|---|", "| 1 | 2 |"),
        [(0, 8, 0, 22), (0, 6, 0, 24), (0, 5, 0, 25), (0, 4, 0, 26), (0, 0, 0, 26), (0, 0, 2, 9)],
    ),
    select(
        "Smart select table cell with inline code",
        lines(f"| a | `code{C}` |", "|---|---|", "| 1 | 2 |"),
        [(0, 7, 0, 21), (0, 6, 0, 22), (0, 5, 0, 23), (0, 4, 0, 24), (0, 0, 0, 24), (0, 0, 2, 9)],
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
