"""marksman's Tests/RefactorTests.fs (rename), ported.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms: ``Refactor.rename`` is ``textDocument/rename``
at the peer's position; the peer asserts each file's edits on its own (one
case per file here, ``#doc1.md``/``#doc2.md``): its expected edits are applied
to that file and the text compared with what mdseek's edit makes of it.

Wiki links: marksman (default ``complWikiStyle = title-slug``) reaches a note
by the slug of its title (``[[doc-1]]`` for a note titled ``# Doc 1`` in
``doc1.md``), as mdseek does when no file name matches (a file name first, as
Obsidian): renaming the title renames those links.

Not ported: the two reference-label tests (``[lbl1]`` renamed with its
``[lbl1]:`` definition), a rename mdseek does not make.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_rename, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()


HEADING_LINKS = {
    "doc1.md": lines("# Doc 1", "## Doc 1.2", "## Doc 1.3", "See [[#doc-12]]", "Also [](#doc-12)"),
    "doc2.md": lines("# Doc 2", "[[doc-1]]", "[[doc-1#doc-12]]", "[](/doc1.md#doc-12)", "[[doc1]]"),
}
ON_TITLE = {
    "doc1.md": [((0, 2, 0, 7), "New Title")],
    "doc2.md": [((2, 2, 2, 7), "new-title"), ((1, 2, 1, 7), "new-title")],
}
ON_SUBTITLE = {
    "doc1.md": [
        ((4, 9, 4, 15), "new-title"),
        ((3, 7, 3, 13), "New Title"),
        ((1, 3, 1, 10), "New Title"),
    ],
    "doc2.md": [((3, 12, 3, 18), "new-title"), ((2, 8, 2, 14), "New Title")],
}

CASES: list[dict] = [
    {
        "name": "HeadingLinks.onTitle#doc1.md",
        "files": HEADING_LINKS,
        "at": "doc1.md",
        "pos": (0, 3),
        "new_name": "New Title",
        "edits": ON_TITLE,
        "only": "doc1.md",
    },
    {
        "name": "HeadingLinks.onTitle#doc2.md",
        "files": HEADING_LINKS,
        "at": "doc1.md",
        "pos": (0, 3),
        "new_name": "New Title",
        "edits": ON_TITLE,
        "only": "doc2.md",
    },
    {
        "name": "HeadingLinks.onSubtitle#doc1.md",
        "files": HEADING_LINKS,
        "at": "doc1.md",
        "pos": (1, 5),
        "new_name": "New Title",
        "edits": ON_SUBTITLE,
        "only": "doc1.md",
    },
    {
        "name": "HeadingLinks.onSubtitle#doc2.md",
        "files": HEADING_LINKS,
        "at": "doc1.md",
        "pos": (1, 5),
        "new_name": "New Title",
        "edits": ON_SUBTITLE,
        "only": "doc2.md",
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_rename(client, tmp_path, case):
    await run_rename(client, tmp_path, case)
