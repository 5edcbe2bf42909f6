"""Tags over stdio (pytest-lsp): completion after '#', references of a tag
across files (text and front matter, any case), and '#' workspace symbols."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, initialize, open_doc, uri
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

A = "---\ntags: [ops, area/db]\n---\n# A\n\nAbout #ops and `#code`.\n"
B = "# B\n\nThe #Ops team, #area/db/replicas and #area.\n\n```\n#ops\n```\n"
WS: dict = {}


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, tmp_path_factory):
    ws = tmp_path_factory.mktemp("tags") / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "a.md").write_text(A)
    (ws / "sub" / "b.md").write_text(B)
    WS["ws"] = ws
    await initialize(lsp_client, ws)
    yield
    await lsp_client.shutdown_session()


def rng(a: int, b: int, c: int, d: int) -> types.Range:
    return types.Range(
        start=types.Position(line=a, character=b), end=types.Position(line=c, character=d)
    )


async def test_references_of_a_tag(client: LanguageClient) -> None:
    ws: Path = WS["ws"]
    a, b = uri(ws / "a.md"), uri(ws / "sub" / "b.md")
    res = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=b),
            position=types.Position(line=2, character=6),  # in "#Ops"
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    got = sorted(
        (r.uri, r.range.start.line, r.range.start.character, r.range.end.character) for r in res
    )
    assert got == sorted([(a, 1, 7, 10), (a, 5, 6, 10), (b, 2, 4, 8)])  # not the fence, not code


async def test_completion_after_hash(client: LanguageClient) -> None:
    ws: Path = WS["ws"]
    text = "# New\n\nSee #ar"
    u = open_doc(client, ws / "new.md", text)
    res = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=u),
            position=types.Position(line=2, character=7),
        )
    )
    items = res.items if isinstance(res, types.CompletionList) else res
    labels = {i.label: i.detail for i in items}
    assert labels == {
        "ops": "#ops: 3 uses",
        "area/db": "#area/db: 1 use",
        "area/db/replicas": "#area/db/replicas: 1 use",
        "area": "#area: 1 use",
    }
    edit = next(i.text_edit for i in items if i.label == "area")
    assert isinstance(edit, types.TextEdit) and edit.range == rng(2, 5, 2, 7)


async def test_workspace_symbols_for_a_tag_prefix(client: LanguageClient) -> None:
    ws: Path = WS["ws"]
    res = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="#area/d"))
    assert res is not None
    got = sorted((s.name, s.location.uri, s.location.range.start.line) for s in res)  # type: ignore[union-attr]
    assert got == sorted(
        [("#area/db", uri(ws / "a.md"), 1), ("#area/db/replicas", uri(ws / "sub" / "b.md"), 2)]
    )


async def test_rename_a_tag_and_the_tags_under_it(client: LanguageClient) -> None:
    """Renaming #area from its use in b.md renames it in b.md's text and a.md's
    front matter, nested tags keep their tail, code and fences are left alone."""
    ws: Path = WS["ws"]
    a, b = uri(ws / "a.md"), uri(ws / "sub" / "b.md")
    at = types.Position(line=2, character=39)  # in "#area." at the end of the line
    prep = await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=types.TextDocumentIdentifier(uri=b), position=at)
    )
    assert isinstance(prep, types.PrepareRenamePlaceholder)
    assert prep.range == rng(2, 38, 2, 42) and prep.placeholder == "area"
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=b), position=at, new_name="#zone"
        )
    )
    assert edit is not None and edit.changes is not None
    got = {
        u: sorted(
            (e.range.start.line, e.range.start.character, e.range.end.character, e.new_text)
            for e in es
        )
        for u, es in edit.changes.items()
    }
    assert got == {
        a: [(1, 12, 19, "zone/db")],
        b: [(2, 16, 32, "zone/db/replicas"), (2, 38, 42, "zone")],
    }
    with pytest.raises(Exception, match="cannot be a tag"):
        await client.text_document_rename_async(
            types.RenameParams(
                text_document=types.TextDocumentIdentifier(uri=b), position=at, new_name="1984"
            )
        )
