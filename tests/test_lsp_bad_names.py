"""Over stdio: a file whose name is not UTF-8 is indexed, found, shown with U+FFFD
and reached by its real bytes (a percent-encoded URI); NOTES.MD is indexed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, initialize, request, status, wait_ready, wait_updates
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

BAD = os.fsdecode(b"men\xfc caf\xe9.md")  # Latin-1 bytes
SHOWN = "men\ufffd caf\ufffd.md"
WS: dict = {}


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("badnames") / "ws"
    root.mkdir()
    (root / BAD).write_text("# Menu\n\nespresso and quokkaberry tart.\n")
    (root / "NOTES.MD").write_text("# Shouting\n\nuppercase marmalade notes.\n")
    (root / "plain.md").write_text("# Plain\n\nan ordinary glacier note.\n")
    return root


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    WS["ws"] = ws
    await initialize(lsp_client, ws)
    yield
    await lsp_client.shutdown_session()


async def test_non_utf8_name_is_found_shown_and_reindexed(client: LanguageClient):
    await wait_ready(client)
    ws = WS["ws"]
    res = await request(client, "mdseek/search", {"query": "quokkaberry", "limit": 3})
    top = res["results"][0]
    assert top["path"] == SHOWN
    assert top["uri"].endswith("/men%FC%20caf%E9.md")
    res = await request(client, "mdseek/search", {"query": "marmalade", "limit": 3})
    assert res["results"][0]["path"] == "NOTES.MD"
    # The client opens and saves it by that URI: the server reaches the real file.
    syms = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=top["uri"]))
    )
    assert syms and syms[0].name == "Menu"
    st0 = await status(client)
    (ws / BAD).write_text("# Menu\n\nespresso and gooseberry fool.\n")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=top["uri"]))
    )
    await wait_updates(client, st0["updates_done"])
    res = await request(client, "mdseek/search", {"query": "gooseberry", "limit": 3})
    assert res["results"][0]["path"] == SHOWN and res["results"][0]["uri"] == top["uri"]
    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="gooseberry"))
    assert symbols and symbols[0].location.uri == top["uri"]
