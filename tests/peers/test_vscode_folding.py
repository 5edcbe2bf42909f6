"""VS Code's markdown language service, src/test/folding.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: ``provideFoldingRanges`` is
``textDocument/foldingRange``; the peer's (start line, end line[, kind]) are
compared as a sorted list with mdseek's (the peer compares them in its own
order). Not ported: the peer's skipped test.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_folding, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()


def fold(name: str, text: str, folds: list, **kw: str) -> dict:
    return {"name": name, "files": {"doc.md": text}, "folds": folds, **kw}


CASES: list[dict] = [
    fold("Should not return anything for empty document", "", []),
    fold(
        "Should not return anything for document without headers",
        lines("a", "**b** afas", "a#b", "a"),
        [],
    ),
    fold("Should fold from header to end of document", lines("a", "# b", "c", "d"), [(1, 3)]),
    fold(
        "Should leave single newline before next header",
        lines("", "# a", "x", "", "# b", "y"),
        [(1, 2), (4, 5)],
    ),
    fold(
        "Should collapse multiple newlines to single newline before next header",
        lines("", "# a", "x", "", "", "", "# b", "y"),
        [(1, 4), (6, 7)],
    ),
    fold(
        "Should not collapse if there is no newline before next header",
        lines("", "# a", "x", "# b", "y"),
        [(1, 2), (3, 4)],
    ),
    fold(
        "Should fold nested <!-- #region --> markers",
        lines(
            "a",
            "<!-- #region -->",
            "b",
            "<!-- #region hello!-->",
            "b.a",
            "<!-- #endregion -->",
            "b",
            "<!-- #region: foo! -->",
            "b.b",
            "<!-- #endregion: foo -->",
            "b",
            "<!-- #endregion -->",
            "a",
        ),
        [(1, 11), (3, 5), (7, 9)],
    ),
    fold("Should fold from list to end of document", lines("a", "- b", "c", "d"), [(1, 3)]),
    fold(
        "lists folds should span multiple lines of content",
        lines("a", "- This list item\n  spans multiple\n  lines."),
        [(1, 3)],
    ),
    fold(
        "List should leave single blankline before new element",
        lines("- a", "a", "", "", "b"),
        [(0, 2)],
    ),
    fold("Should fold fenced code blocks", lines("~~~ts", "a", "~~~", "b"), [(0, 2)]),
    fold("Should fold html blocks", lines("x", "<div>", "\tfa", "</div>"), [(1, 3)]),
    fold(
        "Should fold html block comments",
        lines("x", "<!--", "fa", "-->"),
        [(1, 3, "comment")],
    ),
    fold("Should fold tables", lines("| a | b |", "|---|---|", "| b | c |"), [(0, 2)]),
    fold(
        "Should fold block quotes",
        lines("a", "", "> b1", "> b1", "", "> b2", "", "> b3", "b3", "", "z"),
        [(2, 3), (7, 8)],
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_folding(client, tmp_path, case):
    await run_folding(client, tmp_path, case)
