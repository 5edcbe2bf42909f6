"""VS Code's markdown language service, src/test/documentSymbols.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: ``provideDocumentSymbols`` is
``textDocument/documentSymbol`` (hierarchical); names and nesting are compared.
VS Code names a symbol ``## h``, its level's ``#`` marks before the text;
mdseek names it ``h`` and gives the level as the symbol's kind. So the peer's
names are compared with their leading ``#`` marks and space taken off; one case
(``[name as VS Code writes it]``) keeps the peer's name to show that difference.

Not ported: the two tests of link definitions as symbols (the peer's
``includeLinkDefinitions`` option; mdseek's outline lists headings only).
"""

from __future__ import annotations

import re

import pytest
from peer_support import lines, params, run_symbols, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()


def sym(name: str, *children: dict) -> dict:
    """A symbol the peer expects, its name as mdseek writes it (the ``#`` marks off)."""
    return {"name": re.sub(r"^#+ ", "", name), "children": list(children)}


def symbols(name: str, text: str, expected: list, **kw: str) -> dict:
    return {"name": name, "files": {"doc.md": text}, "symbols": expected, **kw}


CASES: list[dict] = [
    symbols("Should not return anything for empty document", "", []),
    symbols("Should not return anything for document with no headers", lines("a", "a"), []),
    symbols(
        "Should not return anything for document with # but no real headers",
        lines("a#a", "a#"),
        [],
    ),
    symbols("Should return single symbol for single header", "# h", [sym("# h")]),
    symbols(
        "Should return single symbol for single header [name as VS Code writes it]",
        "# h",
        [{"name": "# h"}],
        convention="VS Code names a heading's symbol with its level's # marks ('# h'); mdseek with its text ('h') and gives the level as the symbol's kind",
    ),
    symbols("Should not care about symbol level for single header", "### h", [sym("### h")]),
    symbols(
        "Should put symbols of same level in flat list",
        lines("## h", "## h2"),
        [sym("## h"), sym("## h2")],
    ),
    symbols(
        "Should nest symbol of level - 1 under parent",
        lines("# h", "## h2", "## h3"),
        [sym("# h", sym("## h2"), sym("## h3"))],
    ),
    symbols(
        "Should nest symbol of level - n under parent",
        lines("# h", "#### h2"),
        [sym("# h", sym("#### h2"))],
    ),
    symbols(
        "Should flatten children where lower level occurs first",
        lines("# h", "### h2", "## h3"),
        [sym("# h", sym("### h2"), sym("## h3"))],
    ),
    symbols(
        "Should handle line separator in file. Issue #63749",
        lines("# A", "- foo", "", "# B", "- bar"),
        [sym("# A"), sym("# B")],
    ),
    symbols(
        "Should not include document symbols by default",
        lines("[def]: http://example.com", "", "[def 2]: http://example.com"),
        [],
    ),
    symbols(
        "Should strip markup in header text",
        lines("## a `b` **c**", "## [a `b` **c**](http://example.com)"),
        [sym("## a b c"), sym("## a b c")],
    ),
    symbols(
        "Should strip html in header text",
        lines("## <b>a</b> `b` **c**"),
        [sym("## a b c")],
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_document_symbols(client, tmp_path, case):
    await run_symbols(client, tmp_path, case)
