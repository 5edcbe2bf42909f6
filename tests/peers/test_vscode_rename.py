"""VS Code's markdown language service, src/test/rename.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms:
* The peer's InMemoryWorkspace is the case's folder on disk; ``workspacePath(x)``
  is ``x`` in it. Files the peer's workspace does not hold do not exist.
* ``getRenameEdits`` is ``textDocument/rename``; the peer's expected text edits
  are applied to the documents and the resulting texts compared with the texts
  mdseek's WorkspaceEdit gives (so how an edit is cut -- the whole destination
  or its path only -- does not matter, what the file says afterwards does);
  expected file renames are compared as (old path, new path).
* ``prepareRename`` is ``textDocument/prepareRename``: range and placeholder;
  a rejected promise is an error answer or null.

Not ported (features mdseek does not have): renaming reference labels
(``[text][ref]`` -> ``[text][new ref]``, 3 tests), renaming http URLs (1),
renaming image or other non-markdown paths (``Path rename should work with
unknown files``, ``... html tags``, the three angle-bracket ``cat.gif`` tests:
5), HTML ``id`` attributes (4 tests), and the peer's own skipped test.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_rename, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

ABC_DOC = lines("### A b C", "[text](#a-b-c)")
ABC_OTHER = lines("[text](#a-b-c)", "[text](./doc.md#a-b-c)", "[text](./doc#a-b-c)")
ABC_EDITS = {
    "doc.md": [((0, 4, 0, 9), "New Header"), ((1, 8, 1, 13), "new-header")],
    "other.md": [((1, 16, 1, 21), "new-header"), ((2, 13, 2, 18), "new-header")],
}

CASES: list[dict] = [
    # -- Header rename -------------------------------------------------------------
    {
        "name": "Rename on header should not include leading # (prepare)",
        "files": {"doc.md": lines("# abc")},
        "pos": (0, 0),
        "prepare": ((0, 2, 0, 5), "abc"),
    },
    {
        "name": "Rename on header should not include leading #",
        "files": {"doc.md": lines("# abc")},
        "pos": (0, 0),
        "new_name": "New Header",
        "edits": {"doc.md": [((0, 2, 0, 5), "New Header")]},
    },
    {
        "name": "Rename on header should include leading or trailing #s (prepare)",
        "files": {"doc.md": lines("### abc ###")},
        "pos": (0, 0),
        "prepare": ((0, 4, 0, 7), "abc"),
    },
    {
        "name": "Rename on header should include leading or trailing #s",
        "files": {"doc.md": lines("### abc ###")},
        "pos": (0, 0),
        "new_name": "New Header",
        "edits": {"doc.md": [((0, 4, 0, 7), "New Header")]},
    },
    {
        "name": "Rename on header should pick up links in doc",
        "files": {"doc.md": ABC_DOC},
        "pos": (0, 0),
        "new_name": "New Header",
        "edits": {"doc.md": [((0, 4, 0, 9), "New Header"), ((1, 8, 1, 13), "new-header")]},
    },
    {
        "name": "Rename on link should use slug for link",
        "files": {"doc.md": ABC_DOC},
        "pos": (1, 10),
        "new_name": "New Header",
        "edits": {"doc.md": [((0, 4, 0, 9), "New Header"), ((1, 8, 1, 13), "new-header")]},
    },
    {
        "name": "Rename on link definition should work",
        "files": {"doc.md": lines("### A b C", "[text](#a-b-c)", "[ref]: #a-b-c")},
        "pos": (2, 10),
        "new_name": "New Header",
        "edits": {
            "doc.md": [
                ((0, 4, 0, 9), "New Header"),
                ((1, 8, 1, 13), "new-header"),
                ((2, 8, 2, 13), "new-header"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename on header should pick up links across files",
        "files": {"doc.md": ABC_DOC, "other.md": ABC_OTHER},
        "pos": (0, 0),
        "new_name": "New Header",
        "edits": ABC_EDITS,
    },
    {
        "name": "Rename on link should pick up links across files",
        "files": {"doc.md": ABC_DOC, "other.md": ABC_OTHER},
        "pos": (1, 10),
        "new_name": "New Header",
        "edits": ABC_EDITS,
    },
    {
        "name": "Rename on link in other file should pick up all refs#1",
        "files": {"doc.md": ABC_DOC, "other.md": ABC_OTHER},
        "at": "other.md",
        "pos": (1, 17),
        "new_name": "New Header",
        "edits": ABC_EDITS,
    },
    {
        "name": "Rename on link in other file should pick up all refs#2",
        "files": {"doc.md": ABC_DOC, "other.md": ABC_OTHER},
        "at": "other.md",
        "pos": (2, 15),
        "new_name": "New Header",
        "edits": ABC_EDITS,
    },
    {
        "name": "Rename on header should rename html tags",
        "files": {"doc.md": lines("### A b C", '<a href="#a-b-c">text</a>')},
        "pos": (0, 0),
        "new_name": "New Header",
        "edits": {"doc.md": [((0, 4, 0, 9), "New Header"), ((1, 10, 1, 15), "new-header")]},
        "convention": "mdseek follows markdown links only, not href attributes of inline HTML",
    },
    {
        "name": "Rename should add unique id when new name duplicates existing header",
        "files": {
            "doc.md": lines(
                "# header a",
                "# header b",
                "# header a",
                "[h1](#header-a)",
                "[h1](#header-b)",
                "[h1](#header-a-1)",
            )
        },
        "pos": (1, 0),
        "new_name": "header a",
        "edits": {
            "doc.md": [
                ((5, 6, 5, 16), "header-a-2"),
                ((1, 2, 1, 10), "header a"),
                ((4, 6, 4, 14), "header-a-1"),
            ]
        },
        "convention": "mdseek refuses a new name whose anchor another heading of the file already has (docs/language-server.md: Rename)",
    },
    {
        "name": "Rename should remove ids when renaming duplicated header to new name",
        "files": {"doc.md": lines("# header", "# header", "[h1](#header)", "[h1](#header-1)")},
        "pos": (0, 0),
        "new_name": "New Header",
        "edits": {
            "doc.md": [
                ((3, 6, 3, 14), "header"),
                ((0, 2, 0, 8), "New Header"),
                ((2, 6, 2, 12), "new-header"),
            ]
        },
    },
    # -- Reference rename: the parts about headings and paths ----------------------------
    {
        "name": "Rename on definition entry should rename header and references (prepare)",
        "files": {
            "doc.md": lines("# a B c", "[ref text][ref]", "[direct](#a-b-c)", "[ref]: #a-b-c")
        },
        "pos": (3, 10),
        "prepare": ((3, 8, 3, 13), "a B c"),
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition); '#a-b-c' in that text is a tag",
    },
    {
        "name": "Rename on definition entry should rename header and references",
        "files": {
            "doc.md": lines("# a B c", "[ref text][ref]", "[direct](#a-b-c)", "[ref]: #a-b-c")
        },
        "pos": (3, 10),
        "new_name": "x Y z",
        "edits": {
            "doc.md": [
                ((0, 2, 0, 7), "x Y z"),
                ((2, 10, 2, 15), "x-y-z"),
                ((3, 8, 3, 13), "x-y-z"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition); '#a-b-c' in that text is a tag",
    },
    {
        "name": "Rename should not be supported on link text",
        "files": {"doc.md": lines("# Header", "[text](#header)")},
        "pos": (1, 2),
        "prepare": None,
        "convention": "mdseek renames what a link points to from anywhere in the link, its text included (docs/language-server.md: Rename)",
    },
    {
        "name": "Path rename should use file path as range",
        "files": {"doc.md": lines("[text](./doc.md)", "[ref]: ./doc.md")},
        "pos": (0, 10),
        "prepare": ((0, 7, 0, 15), "./doc.md"),
    },
    {
        "name": "Path rename's range should excludes fragment",
        "files": {"doc.md": lines("[text](./doc.md#some-header)", "[ref]: ./doc.md#some-header")},
        "pos": (0, 10),
        "prepare": ((0, 7, 0, 15), "./doc.md"),
    },
    {
        "name": "Path rename should update file and all refs",
        "files": {"doc.md": lines("[text](./doc.md)", "[ref]: ./doc.md")},
        "pos": (0, 10),
        "new_name": "./sub/newDoc.md",
        "renames": [("doc.md", "sub/newDoc.md")],
        "edits": {
            "doc.md": [((0, 7, 0, 15), "./sub/newDoc.md"), ((1, 7, 1, 15), "./sub/newDoc.md")]
        },
        "convention": "mdseek rewrites the moved file's link to itself to resolve from its new place (./newDoc.md; VS Code's ./sub/newDoc.md would point at sub/sub/newDoc.md), and CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Path rename using absolute file path should anchor to workspace root",
        "files": {"sub/doc.md": lines("[text](/sub/doc.md)", "[ref]: /sub/doc.md")},
        "at": "sub/doc.md",
        "pos": (0, 10),
        "new_name": "/newSub/newDoc.md",
        "renames": [("sub/doc.md", "newSub/newDoc.md")],
        "edits": {
            "sub/doc.md": [
                ((0, 7, 0, 18), "/newSub/newDoc.md"),
                ((1, 7, 1, 18), "/newSub/newDoc.md"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Path rename should use un-encoded paths as placeholder",
        "files": {"sub/doc with spaces.md": lines("[text](/sub/doc%20with%20spaces.md)")},
        "at": "sub/doc with spaces.md",
        "pos": (0, 10),
        "prepare": ((0, 7, 0, 34), "/sub/doc with spaces.md"),
        "convention": "mdseek offers the path as the link writes it (%20 kept) and takes the new name the same way",
    },
    {
        "name": "Path rename should handle paths with spaces",
        "files": {"sub/doc.md": lines("[text](/sub/doc.md)", "[ref]: /sub/doc.md")},
        "at": "sub/doc.md",
        "pos": (0, 10),
        "new_name": "/NEW sub/new DOC.md",
        "renames": [("sub/doc.md", "NEW sub/new DOC.md")],
        "edits": {
            "sub/doc.md": [
                ((0, 7, 0, 18), "</NEW sub/new DOC.md>"),
                ((1, 7, 1, 18), "</NEW sub/new DOC.md>"),
            ]
        },
        "convention": "mdseek %-encodes spaces in a rewritten path where VS Code wraps it in <...>, and CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Path rename should use .md extension on extension-less link",
        "files": {"doc.md": lines("[text](/doc#header)", "[ref]: /doc#other")},
        "pos": (0, 10),
        "new_name": "/new File",
        "renames": [("doc.md", "new File.md")],
        "edits": {
            "doc.md": [
                ((0, 7, 0, 18), "</new File#header>"),
                ((1, 7, 1, 17), "</new File#other>"),
            ]
        },
        "convention": "mdseek %-encodes spaces in a rewritten path where VS Code wraps it in <...>, and CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Path rename should resolve on links without prefix",
        "files": {
            "sub/doc.md": lines("![text](sub2/doc3.md)"),
            "doc2.md": lines("![text](sub/sub2/doc3.md)"),
            "sub/sub2/doc3.md": "",
        },
        "at": "sub/doc.md",
        "pos": (0, 10),
        "new_name": "sub2/cat.md",
        "renames": [("sub/sub2/doc3.md", "sub/sub2/cat.md")],
        "edits": {
            "sub/doc.md": [((0, 8, 0, 20), "sub2/cat.md")],
            "doc2.md": [((0, 8, 0, 24), "sub/sub2/cat.md")],
        },
    },
    {
        "name": "Rename on link should use header text as placeholder",
        "files": {"doc.md": lines("### a B c ###", "[text](#a-b-c)")},
        "pos": (1, 10),
        "prepare": ((1, 8, 1, 13), "a B c"),
    },
    {
        "name": "Rename on definition path should update all references to path (prepare)",
        "files": {"doc.md": lines("[ref text][ref]", "[direct](/file)", "[ref]: /file")},
        "pos": (2, 10),
        "prepare": ((2, 7, 2, 12), "/file"),
        "convention": "mdseek renames only what a link reaches (/file does not exist), and CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename on definition path should update all references to path",
        "files": {"doc.md": lines("[ref text][ref]", "[direct](/file)", "[ref]: /file")},
        "pos": (2, 10),
        "new_name": "/newFile",
        "edits": {"doc.md": [((1, 9, 1, 14), "/newFile"), ((2, 7, 2, 12), "/newFile")]},
        "convention": "mdseek renames only what a link reaches (/file does not exist), and CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename on definition path where file exists should also update file (prepare)",
        "files": {
            "doc.md": lines("[ref text][ref]", "[direct](/doc2)", "[ref]: /doc2"),
            "doc2.md": "",
        },
        "pos": (2, 10),
        "prepare": ((2, 7, 2, 12), "/doc2"),
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename on definition path where file exists should also update file",
        "files": {
            "doc.md": lines("[ref text][ref]", "[direct](/doc2)", "[ref]: /doc2"),
            "doc2.md": "",
        },
        "pos": (2, 10),
        "new_name": "/new-doc",
        "renames": [("doc2.md", "new-doc.md")],
        "edits": {"doc.md": [((1, 9, 1, 14), "/new-doc"), ((2, 7, 2, 12), "/new-doc")]},
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename on definition path header should update all references to header (prepare)",
        "files": {
            "doc.md": lines("[ref text][ref]", "[direct](/file#header)", "[ref]: /file#header")
        },
        "pos": (2, 16),
        "prepare": ((2, 13, 2, 19), "header"),
        "convention": "mdseek renames only what a link reaches (/file does not exist), and CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename on definition path header should update all references to header",
        "files": {
            "doc.md": lines("[ref text][ref]", "[direct](/file#header)", "[ref]: /file#header")
        },
        "pos": (2, 16),
        "new_name": "New Header",
        "edits": {"doc.md": [((1, 15, 1, 21), "new-header"), ((2, 13, 2, 19), "new-header")]},
        "convention": "mdseek renames only what a link reaches (/file does not exist), and CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)",
    },
    # -- the same, with a blank line before the definition (CommonMark then reads it
    # as one; lines after it move down by one) ---------------------------------------
    {
        "name": "Rename on link definition should work [blank line before the definition]",
        "files": {"doc.md": lines("### A b C", "[text](#a-b-c)", "", "[ref]: #a-b-c")},
        "pos": (3, 10),
        "new_name": "New Header",
        "edits": {
            "doc.md": [
                ((0, 4, 0, 9), "New Header"),
                ((1, 8, 1, 13), "new-header"),
                ((3, 8, 3, 13), "new-header"),
            ]
        },
    },
    {
        "name": "Rename on definition entry should rename header and references [blank line before the definition] (prepare)",
        "files": {
            "doc.md": lines("# a B c", "[ref text][ref]", "[direct](#a-b-c)", "", "[ref]: #a-b-c")
        },
        "pos": (4, 10),
        "prepare": ((4, 8, 4, 13), "a B c"),
    },
    {
        "name": "Rename on definition entry should rename header and references [blank line before the definition]",
        "files": {
            "doc.md": lines("# a B c", "[ref text][ref]", "[direct](#a-b-c)", "", "[ref]: #a-b-c")
        },
        "pos": (4, 10),
        "new_name": "x Y z",
        "edits": {
            "doc.md": [
                ((0, 2, 0, 7), "x Y z"),
                ((2, 10, 2, 15), "x-y-z"),
                ((4, 8, 4, 13), "x-y-z"),
            ]
        },
    },
    {
        "name": "Path rename using absolute file path should anchor to workspace root [blank line before the definition]",
        "files": {"sub/doc.md": lines("[text](/sub/doc.md)", "", "[ref]: /sub/doc.md")},
        "at": "sub/doc.md",
        "pos": (0, 10),
        "new_name": "/newSub/newDoc.md",
        "renames": [("sub/doc.md", "newSub/newDoc.md")],
        "edits": {
            "sub/doc.md": [
                ((0, 7, 0, 18), "/newSub/newDoc.md"),
                ((2, 7, 2, 18), "/newSub/newDoc.md"),
            ]
        },
    },
    {
        "name": "Rename on definition path where file exists should also update file [blank line before the definition] (prepare)",
        "files": {
            "doc.md": lines("[ref text][ref]", "[direct](/doc2)", "", "[ref]: /doc2"),
            "doc2.md": "",
        },
        "pos": (3, 10),
        "prepare": ((3, 7, 3, 12), "/doc2"),
    },
    {
        "name": "Rename on definition path where file exists should also update file [blank line before the definition]",
        "files": {
            "doc.md": lines("[ref text][ref]", "[direct](/doc2)", "", "[ref]: /doc2"),
            "doc2.md": "",
        },
        "pos": (3, 10),
        "new_name": "/new-doc",
        "renames": [("doc2.md", "new-doc.md")],
        "edits": {"doc.md": [((1, 9, 1, 14), "/new-doc"), ((3, 7, 3, 12), "/new-doc")]},
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_rename(client, tmp_path, case):
    await run_rename(client, tmp_path, case)
