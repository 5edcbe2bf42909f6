"""marksman's Tests/SymbolsTests.fs (workspace and document symbols), ported.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms: ``Symbols.workspaceSymbols query workspace`` is
``workspace/symbol`` (as in :mod:`test_vscode_workspace_symbols`: mdseek's
note row left out, names compared in the order of their places);
``Symbols.docSymbols hierarchy`` is ``textDocument/documentSymbol``: mdseek
always answers the hierarchy (``DocumentSymbol``), so the peer's flat
``SymbolInformation`` test (``order_noHierarchy``) is compared by its order of
headings (preorder). marksman names a symbol by kind (``H1: E``,
``Tag: t1``) in its flat lists, mdseek by the heading's text (``E``): the
names compared are the peer's without the kind (as the VS Code peer's marks,
``# E``, are left out). A
test asserting headings and tags together is two cases, one per kind.
All of the peer's tests are ported.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_symbols, run_workspace_symbols, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

EMPTY = "marksman lists each note's tags too for an empty query; mdseek, as VS Code, the headings (a tag's uses are the workspace symbols of '#tag1')"
TAGS = "mdseek's outline lists headings only (as VS Code's); a tag's uses are the workspace symbols of '#t1'"

WS = {"doc1.md": lines("# A", "#tag1"), "doc2.md": lines("# B", "#tag1 #tag2")}
DOC = {"doc.md": lines("# E", "## D", "#t1", "### B", "#t2", "## C", "# A")}


def outline(*tree: tuple) -> list[dict]:
    """(name, children...) tuples as :func:`peer_support.run_symbols` wants them."""
    return [{"name": n, "children": outline(*kids)} for n, *kids in tree]


CASES: list[dict] = [
    {
        "name": "WorkspaceSymbol.symbols_noQuery",
        "files": WS,
        "query": "",
        "names": ["A", "tag1", "B", "tag1", "tag2"],
        "kind": "workspace",
        "convention": EMPTY,
    },
    {
        "name": "WorkspaceSymbol.symbols_withQuery",
        "files": WS,
        "query": "Tag:",
        "names": ["tag1", "tag1", "tag2"],
        "kind": "workspace",
        "convention": "mdseek lists a tag's uses for the query '#tag1' (workspace/symbol); marksman every tag for 'Tag:'",
    },
    {
        "name": "DocSymbols.order_noHierarchy [headings]",
        "files": DOC,
        "symbols": outline(("E", ("D", ("B",)), ("C",)), ("A",)),
    },
    {
        "name": "DocSymbols.order_noHierarchy [tags]",
        "files": DOC,
        "symbols": outline(("E", ("D", ("B",)), ("C",)), ("A",), ("t1",), ("t2",)),
        "convention": TAGS,
    },
    {
        "name": "DocSymbols.order_Hierarchy [headings]",
        "files": DOC,
        "symbols": outline(("E", ("D", ("B",)), ("C",)), ("A",)),
    },
    {
        "name": "DocSymbols.order_Hierarchy [tags]",
        "files": DOC,
        "symbols": outline(("E", ("D", ("t1",), ("B", ("t2",))), ("C",)), ("A",)),
        "convention": TAGS,
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_symbols(client, tmp_path, case):
    if case.get("kind") == "workspace":
        await run_workspace_symbols(client, tmp_path, case)
    else:
        await run_symbols(client, tmp_path, case)
