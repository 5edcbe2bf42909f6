"""Related sections, unlinked, through the real language server over stdio
(pytest-lsp): with ``relatedUnlinked`` a heading's hover leaves out what the
section links to or is linked from; with ``relatedLens`` each heading gets an
"N related, unlinked" lens whose command lists them. The folder is
tests/test_related_unlinked.py's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, initialize, uri, wait_ready
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_related_unlinked import NOTES

pytestmark = pytest.mark.slow

WS: dict = {}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    dest = tmp_path / "notes"
    dest.mkdir()
    for name, text in NOTES.items():
        (dest / name).write_text(text)
    WS["ws"] = dest
    return dest


@pytest_lsp.fixture(config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    options = {"relatedUnlinked": True, "relatedLens": True, "hoverRelated": 20}
    await initialize(lsp_client, ws, options)
    await wait_ready(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def test_hover_leaves_out_linked_sections(client: LanguageClient):
    a = WS["ws"] / "a.md"
    res = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri(a)),
            position=types.Position(line=0, character=3),
        )
    )
    md = res.contents.value
    files = set(re.findall(r"/(\w)\.md#L\d+\)", md))
    assert "d" in files  # about the same thing, linked with nothing
    assert not files & {"c", "f"}  # c links to a; a links the whole of f
    assert "#L5)" not in md  # b.md's Replica promotion (line 5): a links to it


async def test_the_related_unlinked_lens(client: LanguageClient):
    a = WS["ws"] / "a.md"
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri(a)))
    )
    assert len(lenses) == 2  # references and related, on the one heading
    resolved = [await client.code_lens_resolve_async(ln) for ln in lenses]
    titles = [ln.command.title for ln in resolved if ln.command]
    assert titles[0] == "1 reference"  # c.md links to a.md
    related = resolved[1].command
    assert related is not None and related.command == "mdseek.showReferences"
    m = re.fullmatch(r"(\d+) related, unlinked", related.title)
    assert m is not None and int(m.group(1)) == len(related.arguments[2])
    places = {(Path(x["uri"]).name, x["range"]["start"]["line"]) for x in related.arguments[2]}
    assert ("d.md", 0) in places
    assert not {p for p in places if p[0] in ("c.md", "f.md")} and ("b.md", 4) not in places
