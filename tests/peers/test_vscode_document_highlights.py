"""VS Code's markdown language service, src/test/documentHighlights.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: ``getDocumentHighlights`` is
``textDocument/documentHighlight`` at the peer's position; its ranges are
compared exactly (sorted): a heading's whole line, and the part of each link's
destination the peer marks (the path, or the fragment). A test that triggers
at several places is one case per place. All of the peer's tests are ported.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_highlights, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

LABEL = "mdseek highlights where links lead (paths, fragments, URLs), not the label text of reference-style links ([text][def])"

FRAGMENTS = lines(
    "# A b C",
    "",
    "text [link](#a-b-c)",
    'text [link](#a-B-c "title")',
    'text [link](doc.md#a-B-c "title")',
    "",
    '[ref]: #a-B-c "title"',
)
FRAGMENT_RANGES = [(0, 0, 0, 7), (2, 12, 2, 18), (3, 12, 3, 18), (4, 18, 4, 24), (6, 7, 6, 13)]
PATHS = lines(
    "# A b C",
    "",
    "text [link](other.md)",
    "text [link](./other.md)",
    "text [link](/other.md)",
    "text [link](other.md#frag)",
    "",
    "[ref]: other.md",
)
PATH_RANGES = [(2, 12, 2, 20), (3, 12, 3, 22), (4, 12, 4, 21), (5, 12, 5, 20), (7, 7, 7, 15)]
IMAGES = lines(
    "![](./cat.gif)",
    "![](cat.gif)",
    "[cat](./cat.gif)",
    "[cat](cat.gif)",
    "",
    "[ref]: cat.gif",
    "[ref]: ./cat.gif",
)
IMAGE_RANGES = [
    (0, 4, 0, 13),
    (1, 4, 1, 11),
    (2, 6, 2, 15),
    (3, 6, 3, 13),
    (5, 7, 5, 14),
    (6, 7, 6, 16),
]
OTHER = lines(
    "# a b c",
    "text [link](other#a-b-c)",
    'text [link](other.md#a-B-c "title")',
    'text [link](./other.md#a-B-c "title")',
    "text [link](other#x-y-z)",
    'text [link](other.md#x-y-z "title")',
    'text [link](./other.md#x-y-z "title")',
)
REFS = lines("[text][def]", "[def]", "[def][]", "[def][def]", "", "[def]: http://example.com")
REF_RANGES = [(0, 7, 0, 10), (1, 1, 1, 4), (2, 1, 2, 4), (3, 6, 3, 9), (5, 1, 5, 4)]
EXTERNAL = lines(
    "text [link](http://example.com/a)",
    "text [link](http://example.com)",
    "text [link](http://example.com/a)",
    "text [link](http://example.com/b)",
    "",
    "[ref]: http://example.com/a",
    "[ref]: http://example.com/b",
)
EXTERNAL_RANGES = [(0, 12, 0, 32), (2, 12, 2, 32), (5, 7, 5, 27)]
AUTO = lines("text [link](http://example.com)", "text <http://example.com>")


def case(name: str, text: str, pos: tuple[int, int], ranges: list, **kw: str) -> dict:
    return {"name": name, "files": {"doc.md": text}, "pos": pos, "ranges": ranges, **kw}


CASES: list[dict] = [
    case("Should highlight fragment when on header", FRAGMENTS, (0, 1), FRAGMENT_RANGES),
    *(
        case(
            f"Should highlight links and header when on link fragment#{n}",
            FRAGMENTS,
            p,
            FRAGMENT_RANGES,
        )
        for n, p in enumerate([(2, 14), (4, 20), (6, 10)], 1)
    ),
    *(
        case(f"Should highlight links when on link path#{n}", PATHS, p, PATH_RANGES)
        for n, p in enumerate([(2, 14), (3, 14), (4, 14), (5, 14), (7, 8)], 1)
    ),
    case(
        "Should highlight fragment when on fragment part of link to other files",
        OTHER[: OTHER.index("\ntext [link](other#x-y-z)")],
        (1, 20),
        [(1, 17, 1, 23), (2, 20, 2, 26), (3, 22, 3, 28)],
    ),
    *(
        case(f"Should highlight links to images#{n}", IMAGES, p, IMAGE_RANGES)
        for n, p in enumerate([(1, 9), (5, 9)], 1)
    ),
    case(
        "Should highlight file when on file part of link to other files",
        OTHER,
        (1, 15),
        [
            (1, 12, 1, 17),
            (2, 12, 2, 20),
            (3, 12, 3, 22),
            (4, 12, 4, 17),
            (5, 12, 5, 20),
            (6, 12, 6, 22),
        ],
    ),
    *(
        case(
            f"Should highlight reference links when on link reference or definition#{n}",
            REFS,
            p,
            REF_RANGES,
            convention=LABEL,
        )
        for n, p in enumerate([(0, 8), (5, 1)], 1)
    ),
    *(
        case(f"Should highlight external links#{n}", EXTERNAL, p, EXTERNAL_RANGES)
        for n, p in enumerate([(2, 14), (5, 8)], 1)
    ),
    *(
        case(
            f"Should highlight auto links#{n}",
            AUTO,
            p,
            [(0, 12, 0, 30), (1, 6, 1, 24)],
        )
        for n, p in enumerate([(0, 20), (1, 20)], 1)
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_document_highlights(client, tmp_path, case):
    await run_highlights(client, tmp_path, case)
