"""marksman's Tests/CodeActionTests.fs (module ``CreateMissingFileTests``), ported.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms: ``CodeActions.createMissingFile range ctx doc
folder`` is ``textDocument/codeAction`` at the peer's range in ``doc2.md``,
its context holding the diagnostics mdseek gives that document (as an editor
sends them); the peer's action name ``Create `doc3.md``` is the title of
mdseek's quick fix ``Create doc3.md`` (without the backticks), offered to an
editor that can create files. All of the peer's tests are ported (both).
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from peer_support import diagnostics_of, lines, params, server_fixture, tdi, workspace

pytestmark = pytest.mark.slow

client = server_fixture(create_files=True)

DOC1 = lines("# Doc 1", "## Sub 1")

CASES: list[dict] = [
    {
        "name": "CreateMissingFileTests.shouldCreateWhenNoFileExists",
        "files": {"doc1.md": DOC1, "doc2.md": lines("[[doc3]]")},
        "pos": (0, 3),
        "create": "doc3.md",
    },
    {
        "name": "CreateMissingFileTests.shouldNotCreateWhenRefBrokenButFileExists",
        "files": {"doc1.md": DOC1, "doc2.md": lines("[[doc1#Sub 2]]")},
        "pos": (0, 3),
        "create": None,
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_code_actions(client, tmp_path, case):
    async with workspace(client, tmp_path, case) as ws:
        diags = await diagnostics_of(client, ws, "doc2.md")
        assert diags  # both links are broken: a file, a heading
        at = types.Position(line=case["pos"][0], character=case["pos"][1])
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=tdi(ws.uri("doc2.md")),
                range=types.Range(start=at, end=at),
                context=types.CodeActionContext(diagnostics=diags),
            )
        )
        titles = [a.title for a in actions or [] if isinstance(a, types.CodeAction)]
        creates = [t for t in titles if t.startswith("Create ")]
        want = case["create"]
        assert creates == ([f"Create {want}"] if want else []), titles
