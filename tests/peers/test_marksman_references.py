"""marksman's Tests/RefsTests.fs (references), ported.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms: ``Dest.findElementRefs withDecl folder doc el`` on
the element at a position is ``textDocument/references`` there with
``includeDeclaration: withDecl``; the peer's (file, range) of each reference is
compared with mdseek's locations (sorted).

Wiki links: marksman (default ``complWikiStyle = title-slug``) reaches a note
by the slug of its title (``[[doc-2]]`` for ``# Doc 2`` in ``doc2.md``), as
mdseek does when no file name matches (a file name first, as Obsidian).

Not ported: the ``InternNameTests`` and ``FileLinkTests`` (marksman's internal
name resolution, under per-test configurations), the four link-definition
label tests (references of ``[d2-link-1]``, which mdseek does not give), the
peer's skipped footnote test.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_references, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

TITLE_REFS = "marksman's references of a note's title are every link to the note, to its other headings too ([[doc-1#dup]]); mdseek's, as VS Code's on a heading, are the links to the title and to the file"

BASIC = {
    "doc1.md": lines(
        "# Doc 1",
        "",
        "## D1 H2.1",
        "",
        "[[doc-2#d2-h22]]",
        "",
        "## D1 H2.2",
        "",
        "[[#dup]]",
        "",
        "## Dup",
        "Entry 1",
        "",
        "## Dup",
        "Entry 2",
        "",
        "#tag1 #tag2",
    ),
    "doc2.md": lines(
        "# Doc 2",
        "",
        "# D2 H2.1",
        "",
        "[D2-Link-1]",
        "",
        "[[#d2-h22]]",
        "",
        "[d2-LINK-1]",
        "",
        "# D2 H2.2",
        "",
        "[[doc-1]]",
        "[[doc-1#dup]]",
        "[lbl1](/doc1.md)",
        "[^fn1]",
        "",
        "[d2-link-1]: some-url",
        "",
        "[^fn1]: This is footnote",
        "",
        "#tag1",
    ),
}
KINDS = {
    "file1.md": lines(
        "# Doc 1 Title",
        "[[file2]]",
        "[[file2.md]]",
        "[[file2#doc-2-subtitle]]",
        "[[doc-2-title]]",
        "[link](file2)",
        "[[file3]]",
    ),
    "file2.md": lines("# Doc 2 Title", "## Doc 2 SubTitle", "[[doc-3-title]]"),
    "sub/file3.md": lines("# Doc 3 Title"),
}

CASES: list[dict] = [
    {
        "name": "BasicRefsTests.refToTag_atTag",
        "files": BASIC,
        "at": "doc2.md",
        "pos": (21, 1),
        "include_declaration": False,
        "refs": [("doc1.md", 16, 0, 5)],
        "convention": "mdseek's references of a tag always list the one under the cursor too",
    },
    {
        "name": "BasicRefsTests.refToTag_atTag_withDecl",
        "files": BASIC,
        "at": "doc2.md",
        "pos": (21, 1),
        "refs": [("doc1.md", 16, 0, 5), ("doc2.md", 21, 0, 5)],
    },
    {
        "name": "BasicRefsTests.refToDoc_atTitle",
        "files": BASIC,
        "at": "doc1.md",
        "pos": (0, 2),
        "include_declaration": False,
        "refs": [("doc2.md", 12, 0, 9), ("doc2.md", 13, 0, 13), ("doc2.md", 14, 0, 16)],
        "convention": TITLE_REFS,
    },
    {
        "name": "BasicRefsTests.refToDoc_atTitle_withDecl",
        "files": BASIC,
        "at": "doc1.md",
        "pos": (0, 2),
        "refs": [
            ("doc1.md", 0, 0, 7),
            ("doc2.md", 12, 0, 9),
            ("doc2.md", 13, 0, 13),
            ("doc2.md", 14, 0, 16),
        ],
        "convention": TITLE_REFS,
    },
    {
        "name": "BasicRefsTests.refToDoc_atLink",
        "files": BASIC,
        "at": "doc1.md",
        "pos": (4, 4),
        "include_declaration": False,
        "refs": [("doc1.md", 4, 0, 16), ("doc2.md", 6, 0, 11)],
    },
    {
        "name": "BasicRefsTests.refToDoc_atLink_withDecl",
        "files": BASIC,
        "at": "doc1.md",
        "pos": (4, 4),
        "refs": [("doc1.md", 4, 0, 16), ("doc2.md", 6, 0, 11), ("doc2.md", 10, 0, 9)],
    },
    {
        "name": "LinkKindRefsTests.atWiki_VariousFilenames",
        "files": KINDS,
        "at": "file1.md",
        "pos": (1, 2),
        "include_declaration": False,
        "refs": [
            ("file1.md", 1, 0, 9),
            ("file1.md", 2, 0, 12),
            ("file1.md", 3, 0, 24),
            ("file1.md", 4, 0, 15),
            ("file1.md", 5, 0, 13),
        ],
    },
    {
        "name": "LinkKindRefsTests.atWiki_Filenames_Subfolder",
        "files": KINDS,
        "at": "file2.md",
        "pos": (2, 3),
        "include_declaration": False,
        "refs": [("file1.md", 6, 0, 9), ("file2.md", 2, 0, 15)],
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_references(client, tmp_path, case):
    await run_references(client, tmp_path, case)
