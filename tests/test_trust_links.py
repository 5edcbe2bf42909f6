"""Symlinks to files the folder does not index (issue 40): ``leak.md -> .env``,
``notes.md -> .git/config``, a link into an excluded folder or a user
``exclude`` glob are never indexed nor shown, by any front end (the CLI, the
language server, the MCP tools), and the tools agree; a symlink to an indexed
file inside the folder is still followed, one out of the folder still refused."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, initialize, open_doc, wait_ready
from lsprotocol import types
from pytest_lsp import LanguageClient
from sandbox import mdseek as _cli
from sandbox import server_env

from mdseek.index.text.files import FileFilter, check_file, scan

# What no front end may show: the text of a file the folder does not index.
SECRETS = ("SECRET_KEY=", "tok3n", "hidden wombat", "private wombat", "outside wombat")
NOTE = "# Notes\n\nordinary wombat note\n\n[k](leak.md) and [c](notes.md)\n"
USER_EXCLUDE = "private/**"


def leaky_folder(tmp_path: Path) -> Path:
    """A folder whose markdown names are symlinks to files it does not index."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / "private").mkdir()
    (ws / "a.md").write_text(NOTE)
    (ws / ".env").write_text("SECRET_KEY=wombat-envsecret\n")
    (ws / ".git" / "config").write_text(
        '[remote "origin"]\n  url = https://me:tok3n-wombat@example.com/x.git\n'
    )
    (ws / ".git" / "x.md").write_text("# Hidden\n\nhidden wombat git md\n")
    (ws / "private" / "p.md").write_text("# Private\n\nprivate wombat note\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.md").write_text("# Outside\n\noutside wombat note\n")
    (ws / "leak.md").symlink_to(".env")
    (ws / "notes.md").symlink_to(".git/config")
    (ws / "gitmd.md").symlink_to(".git/x.md")
    (ws / "priv.md").symlink_to("private/p.md")
    (ws / "out.md").symlink_to(outside / "o.md")
    (ws / "alias.md").symlink_to("a.md")  # inside, indexed: followed
    return ws


def shows_no_secret(text: str) -> None:
    for s in SECRETS:
        assert s not in text, (s, text)


def test_the_filter_is_applied_to_what_a_symlink_points_at(tmp_path):
    """Guards the one check (files.check_file and the scan): a symlink is
    followed only to a target inside the folder whose own path the
    include/exclude globs admit."""
    ws = leaky_folder(tmp_path)
    flt = FileFilter(exclude=(*FileFilter().exclude, USER_EXCLUDE))
    skipped: list[tuple[str, str]] = []
    assert sorted(f.rel for f in scan(ws, flt, skipped)) == ["a.md", "alias.md"]
    assert sorted(skipped) == [
        ("gitmd.md", "symlink to a file this folder does not index"),
        ("leak.md", "symlink to a file this folder does not index"),
        ("notes.md", "symlink to a file this folder does not index"),
        ("out.md", "symlink to a target outside the workspace"),
        ("priv.md", "symlink to a file this folder does not index"),
    ]
    for name in ("leak.md", "notes.md", "gitmd.md", "priv.md", "out.md"):
        assert check_file(ws, ws / name, flt) is None, name
        assert check_file(ws, Path(name), flt) is None, name
    found = check_file(ws, ws / "alias.md", flt)
    assert found is not None and found.source == ws.resolve() / "a.md"


