"""VS Code's markdown language service, src/test/tableOfContents.test.ts, ported:
its slugs (the peer's test engine uses ``githubSlugifier``, GitHub's anchors,
which are mdseek's too).

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms (:func:`peer_support.run_slugs`): the peer's
``lookupByFragment(f)`` is a link ``[x](doc.md#f)`` in a second document: where
the peer finds the heading on line L, go to definition lands on line L; where it
finds nothing, the link is reported broken. ``entries[0].slug.value`` is the
anchor that completion after ``[x](doc.md#`` offers. The peer's lookups of the
empty fragment are left out (``doc.md#`` names the file, no heading).
All of the peer's tests are ported.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_slugs, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

CASES: list[dict] = [
    {
        "name": "Lookup should not return anything for empty document",
        "files": {"doc.md": ""},
        "lookups": [("foo", None)],
    },
    {
        "name": "Lookup should not return anything for document with no headers",
        "files": {"doc.md": lines("a *b*", "c")},
        "lookups": [("foo", None), ("a", None), ("b", None)],
    },
    {
        "name": "Lookup should return basic #header",
        "files": {"doc.md": lines("# a", "x", "# c")},
        "lookups": [("a", 0), ("x", None), ("c", 2)],
    },
    {
        "name": "Lookups should be case in-sensitive",
        "files": {"doc.md": lines("# fOo", "")},
        "lookups": [("fOo", 0), ("foo", 0), ("FOO", 0)],
    },
    {
        "name": "should handle special characters #44779",
        "files": {"doc.md": lines("# Indentação", "")},
        "lookups": [("indentação", 0)],
    },
    {
        "name": "should handle special characters 2, #48482",
        "files": {"doc.md": lines("# Инструкция - Делай Раз, Делай Два", "")},
        "lookups": [("инструкция---делай-раз-делай-два", 0)],
    },
    {
        "name": "should handle special characters 3, #37079",
        "files": {
            "doc.md": lines(
                "## Header 2",
                "### Header 3",
                "## Заголовок 2",
                "### Заголовок 3",
                "### Заголовок Header 3",
                "## Заголовок",
            )
        },
        "lookups": [
            ("header-2", 0),
            ("header-3", 1),
            ("Заголовок-2", 2),
            ("Заголовок-3", 3),
            ("Заголовок-header-3", 4),
            ("Заголовок", 5),
        ],
    },
    {
        "name": "Lookup should support suffixes for repeated headers",
        "files": {"doc.md": lines("# a", "# a", "## a")},
        "lookups": [("a", 0), ("a-1", 1), ("a-2", 2)],
    },
    {
        "name": "Should preserve underscores in headers",
        "files": {"doc.md": lines("# A_B c")},
        "slugs": ["a_b-c"],
    },
    {
        "name": "Should ignore italics when creating slug",
        "files": {"doc.md": lines("# _A_B c_")},
        "slugs": ["a_b-c"],
    },
    {
        "name": "Should ignore inline code when creating slug",
        "files": {"doc.md": lines("# a `b` c")},
        "slugs": ["a-b-c"],
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_slugs(client, tmp_path, case):
    await run_slugs(client, tmp_path, case)
