"""VS Code's markdown language service, src/test/fileReferences.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: the peer's ``getReferencesToFileInWorkspace(other.md)``
(VS Code's own request, "Find file references") is ``textDocument/references``
(declaration excluded) asked on the first link to ``other.md`` in ``doc.md``
(line 1): mdseek's references of a file, asked from a link to it, are the
links to the file and to its headings that name it by path. The peer's
(document, line) of each reference is compared. All of the peer's tests are
ported.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_references, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()


def case(name: str, doc: str, other: str, refs: list) -> dict:
    return {
        "name": name,
        "files": {"doc.md": doc, "other.md": other},
        "pos": (1, 12),
        "include_declaration": False,
        "refs": refs,
    }


CASES: list[dict] = [
    case(
        "Should find basic references",
        lines("# header", "[link 1](./other.md)", "[link 2](./other.md)"),
        lines("# header", "pre", "[link 3](./other.md)", "post"),
        [("doc.md", 1), ("doc.md", 2), ("other.md", 2)],
    ),
    case(
        "Should find references with and without file extensions",
        lines("# header", "[link 1](./other.md)", "[link 2](./other)"),
        lines("# header", "pre", "[link 3](./other.md)", "[link 4](./other)", "post"),
        [("doc.md", 1), ("doc.md", 2), ("other.md", 2), ("other.md", 3)],
    ),
    case(
        "Should find references with headers on links",
        lines("# header", "[link 1](./other.md#sub-bla)", "[link 2](./other#sub-bla)"),
        lines(
            "# header", "pre", "[link 3](./other.md#sub-bla)", "[link 4](./other#sub-bla)", "post"
        ),
        [("doc.md", 1), ("doc.md", 2), ("other.md", 2), ("other.md", 3)],
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_file_references(client, tmp_path, case):
    await run_references(client, tmp_path, case)
