"""VS Code's markdown language service, src/test/fileRename.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms:
* ``getRenameFilesInWorkspaceEdit`` is ``workspace/willRenameFiles``, which an
  editor sends *before* it moves the files. So the case's folder is the peer's
  workspace as it was before the move: where the peer builds it "in the state
  just after the rename", the moved documents sit at their old paths here, and
  the edits the peer addresses to a moved document's new URI are addressed to
  its old one (same text, same ranges). The moved file itself exists (empty
  when the peer's workspace does not list it).
* The peer's expected text edits are applied to the documents and the texts
  compared with what mdseek's WorkspaceEdit gives.

Not ported: ``Rename file should drop file extensions if it has been configured
to`` (mdseek has no such setting); the part of ``Should update links when
renaming multiple files`` about ``participatingRenames`` (not in LSP).
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_file_rename, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

CASES: list[dict] = [
    {
        "name": "Rename file should update links",
        "files": {
            "doc.md": lines(
                "[abc](/old.md)",
                "[abc](old.md)",
                "[abc](./old.md)",
                "[xyz]: ./old.md",
                "[abc](/other.md)",
                "[xyz1]: ./other.md",
            ),
            "old.md": None,
        },
        "moves": [("old.md", "new.md")],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 13), "/new.md"),
                ((1, 6, 1, 12), "new.md"),
                ((2, 6, 2, 14), "./new.md"),
                ((3, 7, 3, 15), "./new.md"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename file should preserve fragments",
        "files": {
            "doc.md": lines(
                "[abc](/old.md#frag)",
                "[abc](old.md#frag)",
                "[abc](./old.md#frag)",
                "[xyz]: ./old.md#frag",
            ),
            "old.md": None,
        },
        "moves": [("old.md", "new.md")],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 18), "/new.md#frag"),
                ((1, 6, 1, 17), "new.md#frag"),
                ((2, 6, 2, 19), "./new.md#frag"),
                ((3, 7, 3, 20), "./new.md#frag"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename file should preserve usage of file extensions by default",
        "files": {
            "doc.md": lines(
                "[abc](/old#frag)",
                "[abc](old#frag)",
                "[abc](./old#frag)",
                "[xyz]: ./old#frag",
            ),
            "old.md": None,
        },
        "moves": [("old.md", "new.md")],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 15), "/new#frag"),
                ((1, 6, 1, 14), "new#frag"),
                ((2, 6, 2, 16), "./new#frag"),
                ((3, 7, 3, 17), "./new#frag"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename file should handle links with spaces",
        "files": {
            "doc.md": lines(
                "[abc](/old.md)",
                "[abc](old.md)",
                "[abc](./old.md)",
                "[xyz]: ./old.md",
                "[abc](/other.md)",
                "[xyz1]: ./other.md",
            ),
            "old.md": None,
        },
        "moves": [("old.md", "new with space.md")],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 13), "</new with space.md>"),
                ((1, 6, 1, 12), "<new with space.md>"),
                ((2, 6, 2, 14), "<./new with space.md>"),
                ((3, 7, 3, 15), "<./new with space.md>"),
            ]
        },
        "convention": "mdseek %-encodes a space in a rewritten destination where VS Code wraps it in <...>, and CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Should support multiple file renames",
        "files": {
            "doc.md": lines(
                "[cat](/cat.png)",
                "[dog](/dog.png)",
                "[cat](cat.png)",
                "[dog](dog.png)",
                "[cat](./cat.png)",
                "[dog](./dog.png)",
                "[cat]: ./cat.png",
                "[dog]: ./dog.png",
            ),
            "cat.png": None,
            "dog.png": None,
        },
        "moves": [("cat.png", "kitty.png"), ("dog.png", "hot/doggo.png")],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 14), "/kitty.png"),
                ((2, 6, 2, 13), "kitty.png"),
                ((4, 6, 4, 15), "./kitty.png"),
                ((6, 7, 6, 16), "./kitty.png"),
                ((1, 6, 1, 14), "/hot/doggo.png"),
                ((3, 6, 3, 13), "hot/doggo.png"),
                ((5, 6, 5, 15), "./hot/doggo.png"),
                ((7, 7, 7, 16), "./hot/doggo.png"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Move of markdown file should update links within that file",
        "files": {
            "doc.md": lines(
                "[abc](/other.md#frag)",
                "[abc](other.md#frag)",
                "[abc](./other.md#frag)",
                "[xyz]: ./other.md#frag",
            )
        },
        "moves": [("doc.md", "sub/new.md")],
        "edits": {
            "doc.md": [
                ((1, 6, 1, 19), "../other.md#frag"),
                ((2, 6, 2, 21), "../other.md#frag"),
                ((3, 7, 3, 22), "../other.md#frag"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename within moved file should preserve file extensions",
        "files": {
            "doc.md": lines(
                "[abc](/other#frag)",
                "[abc](other#frag)",
                "[abc](./other#frag)",
                "[xyz]: ./other#frag",
            )
        },
        "moves": [("doc.md", "sub/new.md")],
        "edits": {
            "doc.md": [
                ((1, 6, 1, 16), "../other#frag"),
                ((2, 6, 2, 18), "../other#frag"),
                ((3, 7, 3, 19), "../other#frag"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename directory should update links to md files in that dir",
        "files": {
            "doc.md": lines(
                "[abc](/old/a.md)",
                "[abc](/old/b.md)",
                "[abc](old/a.md)",
                "[abc](old/b.md)",
                "[abc](./old/a.md)",
                "[abc](./old/b.md)",
                "[xyz]: ./old/a.md",
                "[xyz]: ./old/b.md",
                "[abc](/other.md)",
                "[xyz1]: ./other.md",
            ),
            "old/a.md": None,
            "old/b.md": None,
        },
        "moves": [("old", "new")],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 15), "/new/a.md"),
                ((1, 6, 1, 15), "/new/b.md"),
                ((2, 6, 2, 14), "new/a.md"),
                ((3, 6, 3, 14), "new/b.md"),
                ((4, 6, 4, 16), "./new/a.md"),
                ((5, 6, 5, 16), "./new/b.md"),
                ((6, 7, 6, 17), "./new/a.md"),
                ((7, 7, 7, 17), "./new/b.md"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename within moved file on directory move should update links within dir",
        "files": {
            "old/doc.md": lines(
                "[abc](/old/a.md)",
                "[abc](/old/b.md)",
                "[abc](a.md)",
                "[abc](b.md)",
                "[abc](./a.md)",
                "[abc](./b.md)",
                "[xyz]: ./a.md",
                "[xyz]: ./b.md",
                "[xyz]: ../old/a.md",
                "[xyz]: ../old/b.md",
                "[abc](/other.md)",
                "[xyz1]: ./other.md",
            ),
            "old/a.md": None,
            "old/b.md": None,
        },
        "moves": [("old", "new")],
        "edits": {
            "old/doc.md": [
                ((0, 6, 0, 15), "/new/a.md"),
                ((1, 6, 1, 15), "/new/b.md"),
                ((8, 7, 8, 18), "./a.md"),
                ((9, 7, 9, 18), "./b.md"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Rename within moved file on directory move should update links to files outside of dir",
        "files": {
            "old/doc.md": lines("[abc](/a.md)", "[abc](/b.md)", "[abc](../a.md)", "[abc](../b.md)"),
            "a.md": None,
            "b.md": None,
        },
        "moves": [("old", "new/sub")],
        "edits": {"old/doc.md": [((2, 6, 2, 13), "../../a.md"), ((3, 6, 3, 13), "../../b.md")]},
    },
    {
        "name": "Renaming directory containing file should use updated file name in edit",
        "files": {
            "sub/doc.md": lines("[abc](../sub/other.md)", "[abc](/sub/other.md)"),
            "sub/other.md": None,
        },
        "moves": [("sub", "newSub")],
        "edits": {
            "sub/doc.md": [((0, 6, 0, 21), "./other.md"), ((1, 6, 1, 19), "/newSub/other.md")]
        },
        "convention": "mdseek writes a rewritten relative path without ./ unless the link had one (other.md, not ./other.md)",
    },
    {
        "name": "Should update links when renaming multiple files",
        "files": {
            "doc.md": lines(
                "[abc](/old1.md)",
                "[abc](old2.md)",
                "[abc](./old1.md)",
                "[xyz]: ./old2.md",
                "[abc](/other1.md)",
                "[xyz1]: ./other1.md",
            ),
            "old1.md": None,
            "old2.md": None,
            "uninvolved.md": None,
        },
        "moves": [
            ("old1.md", "new1.md"),
            ("old2.md", "new2.md"),
            ("uninvolved.md", "uninvolved-new.md"),
        ],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 14), "/new1.md"),
                ((2, 6, 2, 15), "./new1.md"),
                ((1, 6, 1, 13), "new2.md"),
                ((3, 7, 3, 16), "./new2.md"),
            ]
        },
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so the '[xyz]: ...' line under the links is paragraph text (VS Code's link finder reads it as a definition)",
    },
    {
        "name": "Should not use ./../ when updating relative path",
        "files": {
            "sub/doc.md": lines(
                "[abc](./other.md)", "[abc](other.md)", "[abc](other)", "[abc](/sub/other.md)"
            ),
            "sub/other.md": None,
        },
        "moves": [("sub/other.md", "other.md")],
        "edits": {
            "sub/doc.md": [
                ((0, 6, 0, 16), "../other.md"),
                ((1, 6, 1, 14), "../other.md"),
                ((2, 6, 2, 11), "../other"),
                ((3, 6, 3, 19), "/other.md"),
            ]
        },
    },
    {
        "name": "Should update paths when both referenced file and doc are moved",
        "files": {
            "doc.md": lines("[abc](images/cat.gif)", "[abc](./images/cat.gif)"),
            "images/cat.gif": None,
        },
        "moves": [("doc.md", "newSub/newDoc.md"), ("images/cat.gif", "newSub/kitty.gif")],
        "edits": {"doc.md": [((0, 6, 0, 20), "kitty.gif"), ((1, 6, 1, 22), "./kitty.gif")]},
    },
    {
        "name": "Should update paths when containing folder is moved",
        "files": {
            "old/readme.md": lines(
                "[abc](/top.md)",
                "[abc](/old/sibling.md)",
                "[abc](../top.md)",
                "[abc](../old/sibling.md)",
                "[abc](../old/)",
                "[abc](../old)",
                "[abc](/old)",
                "[abc](/old/)",
                "",
                "# header",
                "[text](#header)",
            ),
            "old/sibling.md": None,
            "top.md": None,
        },
        "moves": [("old", "new/old")],
        "edits": {
            "old/readme.md": [
                ((1, 6, 1, 21), "/new/old/sibling.md"),
                ((2, 6, 2, 15), "../../top.md"),
                ((3, 6, 3, 23), "./sibling.md"),
                ((4, 6, 4, 13), "./"),
                ((5, 6, 5, 12), "./"),
                ((6, 6, 6, 10), "/new/old"),
                ((7, 6, 7, 11), "/new/old"),
            ]
        },
        "convention": "mdseek leaves a link that still reaches its target after the move (../old/sibling.md from new/old/ is new/old/sibling.md); VS Code rewrites it to ./sibling.md",
    },
    {
        "name": "Should not rewrite fragment links to self",
        "files": {
            "oldReadme.md": lines(
                "# Header",
                "[abc](#header)",
                "[abc](oldReadme.md#header)",
                "[abc](./oldReadme.md#header)",
                "",
                "[def1]: #header",
                "[def2]: oldReadme.md#header",
                "[def3]: ./oldReadme.md#header",
            )
        },
        "moves": [("oldReadme.md", "sub/newReadme.md")],
        "edits": {
            "oldReadme.md": [
                ((2, 6, 2, 25), "newReadme.md#header"),
                ((3, 6, 3, 27), "./newReadme.md#header"),
                ((6, 8, 6, 27), "newReadme.md#header"),
                ((7, 8, 7, 29), "./newReadme.md#header"),
            ]
        },
    },
    {
        "name": "Rename file with angle bracket links should not add extra escapes",
        "files": {"doc.md": lines("[abc](</old.md>)", "[abc](<old.md>)"), "old.md": None},
        "moves": [("old.md", "sp ace.md")],
        "edits": {"doc.md": [((0, 7, 0, 14), "/sp ace.md"), ((1, 7, 1, 13), "sp ace.md")]},
    },
    {
        "name": "Rename file should escape angle brackets in angle bracket links",
        "files": {
            "doc.md": lines(
                "[abc](</old.md>)",
                "[abc](<old.md>)",
                "[abc](old.md)",
                "",
                "[def]: </old.md>",
                "[def]: <old.md>",
            ),
            "old.md": None,
        },
        "moves": [("old.md", "<a>.md")],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 15), "/<a>.md"),
                ((1, 7, 1, 13), "\\<a\\>.md"),
                ((2, 6, 2, 12), "<\\<a\\>.md>"),
                ((4, 7, 4, 16), "/<a>.md"),
                ((5, 8, 5, 14), "\\<a\\>.md"),
            ]
        },
        "convention": "mdseek writes < and > in a destination as %3C/%3E where VS Code escapes them with backslashes",
    },
    {
        "name": "Rename should remove angle angle brackets from link if they are not needed",
        "files": {
            "doc.md": lines("![text](cat.gif)", "![text](<cat.gif>)", "", "[def]: <cat.gif>"),
            "cat.gif": None,
        },
        "moves": [("cat.gif", "n<ew>.gif")],
        "edits": {
            "doc.md": [
                ((0, 8, 0, 15), "n<ew>.gif"),
                ((1, 8, 1, 17), "n<ew>.gif"),
                ((3, 7, 3, 16), "n<ew>.gif"),
            ]
        },
        "convention": "mdseek writes < and > in a destination as %3C/%3E and keeps a link's <...>; VS Code drops <...> when not needed",
    },
    {
        "name": "Should add angle brackets when parent dir is moved",
        "files": {
            "old/readme.md": lines(
                "[abc](/top.md)",
                "[abc](/old/sibling.md)",
                "[abc](../top.md)",
                "[abc](../old/sibling.md)",
                "[abc](../old/)",
                "[abc](../old)",
                "[abc](/old)",
                "[abc](/old/)",
                "",
                "# header",
                "[text](#header)",
            ),
            "old/sibling.md": None,
            "top.md": None,
        },
        "moves": [("old", "par(en")],
        "edits": {
            "old/readme.md": [
                ((1, 6, 1, 21), "</par(en/sibling.md>"),
                ((3, 6, 3, 23), "./sibling.md"),
                ((4, 6, 4, 13), "./"),
                ((5, 6, 5, 12), "./"),
                ((6, 6, 6, 10), "</par(en>"),
                ((7, 6, 7, 11), "</par(en>"),
            ]
        },
        "convention": "mdseek %-encodes '(' in a rewritten destination where VS Code wraps it in <...>, and writes sibling.md and . for ./sibling.md and ./",
    },
    {
        "name": "Should handle renames for angle bracket link with fragment when angle brackets are removed (#150)",
        "files": {
            "doc.md": lines(
                "[text](foo.md#abc 'text')",
                "[text](<foo.md#abc>)",
                "",
                "[def1]: foo.md#abc",
                "[def2]: <foo.md#abc> 'text'",
            ),
            "foo.md": None,
        },
        "moves": [("foo.md", "bar.md")],
        "edits": {
            "doc.md": [
                ((0, 7, 0, 17), "bar.md#abc"),
                ((1, 7, 1, 19), "bar.md#abc"),
                ((3, 8, 3, 18), "bar.md#abc"),
                ((4, 8, 4, 20), "bar.md#abc"),
            ]
        },
        "convention": "mdseek keeps a link's <...> when rewriting it; VS Code drops them when not needed",
    },
    {
        "name": "Should handle renames for angle bracket link with fragment when angle brackets are added (#150)",
        "files": {
            "doc.md": lines(
                "[text](foo.md#abc 'text')",
                "[text](<foo.md#abc>)",
                "",
                "[def1]: foo.md#abc 'text'",
                "[def2]: <foo.md#abc>",
            ),
            "foo.md": None,
        },
        "moves": [("foo.md", "foo space.md")],
        "edits": {
            "doc.md": [
                ((0, 7, 0, 17), "<foo space.md#abc>"),
                ((1, 8, 1, 18), "foo space.md#abc"),
                ((3, 8, 3, 18), "<foo space.md#abc>"),
                ((4, 9, 4, 19), "foo space.md#abc"),
            ]
        },
        "convention": "mdseek %-encodes a space in a rewritten destination where VS Code wraps it in <...>",
    },
    {
        "name": "Should handle renames for multi-line links (#202)",
        "files": {
            "doc.md": lines(
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
            "foo.md": None,
        },
        "moves": [("foo.md", "new foo.md")],
        "edits": {
            "doc.md": [
                ((1, 4, 1, 10), "<new foo.md>"),
                ((3, 4, 3, 14), "<new foo.md#abc>"),
                ((5, 5, 5, 15), "new foo.md#abc"),
                ((10, 0, 10, 6), "<new foo.md>"),
            ]
        },
        "convention": "mdseek %-encodes a space in a rewritten destination where VS Code wraps it in <...>",
    },
    # -- the same, with a blank line before the definitions (CommonMark then reads
    # them as definitions; lines after it move down by one) -------------------------
    {
        "name": "Rename file should update links [blank line before the definition]",
        "files": {
            "doc.md": lines(
                "[abc](/old.md)",
                "[abc](old.md)",
                "[abc](./old.md)",
                "",
                "[xyz]: ./old.md",
                "[abc](/other.md)",
                "[xyz1]: ./other.md",
            ),
            "old.md": None,
        },
        "moves": [("old.md", "new.md")],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 13), "/new.md"),
                ((1, 6, 1, 12), "new.md"),
                ((2, 6, 2, 14), "./new.md"),
                ((4, 7, 4, 15), "./new.md"),
            ]
        },
    },
    {
        "name": "Move of markdown file should update links within that file [blank line before the definition]",
        "files": {
            "doc.md": lines(
                "[abc](/other.md#frag)",
                "[abc](other.md#frag)",
                "[abc](./other.md#frag)",
                "",
                "[xyz]: ./other.md#frag",
            )
        },
        "moves": [("doc.md", "sub/new.md")],
        "edits": {
            "doc.md": [
                ((1, 6, 1, 19), "../other.md#frag"),
                ((2, 6, 2, 21), "../other.md#frag"),
                ((4, 7, 4, 22), "../other.md#frag"),
            ]
        },
    },
    {
        "name": "Rename directory should update links to md files in that dir [blank line before the definitions]",
        "files": {
            "doc.md": lines(
                "[abc](/old/a.md)",
                "[abc](/old/b.md)",
                "[abc](old/a.md)",
                "[abc](old/b.md)",
                "[abc](./old/a.md)",
                "[abc](./old/b.md)",
                "",
                "[xyz]: ./old/a.md",
                "[xyz]: ./old/b.md",
                "[abc](/other.md)",
                "[xyz1]: ./other.md",
            ),
            "old/a.md": None,
            "old/b.md": None,
        },
        "moves": [("old", "new")],
        "edits": {
            "doc.md": [
                ((0, 6, 0, 15), "/new/a.md"),
                ((1, 6, 1, 15), "/new/b.md"),
                ((2, 6, 2, 14), "new/a.md"),
                ((3, 6, 3, 14), "new/b.md"),
                ((4, 6, 4, 16), "./new/a.md"),
                ((5, 6, 5, 16), "./new/b.md"),
                ((7, 7, 7, 17), "./new/a.md"),
                ((8, 7, 8, 17), "./new/b.md"),
            ]
        },
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_file_rename(client, tmp_path, case):
    await run_file_rename(client, tmp_path, case)
