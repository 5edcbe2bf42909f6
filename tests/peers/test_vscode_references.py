"""VS Code's markdown language service, src/test/references.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: ``getReferences`` is ``textDocument/references``
with ``includeDeclaration: true``; the peer's expected (document, line[,
characters]) are compared with mdseek's locations, both sorted by document and
position as the peer sorts them; where the peer asserts only how many, so do we.
A test that triggers at several places is one case per place (``#n``).

Not ported (features mdseek does not have): references to http URLs (3
tests), to files that are not markdown (``unknown file``, the multi-root
``/img.png`` test), to reference labels (``[text][ref]``: 4 tests), and to HTML
``id`` attributes (2 tests).
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_references, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

ABC = lines("# abc", "", "[link 1](#abc)", "[not link](#noabc)", "[link 2](#abc)")
NORMALIZED = lines(
    "# a B c", "[simple](#a-b-c)", "[start underscore](#a-b-c)", "[different case](#a-B-C)"
)
ACROSS = {
    "doc.md": lines("# abc", "", "[link 1](#abc)"),
    "sub/other.md": lines("[not link](#abc)", "[not link](/doc.md#abz)", "[link](/doc.md#abc)"),
    "zOther2.md": lines("[not link](#abc)", "[not link](./doc.md#abz)", "[link](./doc.md#abc)"),
}
OTHER_HEADER = lines("pre", "# header", "post")
DISTINGUISH = {
    "doc.md": lines("# abc", "", "[link 1](#abc)"),
    "sub/other.md": lines("[link](/doc.md#abc)", "[link no text](/doc#abc)"),
}
REPEATED = {
    "doc.md": lines("# header", "# header", "[h1](#header)", "[h2](#header-1)"),
    "other.md": lines("[h1](./doc#header)", "[h2](./doc#header-1)"),
}
FIRST = [("doc.md", 0), ("doc.md", 2), ("other.md", 0)]
SECOND = [("doc.md", 1), ("doc.md", 3), ("other.md", 1)]

CASES: list[dict] = [
    {
        "name": "Should not return references when not on header or link#1",
        "files": {"doc.md": lines("# abc", "", "[link 1](#abc)", "text")},
        "pos": (1, 0),
        "refs": [],
    },
    {
        "name": "Should not return references when not on header or link#2",
        "files": {"doc.md": lines("# abc", "", "[link 1](#abc)", "text")},
        "pos": (3, 2),
        "refs": [],
    },
    {
        "name": "Should find references from header within same file",
        "files": {"doc.md": ABC},
        "pos": (0, 3),
        "refs": [("doc.md", 0), ("doc.md", 2), ("doc.md", 4)],
    },
    {
        "name": "Should not return references when on link text",
        "files": {"doc.md": lines("[ref](#abc)", "[ref]: http://example.com")},
        "pos": (0, 1),
        "refs": [],
    },
    *(
        {
            "name": f"Should find references using normalized slug#{n}",
            "files": {"doc.md": NORMALIZED},
            "pos": pos,
            "count": 4,
        }
        for n, pos in enumerate([(0, 0), (1, 12), (2, 24), (3, 20)], 1)
    ),
    {
        "name": "Should find references from header across files",
        "files": ACROSS,
        "pos": (0, 3),
        "refs": [("doc.md", 0), ("doc.md", 2), ("sub/other.md", 2), ("zOther2.md", 2)],
    },
    {
        "name": "Should find references from header to link definitions",
        "files": {"doc.md": lines("# abc", "", "[bla]: #abc")},
        "pos": (0, 3),
        "refs": [("doc.md", 0), ("doc.md", 2)],
    },
    {
        "name": "Should find header references from link definition",
        "files": {"doc.md": lines("# A b C", "[text][bla]", "[bla]: #a-b-c")},
        "pos": (2, 9),
        "refs": [("doc.md", 0), ("doc.md", 2)],
        "convention": "CommonMark: a reference definition cannot interrupt a paragraph, so this '[bla]: ...' line is paragraph text (VS Code's link finder reads it as a definition), and '#a-b-c' in it is a tag",
    },
    {
        "name": "Should find header references from link definition [blank line before the definition]",
        "files": {"doc.md": lines("# A b C", "[text][bla]", "", "[bla]: #a-b-c")},
        "pos": (3, 9),
        "refs": [("doc.md", 0), ("doc.md", 3)],
        "convention": "mdseek also lists the [text][bla] that uses the definition (a link to the heading too)",
    },
    {
        "name": "Should find references from link within same file",
        "files": {"doc.md": ABC},
        "pos": (2, 10),
        "refs": [("doc.md", 0), ("doc.md", 2), ("doc.md", 4)],
    },
    {
        "name": "Should find references from link across files",
        "files": {
            **ACROSS,
            "sub/other.md": lines(
                "[not link](#abc)",
                "[not link](/doc.md#abz)",
                "[with ext](/doc.md#abc)",
                "[without ext](/doc#abc)",
            ),
        },
        "pos": (2, 10),
        "refs": [
            ("doc.md", 0),
            ("doc.md", 2),
            ("sub/other.md", 2),
            ("sub/other.md", 3),
            ("zOther2.md", 2),
        ],
    },
    {
        "name": "Should find references without requiring file extensions",
        "files": {
            "doc.md": lines("# a B c", "", "[link 1](#a-b-c)"),
            "other.md": lines(
                "[not link](#a-b-c)",
                "[not link](/doc.md#a-b-z)",
                "[with ext](/doc.md#a-b-c)",
                "[without ext](/doc#a-b-c)",
                "[rel with ext](./doc.md#a-b-c)",
                "[rel without ext](./doc#a-b-c)",
            ),
        },
        "pos": (2, 10),
        "refs": [
            ("doc.md", 0),
            ("doc.md", 2),
            ("other.md", 2),
            ("other.md", 3),
            ("other.md", 4),
            ("other.md", 5),
        ],
    },
    {
        "name": "Should find references from link across files when triggered on link without file extension",
        "files": {
            "doc.md": lines(
                "[without ext](./sub/other#header)", "[with ext](./sub/other.md#header)"
            ),
            "sub/other.md": OTHER_HEADER,
        },
        "pos": (0, 29),
        "refs": [("doc.md", 0), ("doc.md", 1), ("sub/other.md", 1)],
    },
    {
        "name": "Should find references from link across files when triggered on link without file extension that contains period",
        "files": {
            "doc.md": lines(
                "[without ext](./sub/other.test#header)", "[with ext](./sub/other.test.md#header)"
            ),
            "sub/other.test.md": lines("# header"),
        },
        "pos": (0, 33),
        "refs": [("doc.md", 0), ("doc.md", 1), ("sub/other.test.md", 0)],
    },
    {
        "name": "Should include header references when triggered on file link",
        "files": {
            "doc.md": lines(
                "[with ext](./sub/other)",
                "[with ext](./sub/other#header)",
                "[without ext](./sub/other.md#no-such-header)",
            ),
            "sub/other.md": OTHER_HEADER,
        },
        "pos": (0, 15),
        "refs": [("doc.md", 0), ("doc.md", 1), ("doc.md", 2)],
    },
    {
        "name": "Should not include refs from other file to own header",
        "files": {
            "doc.md": lines("[other](./sub/other)"),
            "sub/other.md": lines("# header", "[text](#header)"),
        },
        "pos": (0, 15),
        "refs": [("doc.md", 0)],
    },
    {
        "name": "Should find explicit references to own file",
        "files": {"doc.md": lines("[bare](doc.md)", "[rel](./doc.md)", "[abs](/doc.md)")},
        "pos": (0, 12),
        "refs": [("doc.md", 0), ("doc.md", 1), ("doc.md", 2)],
    },
    {
        "name": "Should distinguish between references to file and to header within file#1",
        "files": DISTINGUISH,
        "at": "sub/other.md",
        "pos": (0, 16),
        "refs": [("doc.md", 0), ("doc.md", 2), ("sub/other.md", 0), ("sub/other.md", 1)],
    },
    {
        "name": "Should distinguish between references to file and to header within file#2",
        "files": DISTINGUISH,
        "at": "sub/other.md",
        "pos": (0, 9),
        "refs": [("sub/other.md", 0, None, 14), ("sub/other.md", 1, None, 19)],
        "convention": "mdseek's reference range is the whole link; VS Code's file references end at the link's path (/doc.md, not #abc)",
    },
    {
        "name": "Should distinguish between references to file and to header within file#3",
        "files": DISTINGUISH,
        "at": "sub/other.md",
        "pos": (1, 17),
        "refs": [("sub/other.md", 0), ("sub/other.md", 1)],
    },
    {
        "name": "Should not consider checkboxes as reference links",
        "files": {"doc.md": lines("- [x]", "- [X]", "- [ ]", "", "[x]: https://example.com")},
        "pos": (0, 4),
        "count": 0,
    },
    *(
        {
            "name": f"Should find references to repeated headers#{n}",
            "files": REPEATED,
            "at": at,
            "pos": pos,
            "refs": refs,
        }
        for n, (at, pos, refs) in enumerate(
            [
                ("doc.md", (0, 4), FIRST),
                ("doc.md", (2, 8), FIRST),
                ("other.md", (0, 12), FIRST),
                ("doc.md", (1, 4), SECOND),
                ("doc.md", (3, 10), SECOND),
                ("other.md", (1, 12), SECOND),
            ],
            1,
        )
    ),
    {
        "name": "Should find html references to header",
        "files": {"doc.md": lines("# abc", "", '<a href="#abc"></a>', '<a href="#aBC"></a>')},
        "pos": (0, 3),
        "refs": [("doc.md", 0), ("doc.md", 2), ("doc.md", 3)],
        "convention": "mdseek follows markdown links only, not href attributes of inline HTML",
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_references(client, tmp_path, case):
    await run_references(client, tmp_path, case)
