"""Workspace trust in the language server (issue 21): hover and go to definition
on a link show only files the folder indexes (pytest-lsp over stdio)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, initialize, open_doc, rename_capabilities
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

WS: dict = {}
README = (
    "[x](.env)\n\n[y](out/secret.md)\n\n[z](good.md)\n\n[p](pic.png) [q](out/pic.png)"
    " [k](deploy.key) [n](node_modules/pkg/readme.md) [[.env]] ![[deploy.key]]\n"
)


@pytest.fixture
def trust_ws(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "README.md").write_text(README)
    (ws / ".env").write_text("# Keys\n\nAPI_KEY=hunter2-envsecret\n")
    (ws / "good.md").write_text("# Good\n\ngood visible content\n")
    (ws / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (ws / "deploy.key").write_text("-----BEGIN PRIVATE KEY-----\n")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "readme.md").write_text("# Pkg\n\nexcluded\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nzebra-outside-secret\n")
    (outside / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (ws / "out").symlink_to(outside, target_is_directory=True)
    return ws


@pytest_lsp.fixture(config=config())
async def client(lsp_client: LanguageClient, trust_ws: Path):
    WS["ws"] = trust_ws
    await initialize(lsp_client, trust_ws)
    yield
    await lsp_client.shutdown_session()


async def hover_text(client: LanguageClient, u: str, line: int) -> str:
    pos = types.Position(line=line, character=2)
    hov = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=u), position=pos)
    )
    if hov is None:
        return ""
    return (
        hov.contents.value if isinstance(hov.contents, types.MarkupContent) else str(hov.contents)
    )


async def test_hover_and_definition_never_show_a_file_the_folder_does_not_index(
    client: LanguageClient,
):
    ws = WS["ws"]
    u = open_doc(client, ws / "README.md", README)
    assert "good visible content" in await hover_text(client, u, 4)  # the control
    env = await hover_text(client, u, 0)
    assert "hunter2" not in env and "Keys" not in env, env
    out = await hover_text(client, u, 2)
    assert "zebra" not in out, out
    for line in (0, 2):
        loc = await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=u),
                position=types.Position(line=line, character=2),
            )
        )
        assert loc is None, (line, loc)


async def test_document_links_offer_only_what_hover_and_definition_would_open(
    client: LanguageClient,
):
    # Any file inside the folder (real path) but a hidden one or a key: never
    # .env, a key, a file behind a symlink out of the folder, or an excluded
    # folder's file.
    ws = WS["ws"]
    u = open_doc(client, ws / "README.md", README)
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=u))
    )
    targets = sorted(Path(lk.target.split("#")[0].removeprefix("file://")).name for lk in links)
    assert targets == ["good.md", "pic.png"], [lk.target for lk in links]


# -- rename and move stay inside the workspace folders (real paths) ---------------------

INDEX = "[m](movable.md) and [[movable]]\n"


@pytest.fixture
def move_ws(tmp_path) -> Path:
    ws = tmp_path / "mws"
    ws.mkdir()
    (ws / "index.md").write_text(INDEX)
    (ws / "movable.md").write_text("# Movable\n\ntext\n")
    (tmp_path / "elsewhere").mkdir()
    (ws / "out").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    return ws


@pytest_lsp.fixture(config=config())
async def rename_client(lsp_client: LanguageClient, move_ws: Path):
    WS["mws"] = move_ws
    await initialize(lsp_client, move_ws, caps=rename_capabilities())
    yield
    await lsp_client.shutdown_session()


@pytest.mark.parametrize(
    ("col", "name"),
    [(6, "out/movable.md"), (25, "out/movable"), (6, "out%2fmovable.md"), (None, "willRename")],
)
async def test_rename_never_moves_a_file_out_of_the_workspace_through_a_symlink(
    rename_client: LanguageClient, col: int | None, name: str
):
    ws = WS["mws"]
    u = open_doc(rename_client, ws / "index.md", INDEX)
    real = (ws.parent / "elsewhere" / "movable.md").resolve()
    if col is None:  # moved in the editor into the symlinked folder: no edits pointing there
        edit = await rename_client.workspace_will_rename_files_async(
            types.RenameFilesParams(
                files=[
                    types.FileRename(
                        old_uri=(ws / "movable.md").as_uri(),
                        new_uri=(ws / "out/movable.md").as_uri(),
                    )
                ]
            )
        )
        assert edit is None, edit
        return
    with pytest.raises(Exception) as err:
        await rename_client.text_document_rename_async(
            types.RenameParams(
                text_document=types.TextDocumentIdentifier(uri=u),
                position=types.Position(line=0, character=col),
                new_name=name,
            )
        )
    assert str(err.value).endswith(
        f"out/movable.md is outside the workspace folders (it resolves to {real})"
    ), str(err.value)
    assert "\n" not in str(err.value)
    assert (ws / "movable.md").is_file() and not real.exists()
