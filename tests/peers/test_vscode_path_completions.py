"""VS Code's markdown language service, src/test/pathCompletion.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: ``provideCompletionItems`` is
``textDocument/completion`` at the ``$$CURSOR$$`` of the peer's document (the
peer leaves the marker in the text, so do we); the peer's (label, new text)
of every item is compared with mdseek's, as sorted lists. For anchors after
``#`` the comparison is of the line each item leaves once accepted (VS Code's
item ``#a-b-c`` replaces the typed ``#``, mdseek's ``a-b-c`` goes after it: the
same line); one case keeps the peer's labels to show that difference. The files
the peer's workspace holds exist (empty where it gives no text).

Not ported (30 of the peer's 61 tests): completion of reference labels
(``[][``, ``[ref``: 3 tests); the settings ``excludePaths`` and
``preferredMdPathExtensionStyle`` (2 tests); the "Cross file header
completions" suite and the image-link test of it (11 tests, behind the peer's
``includeWorkspaceHeaderCompletions`` option, off by default: mdseek offers
other files' sections after ``](`` by meaning instead; the suite's "Should not
be enabled by default" is ported); HTML attribute paths and id anchors (14
tests: mdseek completes markdown links only).
"""

from __future__ import annotations

import pytest
from peer_support import (
    CURSOR,
    lines,
    params,
    run_completion,
    run_completion_items,
    run_path_offers,
    server_fixture,
)

pytestmark = pytest.mark.slow

client = server_fixture()

C = CURSOR
LABEL = "mdseek's anchor item is labelled and inserted without the '#' the user typed (a-b-c, after '#'); VS Code's replaces it ('#a-b-c')"
FILES = "after '](' mdseek offers the folder's markdown files as paths from the document (and its sections by meaning); VS Code lists one folder level at a time (a.md, b.md, sub/)"


def complete(name: str, text: str, items: list, **kw: object) -> dict:
    """The peer's (label, new text) of each item."""
    return {"name": name, "text": text, "items": items, **kw}


def accept(name: str, text: str, accepted: list, **kw: object) -> dict:
    """Anchor items as the cursor's line once each is accepted: the peer's new
    text (``#`` and the anchor) put where its provider puts it, from the ``#``
    to the cursor (pathCompletions.ts: ``linkTextStartPosition`` in the same
    document, ``anchorStartPosition`` in another)."""
    return {"name": name, "text": text, "accepted": accepted, "at": "new.md", **kw}


ABC = {"a.md": "", "b.md": "", "sub/foo.md": ""}


def reach(name: str, text: str, files: list | dict, **kw: object) -> dict:
    """The files the peer's path items lead to (``sub/``: the file in it), each
    to be reached by one of mdseek's items (:func:`peer_support.run_path_offers`).
    ``files``: the peer's workspace, a list of paths (empty files) or a dict."""
    ws = files if isinstance(files, dict) else {f: "" for f in files}
    want = kw.pop("want", None) or [f for f in ws if f != kw.get("at", "new.md")]
    return {"name": name, "text": text, "files": ws, "reach": want, "at": "new.md", **kw}


