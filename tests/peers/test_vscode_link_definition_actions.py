"""VS Code's markdown language service, src/test/codeActions/removeLinkDefinition.test.ts,
ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: the peer's ``getActions(doc, pos)`` (its
remove-link-definition provider, given the document's diagnostics) is
``textDocument/codeAction`` at ``pos`` (an empty range) of ``test.md``, its
context holding mdseek's diagnostics of the document; of mdseek's answer the
actions that remove a link definition ("Remove unused link definition",
"Remove duplicate link definition") are counted (the others -- link by
meaning, table of contents -- are no part of the peer's provider), and the
text once the one action's edit is applied is compared with the peer's. A test
asking at two places is two cases.

Not ported: src/test/codeActions/extractLinkDef.test.ts (the peer's "Extract
to link definition" refactoring: mdseek has none).
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from peer_support import (
    apply_edits,
    as_tuple,
    diagnostics_of,
    lines,
    params,
    server_fixture,
    tdi,
    workspace,
)

pytestmark = pytest.mark.slow

client = server_fixture()

TEXT = lines("text", "", "[def]: http://example.com", "", "more text")
DUPS = lines(
    "text",
    "",
    "[def]: http://example.com/first",
    "[def]: http://example.com/second",
    "",
    "more text",
)


def act(name: str, text: str, pos: tuple[int, int], after: str | None) -> dict:
    """``after``: the text once the one action is applied (None: no action)."""
    return {"name": name, "files": {"test.md": text}, "pos": pos, "after": after}


CASES: list[dict] = [
    act("Should not return code action when not on link", lines("test"), (0, 3), None),
    act("Should not return action when not on unused definition", TEXT, (0, 3), None),
    act(
        "Should return when on unused definition",
        TEXT,
        (2, 3),
        lines("text", "", "", "more text"),
    ),
    act(
        "Should remove entire line instead of leaving blank line",
        lines(
            '[a]: http://example.com "title"',
            '[b]: http://example.com/b "title2"',
            '[c]: http://example.com/c "title3"',
        ),
        (1, 3),
        lines('[a]: http://example.com "title"', '[c]: http://example.com/c "title3"'),
    ),
    act(
        "Should return when on unused definition with title",
        lines("text", "", '[def]: http://example.com "title"', "", "more text"),
        (2, 3),
        lines("text", "", "", "more text"),
    ),
    act(
        "Should return action when on duplicate definition#1",
        DUPS,
        (2, 3),
        lines("text", "", "[def]: http://example.com/second", "", "more text"),
    ),
    act(
        "Should return action when on duplicate definition#2",
        DUPS,
        (3, 3),
        lines("text", "", "[def]: http://example.com/first", "", "more text"),
    ),
    act(
        "Should prefer unused code action if link definition is both unused and duplicated",
        lines(
            "text",
            "",
            '[def]: http://example.com "title"',
            '[def]: http://example.com/other "title2"',
            "",
            "more text",
        ),
        (2, 3),
        lines("text", "", '[def]: http://example.com/other "title2"', "", "more text"),
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_link_definition_actions(client, tmp_path, case):
    async with workspace(client, tmp_path, case) as ws:
        diags = await diagnostics_of(client, ws, "test.md")
        at = types.Position(line=case["pos"][0], character=case["pos"][1])
        found = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=tdi(ws.uri("test.md")),
                range=types.Range(start=at, end=at),
                context=types.CodeActionContext(diagnostics=diags),
            )
        )
        removes = [
            a
            for a in found or []
            if isinstance(a, types.CodeAction) and a.title.endswith("link definition")
        ]
        if case["after"] is None:
            assert removes == []
            return
        assert len(removes) == 1, [a.title for a in removes]
        edit = removes[0].edit
        assert edit is not None and edit.changes is not None
        (edits,) = edit.changes.values()
        text = ws.files["test.md"] or ""
        assert apply_edits(text, [(as_tuple(e.range), e.new_text) for e in edits]) == case["after"]