@pytest.mark.slow
def test_cli_search_never_shows_a_symlinked_secret(tmp_path):
    """Guards the index's scan and reads: `mdseek search` over a folder with
    `leak.md -> .env` and friends finds the real note only."""
    ws = leaky_folder(tmp_path)
    db = tmp_path / "index.sqlite"
    run = _cli(
        "search", str(ws), "wombat", "--mode", "lexical", "--json", "--limit", "20",
        "--db", str(db), "--exclude", USER_EXCLUDE,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    shows_no_secret(run.stdout)
    paths = sorted(r["path"] for r in json.loads(run.stdout)["results"])
    assert paths == ["a.md", "alias.md"], run.stdout
    # A save of the link (the single-file reindex) does not let it in either.
    from mdseek.index.engine.engine import Engine

    flt = FileFilter(exclude=(*FileFilter().exclude, USER_EXCLUDE))
    eng = Engine(ws, index_path=db, file_filter=flt)
    try:
        for name in ("leak.md", "notes.md", "gitmd.md", "priv.md"):
            rep = eng.index_file(ws / name, embed=False)
            assert rep.files == 0, name
        shown = json.dumps([r.snippet for r in eng.search("wombat", mode="lexical").results])
        shows_no_secret(shown)
    finally:
        eng.close()


@pytest.mark.slow
async def test_mcp_tools_agree_that_a_symlinked_secret_is_not_there(tmp_path):
    """Guards the MCP front end: search, related, get_section and outline
    neither show nor accept `leak.md -> .env`, `notes.md -> .git/config` or
    `gitmd.md -> .git/x.md`; the real note and its symlinked alias are served."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from waiting import until

    ws = leaky_folder(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mdseek", "mcp", str(ws), "--exclude", USER_EXCLUDE],
        env=server_env(),
    )
    async with Client(params, read_timeout_seconds=120) as client:

        async def state() -> dict:
            res = await client.call_tool("status", {})
            return res.structured_content or {}

        await until(state, lambda st: st.get("state") in ("ready", "lexical-only"), timeout=300)
        res = await client.call_tool("search", {"query": "wombat", "limit": 20, "mode": "lexical"})
        assert not res.is_error, res.content
        shows_no_secret(json.dumps(res.structured_content))
        paths = sorted(r["path"] for r in res.structured_content["results"])
        assert paths == ["a.md", "alias.md"], paths
        ok = await client.call_tool("get_section", {"path": "alias.md", "line": 1})
        assert not ok.is_error and "ordinary wombat" in json.dumps(ok.structured_content)
        for name in ("leak.md", "notes.md", "gitmd.md"):
            for tool, args in (
                ("get_section", {"path": name, "line": 1}),
                ("outline", {"path": name}),
                ("related", {"path": name, "line": 1}),
            ):
                res = await client.call_tool(tool, args)
                text = " ".join(getattr(c, "text", "") for c in res.content)
                assert res.is_error, (tool, name, text)
                assert "not a markdown file this folder indexes" in text, (tool, name, text)
                shows_no_secret(text)
        rel = await client.call_tool("related", {"path": "a.md", "line": 1})
        shows_no_secret(json.dumps(rel.structured_content))


# -- the language server ------------------------------------------------------------------

LSP_WS: dict = {}


@pytest.fixture
def leaky_ws(tmp_path) -> Path:
    return leaky_folder(tmp_path)


@pytest_lsp.fixture(config=config())
async def client(lsp_client: LanguageClient, leaky_ws: Path):
    LSP_WS["ws"] = leaky_ws
    await initialize(lsp_client, leaky_ws, {"exclude": [USER_EXCLUDE]})
    yield
    await lsp_client.shutdown_session()


@pytest.mark.slow
async def test_the_language_server_never_shows_a_symlinked_secret(client: LanguageClient):
    """Guards the language server's reads (its index, hover and definition on
    a link, document links): `[k](leak.md)` with `leak.md -> .env` previews and
    opens nothing, and workspace/symbol finds only the real note."""
    ws = LSP_WS["ws"]
    await wait_ready(client, timeout=300)
    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="wombat"))
    shown = json.dumps([[s.name, s.container_name, str(s.location)] for s in symbols or []])
    shows_no_secret(shown)
    files = sorted({Path(s.location.uri.removeprefix("file://")).name for s in symbols or []})
    assert files == ["a.md", "alias.md"], shown
    u = open_doc(client, ws / "a.md", NOTE)
    for col in (2, 18):  # [k](leak.md), [c](notes.md)
        pos = types.Position(line=4, character=col)
        doc = types.TextDocumentIdentifier(uri=u)
        hov = await client.text_document_hover_async(
            types.HoverParams(text_document=doc, position=pos)
        )
        shows_no_secret(str(hov))
        loc = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc, position=pos)
        )
        assert loc is None, (col, loc)
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=u))
    )
    assert not links, [lk.target for lk in links or []]


# -- a FIFO planted beside the index ---------------------------------------------------------


@pytest.fixture(scope="module")
def workspace_index(tmp_path_factory) -> Path:
    """A folder with its index in ``.mdseek/`` (asked for with an empty file)."""
    ws = tmp_path_factory.mktemp("fifo") / "ws"
    ws.mkdir()
    (ws / "a.md").write_text("# A\n\nalpha wombat\n")
    (ws / ".mdseek").mkdir(mode=0o700)
    (ws / ".mdseek" / "index.sqlite").touch(mode=0o600)
    run = _cli("index", str(ws), "--no-progress")
    assert run.returncode == 0, run.stderr
    return ws


@pytest.mark.slow
@pytest.mark.parametrize(
    ("suffix", "command"),
    [
        (".open", "status"),
        (".open", "search"),
        (".lock", "status"),
        ("-journal", "status"),
        ("-wal", "status"),
        ("", "search"),
    ],
)
def test_a_fifo_beside_the_index_never_hangs_the_cli(workspace_index, tmp_path, suffix, command):
    """Guards index/store/location.py's open_regular and prepare, and
    read_meta: a FIFO planted at ``.mdseek/index.sqlite.open`` (or the lock,
    the journal, the -wal, the index itself) is moved aside with one line, and
    `mdseek status` / `search` answer within the deadline (they waited forever
    on the FIFO for an index this cache had not vouched for)."""
    ws = tmp_path / "ws"
    shutil.copytree(workspace_index, ws)
    planted = ws / ".mdseek" / f"index.sqlite{suffix}"
    planted.unlink(missing_ok=True)
    os.mkfifo(planted, 0o600)
    args = [command, str(ws)] + (["wombat", "--mode", "lexical"] if command == "search" else [])
    env = server_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    run = subprocess.run(
        [sys.executable, "-m", "mdseek", *args], capture_output=True, text=True, env=env, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert "alpha wombat" in run.stdout if command == "search" else "chunks:" in run.stdout
    assert not stat.S_ISFIFO(os.lstat(planted).st_mode) if os.path.lexists(planted) else True
