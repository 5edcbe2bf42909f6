"""VS Code's markdown language service, src/test/workspaceSymbol.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: ``provideWorkspaceSymbols(query)`` is
``workspace/symbol`` with the query, once the case's folder is indexed. The
peer's names carry the heading's marks (``# header1``); mdseek's name is the
heading's text (``header1``), so the names compared are the peer's without the
marks. The peer lists symbols in document order, mdseek by relevance: they are
compared in the order of their places (file, line). mdseek's note row (kind
Event, "no section matches well"), which rates the answer and names no
symbol, is left out. The peer's workspace changes (a file updated, deleted,
created) are made on disk and told as ``workspace/didChangeWatchedFiles``; a
test asking before and after the change is two cases.

mdseek's workspace symbols are a search (by words and meaning): a query is
matched by its words (the last one as a prefix) and by meaning, not by letters
in order; an empty query (editors ask with one as the picker opens) lists the
headings, files in path order, as VS Code does (the first ``searchLimit``).
All of the peer's tests are ported.
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_workspace_symbols, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

MEANING = "mdseek answers a query no word matches with the sections nearest in meaning (under a row saying no section matches well); VS Code matches the query's letters in order"

LETTERS = "mdseek matches a query's words (the last one as a prefix) and its meaning; VS Code matches its letters in order (cdf: c-at d-og f-ish)"


def ask(name: str, files: dict, query: str, names: list | None = None, **kw: object) -> dict:
    case = {"name": name, "files": files, "query": query, **kw}
    if names is not None:
        case["names"] = names
    return case


ONE = {"test.md": "# header1\nabc\n## header2"}
TEN = {f"test{i}.md": f"# common\nabc\n## header{i}" for i in range(10)}
ABC = {"test.md": "# aBc1\nabc\n## ABc2"}
FISH = {"test.md": "# cat dog fish"}

CASES: list[dict] = [
    ask("Should not return anything for empty workspace", {}, "", []),
    ask(
        "Should return symbols from workspace with one markdown file",
        ONE,
        "",
        ["header1", "header2"],
    ),
    ask("Should return all content basic workspace", TEN, "", count=20),
    ask(
        "Should update results when markdown file changes symbols#1",
        {"test.md": "# header1"},
        "",
        count=1,
    ),
    ask(
        "Should update results when markdown file changes symbols#2",
        {"test.md": "# header1"},
        "",
        ["new header", "header2"],
        then={"test.md": "# new header\nabc\n## header2"},
    ),
    ask(
        "Should remove results when file is deleted#1",
        {"test.md": "# header1"},
        "",
        count=1,
    ),
    ask(
        "Should remove results when file is deleted#2",
        {"test.md": "# header1"},
        "",
        count=0,
        then={"test.md": None},
    ),
    ask(
        "Should update results when markdown file is created#1",
        {"test.md": "# header1"},
        "",
        count=1,
    ),
    ask(
        "Should update results when markdown file is created#2",
        {"test.md": "# header1"},
        "",
        count=3,
        then={"test2.md": "# new header\nabc\n## header2"},
    ),
    ask(
        "Should not include link definitions",
        {"test.md": lines("# header1", "[def]: http://example.com")},
        "",
        ["header1"],
    ),
    ask("Should match case insensitively#1", ABC, "ABC", ["aBc1", "ABc2"]),
    ask("Should match case insensitively#2", ABC, "abc", ["aBc1", "ABc2"]),
    ask("Should match fuzzyily#1", FISH, "cat", ["cat dog fish"]),
    ask("Should match fuzzyily#2", FISH, "cdf", ["cat dog fish"], convention=LETTERS),
    ask("Should match fuzzyily#3", FISH, "catfish", ["cat dog fish"]),
    ask("Should match fuzzyily#4", FISH, "fishcat", [], convention=MEANING),
    ask("Should match fuzzyily#5", FISH, "ccat", []),
    ask(
        "Should strip markup in headers",
        {"test.md": lines("# a `b` **c**", "# [a `x` **y**](http://example.com)")},
        "a",
        ["a b c", "a x y"],
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_workspace_symbols(client, tmp_path, case):
    await run_workspace_symbols(client, tmp_path, case)
