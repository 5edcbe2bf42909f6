"""Obsidian syntax over stdio (pytest-lsp): embeds resolve like wiki links,
block ids (``[[note#^id]]``) are targets of their own (never looked up as
headings), attachments (``![[pic.png]]``) are files, not notes, found by name in any folder."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsp_support import config, initialize, open_doc, uri
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

NOTE = "# Note\n\nA paragraph with an id. ^abc-1\n\n## Head\n\ntext\n"
VAULT = (
    "# Vault\n"
    "\n"
    "![[note]] ![[note#Head]] [[note#^abc-1]] ![[pic.png]] ![[icon.svg#icon]]\n"
    "\n"
    "Broken: [[note#^nope]] ![[gone.png]] [[note#Nope]]\n"
)
WS: dict = {}


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, tmp_path_factory):
    ws = tmp_path_factory.mktemp("obsidian") / "ws"
    ws.mkdir()
    (ws / "note.md").write_text(NOTE)
    (ws / "vault.md").write_text(VAULT)
    (ws / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    # an attachment in another folder, found by its name as Obsidian does
    (ws / "Attachments" / "icons").mkdir(parents=True)
    (ws / "Attachments" / "icons" / "icon.svg").write_text("<svg/>")
    WS["ws"] = ws
    await initialize(lsp_client, ws)
    WS["vault"] = open_doc(lsp_client, ws / "vault.md")
    yield
    await lsp_client.shutdown_session()


def rng(a: int, b: int, c: int, d: int) -> types.Range:
    return types.Range(
        start=types.Position(line=a, character=b), end=types.Position(line=c, character=d)
    )


async def test_diagnostics_know_blocks_and_attachments(client: LanguageClient) -> None:
    u = WS["vault"]
    deadline = asyncio.get_running_loop().time() + 30
    while u not in client.diagnostics and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    got = sorted(
        (d.range.start.line, d.range.start.character, d.message) for d in client.diagnostics[u]
    )
    assert got == [
        (4, 8, "No block '^nope' in note.md"),
        (4, 24, "No such file: gone.png"),
        (4, 37, "No heading 'Nope' in note.md"),
    ]  # nothing on line 2: the embeds, the block id and the picture resolve


async def definition(client: LanguageClient, line: int, col: int) -> types.Location:
    res = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=WS["vault"]),
            position=types.Position(line=line, character=col),
        )
    )
    assert isinstance(res, types.Location), res
    return res


async def test_definition_of_embeds_and_block_ids(client: LanguageClient) -> None:
    note = uri(WS["ws"] / "note.md")
    assert await definition(client, 2, 15) == types.Location(uri=note, range=rng(4, 0, 4, 7))
    assert await definition(client, 2, 30) == types.Location(uri=note, range=rng(2, 0, 2, 0))


async def test_attachment_is_a_document_link(client: LanguageClient) -> None:
    res = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=WS["vault"]))
    )
    pic = [(r.range, r.target) for r in res if r.target and r.target.endswith((".png", ".svg"))]
    assert pic == [
        (rng(2, 42, 2, 53), uri(WS["ws"] / "pic.png")),
        (rng(2, 55, 2, 72), uri(WS["ws"] / "Attachments" / "icons" / "icon.svg")),
    ]


async def test_hover_on_an_embed_shows_the_embedded_section(client: LanguageClient) -> None:
    res = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=WS["vault"]),
            position=types.Position(line=2, character=15),  # in ![[note#Head]]
        )
    )
    assert res is not None and isinstance(res.contents, types.MarkupContent)
    assert res.contents.value.startswith("**Head**")
    assert "text" in res.contents.value and res.range == rng(2, 11, 2, 24)
