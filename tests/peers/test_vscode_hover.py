"""VS Code's markdown language service, src/test/hover.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms: ``provideHover`` is ``textDocument/hover`` at the
peer's position; "nothing" is no hover. A test that asks at several places is
one case per place.

Not ported: the peer's three tests of a picture's preview (``![img](./cat.png)``,
``<img src>``): mdseek's hover previews a linked note's section and a heading's
related sections, never a picture, so there is no answer of mdseek's to compare.
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from peer_support import params, position, server_fixture, tdi, workspace

pytestmark = pytest.mark.slow

client = server_fixture()

CASES: list[dict] = [
    {
        "name": f"Should return nothing if not on path#{n}",
        "files": {"doc.md": '![img](./cat.png "title")', "cat.png": None},
        "pos": (0, ch),
    }
    for n, ch in enumerate([0, 3, 19], 1)
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_hover(client, tmp_path, case):
    async with workspace(client, tmp_path, case) as ws:
        got = await client.text_document_hover_async(
            types.HoverParams(text_document=tdi(ws.uri("doc.md")), position=position(case["pos"]))
        )
        assert got is None, got