CASES: list[dict] = [
    complete("Should not return anything when triggered in empty doc", C, []),
    accept(
        "Should return anchor completions",
        lines(f"[](#{C}", "", "# A b C", "# x y Z"),
        [f"[](#a-b-c{C}", f"[](#x-y-z{C}"],
    ),
    complete(
        "Should return anchor completions [label as VS Code writes it]",
        lines(f"[](#{C}", "", "# A b C", "# x y Z"),
        [("#a-b-c", "#a-b-c"), ("#x-y-z", "#x-y-z")],
        convention=LABEL,
    ),
    accept(
        "Should return anchor for header with emoji",
        lines(f"[](#{C}", "", "# 😀 a 😀 b 😀"),
        [f"[](#-a--b-{C}"],
    ),
    accept(
        "Should support completions for multibyte character header",
        lines("# 생뚱 This is a title", "", f"[text](#생{C})"),
        [f"[text](#생뚱-this-is-a-title{C})"],
    ),
    complete(
        "Should not return suggestions for http links",
        lines(f"[](http:{C}", "", "# http", "# http:", "# https:"),
        [],
    ),
    complete(
        "Should return relative path suggestions",
        lines(f"[]({C}", "", "# A b C"),
        [("#a-b-c", "#a-b-c"), ("a.md", "a.md"), ("b.md", "b.md"), ("sub/", "sub/")],
        files=ABC,
        convention=FILES,
    ),
    complete(
        "Should return relative path suggestions using ./",
        lines(f"[](./{C}", "", "# A b C"),
        [("a.md", "a.md"), ("b.md", "b.md"), ("sub/", "sub/")],
        files=ABC,
        convention=FILES,
    ),
    complete(
        "Should return absolute path suggestions using /",
        lines(f"[](/{C}", "", "# A b C"),
        [("a.md", "a.md"), ("b.md", "b.md"), ("sub/", "sub/")],
        files={"a.md": "", "b.md": "", "sub/c.md": ""},
        at="sub/new.md",
        convention=FILES,
    ),
    accept(
        "Should return anchor suggestions in other file",
        lines(f"[](/b.md#{C}"),
        [f"[](/b.md#b{C}", f"[](/b.md#header1{C}"],
        files={"b.md": lines("# b", "", "[./a](./a)", "", "# header1")},
        at="sub/new.md",
    ),
    complete(
        "Should complete headers in link definitions",
        lines("# a B c", "# x y    Z", f"[ref-1]: {C}"),
        [("#a-b-c", "#a-b-c"), ("#x-y----z", "#x-y----z"), ("new.md", "new.md")],
        at="sub/new.md",
        convention="mdseek offers the folder's other files (and their sections by meaning) after '[ref]: ', as after '](', and this document's anchors after '#'; VS Code lists this document's anchors and its own file there",
    ),
    accept(
        "Should support header completions on angle bracket path with spaces#1",
        lines(f"[text](<file with space.md#{C}"),
        [f"[text](<file with space.md#a-b-c{C}"],
        files={"file with space.md": lines("# a B c")},
    ),
    complete(
        "Should support header completions on angle bracket path with spaces#2",
        lines(f"[text](<file with space/other.md#{C}"),
        [],
        files={"file with space.md": lines("# a B c")},
    ),
    # -- paths, as the files reached (mdseek writes each path from the document) --------
    reach(
        "Should return relative path suggestions [the files reached]",
        lines(f"[]({C}", "", "# A b C"),
        ABC,
    ),
    reach(
        "Should return relative path suggestions using ./ [the files reached]",
        lines(f"[](./{C}", "", "# A b C"),
        ABC,
    ),
    reach(
        "Should return absolute path suggestions using / [the files reached]",
        lines(f"[](/{C}", "", "# A b C"),
        ["a.md", "b.md", "sub/c.md"],
        at="sub/new.md",
    ),
    reach(
        "Should escape spaces in path names",
        f"[](./sub/{C})",
        ["a.md", "b.md", "sub/file with space.md"],
        want=["sub/file with space.md"],
    ),
    reach(
        "Should support path completions on angle bracket path with spaces",
        f"[](</sub with space/{C}",
        ["sub with space/a.md", "b.md"],
        want=["sub with space/a.md"],
    ),
    reach(
        "Should not escape spaces in path names that use angle brackets#1",
        f"[](<./sub/{C}",
        ["sub/file with space.md"],
    ),
    reach(
        "Should not escape spaces in path names that use angle brackets#2",
        f"[](<./sub/{C}>",
        ["sub/file with space.md"],
    ),
    reach(
        "Should complete paths for path with encoded spaces#1",
        f"[](./file%20{C})",
        ["a.md", "file with space.md", "sub with space/file.md"],
    ),
    reach(
        "Should complete paths for path with encoded spaces#2",
        f"[](./sub%20with%20space/{C})",
        ["a.md", "file with space.md", "sub with space/file.md"],
        want=["sub with space/file.md"],
    ),
    reach(
        "Should complete definition path for path with encoded spaces",
        f"[def]: ./sub%20with%20space/{C}",
        ["a.md", "b.md", "sub with space/file.md"],
        want=["sub with space/file.md"],
    ),
    reach(
        "Should support definition path with angle brackets",
        f"[def]: <./{C}>",
        ["a.md", "b.md", "sub with space/file.md"],
    ),
    reach(
        "Should complete paths in link definition with unicode",
        lines("[😀]", "", f"[😀]: {C}"),
        ["other.md"],
        at="readme.md",
    ),
    reach(
        "Should complete paths in link definition with slash character",
        lines("[ref1/2]", "", f"[ref1/2]: {C}"),
        ["other.md"],
        at="readme.md",
    ),
    reach(
        "Should complete relative paths in link definitions [the files reached]",
        lines("# a B c", f"[ref-1]: {C}"),
        ["a.md", "b.md", "sub/c.md"],
    ),
    reach(
        "Should support multibyte character paths",
        f"[](./{C}",
        ["テスト1.md", "テスト/テスト2.md", "テ ス ト3.md"],
    ),
    reach(
        "Should escape angle brackets if in angle bracket link",
        f"[](<./{C}",
        ["<a>.md", "a<b>c.md"],
    ),
    reach("Should escape mismatched parens", f"[](./{C}", ["(a).md", "a(b.md"]),
    reach("Should escape '%' used in file name", f"[](./{C}", ["a%b.md"]),
    reach(
        "Should return path suggestions for image link",
        f"![img](./{C}",
        ["img.png", "other.md"],
        want=["img.png"],
    ),
    complete(
        "Should not return header suggestions for image link with anchor",
        lines(f"![img](#{C}", "", "# Some Header"),
        [],
    ),
    complete(
        "Should not return header suggestions for image link to other file anchor",
        f"![img](other.md#{C}",
        [],
        files={"other.md": "# Other Header"},
    ),
    accept(
        "Should return completions for links with square brackets",
        lines(f"[x [y] z](#{C}", "", "# A b C"),
        [f"[x [y] z](#a-b-c{C}"],
    ),
    complete(
        "Should not be enabled by default",
        f"[](##{C}",
        [],
        files={"a b.md": "# A b C", "sub space/other sub/c d.md": "# x Y z"},
        at="other/new.md",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_path_completions(client, tmp_path, case):
    if "reach" in case:
        await run_path_offers(client, tmp_path, case)
    elif "accepted" in case:
        await run_completion(client, tmp_path, case)
    else:
        await run_completion_items(client, tmp_path, case)
