"""Wiki links reaching a note by its title, over stdio (pytest-lsp): no "No such
note" for ``[[Doc 2]]`` or ``[[doc-2#Part]]`` when doc2.md's title is ``# Doc 2``,
go-to-definition to the heading, a title two notes share reported as ambiguous,
and an open buffer's unsaved title counting. Expected values are written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, initialize, open_doc, rename_capabilities, uri
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_lsp_aliases import diagnostics, doc_id, pos

pytestmark = pytest.mark.slow

FILES = {
    "notes/doc2.md": "# Doc 2\n\nText.\n\n## Part\n\nMore.\n",
    "p.md": "# Twice\n",
    "q.md": "Twice\n=====\n",
    "src.md": "# Src\n\n[[Doc 2]] [[doc-2#Part]] [[Twice]] [[Nope]]\n",
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / "ws" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ws" / rel).write_text(text)
    return tmp_path / "ws"


@pytest_lsp.fixture(config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    await initialize(lsp_client, ws, caps=rename_capabilities())
    yield
    await lsp_client.shutdown_session()


async def test_a_title_reaches_its_note_and_a_shared_title_is_ambiguous(
    client: LanguageClient, ws: Path
):
    u = open_doc(client, ws / "src.md")
    assert await diagnostics(client, u) == [
        (2, 25, "Ambiguous link: 'Twice' is the title of p.md and q.md"),
        (2, 35, "No such note: Nope.md"),
    ]
    got = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc_id(ws / "src.md"), position=pos(2, 14))
    )
    assert isinstance(got, types.Location)
    assert (got.uri, got.range.start.line) == (uri(ws / "notes/doc2.md"), 4)


async def test_an_open_buffers_unsaved_title_counts(client: LanguageClient, ws: Path):
    open_doc(client, ws / "q.md", "# Once\n")  # not saved: Twice is p.md's only
    u = open_doc(client, ws / "src.md")
    assert await diagnostics(client, u) == [(2, 35, "No such note: Nope.md")]
