"""VS Code's markdown language service, src/test/definition.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: ``getDefinition`` is ``textDocument/definition``;
the peer's expected (document, line) per location is compared, and "undefined"
is no location. A test that triggers at several places is one case per place.
All of the peer's tests are ported.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_definition, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

CM = "CommonMark: a reference definition cannot interrupt a paragraph, so this '[ref]: ...' line is paragraph text (VS Code's link finder reads it as a definition)"
SHORTHAND = lines("[ref]", "", "[yes][ref]", "", "[ref]: /Hello.md")

CASES: list[dict] = [
    {
        "name": "Should not return definition when on link text",
        "files": {"doc.md": lines("[ref](#abc)", "[ref]: http://example.com")},
        "pos": (0, 1),
        "defs": [],
        "convention": "mdseek goes where a link leads from anywhere in the link, its text included (here the top of the file: #abc is no heading of it)",
    },
    {
        "name": "Should find definition links within file from link",
        "files": {"doc.md": lines("[link 1][abc]", "", "[abc]: https://example.com")},
        "pos": (0, 12),
        "defs": [("doc.md", 2)],
    },
    *(
        {
            "name": f"Should find definition links using shorthand#{n}",
            "files": {"doc.md": SHORTHAND},
            "pos": pos,
            "defs": [("doc.md", 4)],
        }
        for n, pos in enumerate([(0, 2), (2, 7), (4, 2)], 1)
    ),
    {
        "name": "Should find definition links within file from definition",
        "files": {"doc.md": lines("[link 1][abc]", "", "[abc]: https://example.com")},
        "pos": (2, 3),
        "defs": [("doc.md", 2)],
    },
    {
        "name": "Should not find definition links across files",
        "files": {
            "doc.md": lines("[link 1][abc]", "", "[abc]: https://example.com"),
            "other.md": lines("[link 1][abc]", "", "[abc]: https://example.com?bad"),
        },
        "pos": (0, 12),
        "defs": [("doc.md", 2)],
    },
    {
        "name": "Should support going to header from link#1",
        "files": {"doc.md": lines("# Header", "[text](#header)", "[ref]: #header")},
        "pos": (1, 8),
        "defs": [("doc.md", 0)],
    },
    {
        "name": "Should support going to header from link#2",
        "files": {"doc.md": lines("# Header", "[text](#header)", "[ref]: #header")},
        "pos": (2, 8),
        "defs": [("doc.md", 0)],
        "convention": CM,
    },
    {
        "name": "Should support going to header from link#2 [blank line before the definition]",
        "files": {"doc.md": lines("# Header", "[text](#header)", "", "[ref]: #header")},
        "pos": (3, 8),
        "defs": [("doc.md", 0)],
    },
    {
        "name": "Should support going to header across files#1",
        "files": {
            "doc.md": lines("# Header"),
            "doc2.md": lines("[text](doc#header)", "[ref]: doc.md#header"),
        },
        "at": "doc2.md",
        "pos": (0, 15),
        "defs": [("doc.md", 0)],
    },
    {
        "name": "Should support going to header across files#2",
        "files": {
            "doc.md": lines("# Header"),
            "doc2.md": lines("[text](doc#header)", "[ref]: doc.md#header"),
        },
        "at": "doc2.md",
        "pos": (1, 15),
        "defs": [("doc.md", 0)],
        "convention": CM,
    },
    {
        "name": "Should support going to header across files#2 [blank line before the definition]",
        "files": {
            "doc.md": lines("# Header"),
            "doc2.md": lines("[text](doc#header)", "", "[ref]: doc.md#header"),
        },
        "at": "doc2.md",
        "pos": (2, 15),
        "defs": [("doc.md", 0)],
    },
    {
        "name": "Should not find link definitions across files",
        "files": {"doc.md": lines("[ref]"), "doc2.md": lines("[ref]: http://example.com")},
        "pos": (0, 2),
        "defs": [],
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_definitions(client, tmp_path, case):
    await run_definition(client, tmp_path, case)
