"""marksman's Tests/DiagTest.fs (diagnostics), ported.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms: ``checkFolder`` is ``textDocument/diagnostic`` on
the peer's ``fake.md`` in a folder holding it; the peer asserts which links get
a warning (its own messages), so the lines of mdseek's warnings are compared
with the lines of those links.

Not ported: ``documentIndex_1`` (titles, no diagnostic), ``nonBreakingWhitespace``
(a check mdseek does not make) and ``noCrossFileDiagOnSingleFileFolders``
(marksman's single-file mode, and a reference-label check).
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_diagnostics, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

CASES: list[dict] = [
    {
        "name": "noDiagOnShortcutLinks",
        "files": {"fake.md": lines("# H1", "## H2", "[shortcut]", "[[#h42]]")},
        "at": "fake.md",
        "lines": [3],
    },
    {
        "name": "noDiagOnRealUrls",
        "files": {"fake.md": lines("# H1", "## H2", "[](www.bad.md)", "[](https://www.good.md)")},
        "at": "fake.md",
        "lines": [2],
    },
    {
        "name": "noDiagOnNonMarkdownFiles",
        "files": {
            "fake.md": lines(
                "# H1", "## H2", "[](bad.md)", "[](another%20bad.md)", "[](good/folder)"
            )
        },
        "at": "fake.md",
        "lines": [2, 3],
        "convention": "mdseek reports a link to any missing file, markdown or not (good/folder does not exist); marksman checks links to markdown files only",
    },
    {
        "name": "noDiagOnNonMarkdownFiles [good/folder exists]",
        "files": {
            "fake.md": lines(
                "# H1", "## H2", "[](bad.md)", "[](another%20bad.md)", "[](good/folder)"
            ),
            "good/folder/note.md": "",
        },
        "at": "fake.md",
        "lines": [2, 3],
    },
    {
        "name": "crossFileDiagOnBrokenWikiLinks",
        "files": {"fake.md": lines("[[bad]]")},
        "at": "fake.md",
        "lines": [0],
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_diagnostics(client, tmp_path, case):
    await run_diagnostics(client, tmp_path, case)
