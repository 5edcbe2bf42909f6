"""Helpers shared by the end-to-end language server tests (pytest-lsp over stdio)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, make_test_lsp_client
from sandbox import server_env

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
QUERIES = Path(__file__).resolve().parent / "fixture_queries.json"
SERVER_CMD = [sys.executable, "-m", "mdseek", "serve", "--stdio"]


def make_client() -> LanguageClient:
    """pytest-lsp's client, plus an answer to client/registerCapability."""
    client = make_test_lsp_client()
    client.registrations = []  # type: ignore[attr-defined]

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    return client


def config(env: dict[str, str] | None = None) -> ClientServerConfig:
    """pytest-lsp's server: ``mdseek serve`` in the test's environment
    (sandbox.server_env, made when the server starts), plus ``env``."""
    return SandboxedConfig(
        server_command=SERVER_CMD, client_factory=make_client, server_env=env or {}
    )


class SandboxedConfig(ClientServerConfig):
    """A config whose server gets :func:`sandbox.server_env` as it starts
    (the decorator that takes it runs when the test module is imported)."""

    async def start(self, devtools: str | None = None) -> Any:
        client = self.client_factory()
        env = server_env(**(self.server_env or {}))
        await client.start_io(*self.get_server_command(devtools), env=env)
        return client


def capabilities(watch: bool = True, progress: bool = True) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=progress),
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            workspace_folders=True,
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=watch
            ),
            symbol=types.WorkspaceSymbolClientCapabilities(),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            document_symbol=types.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
            definition=types.DefinitionClientCapabilities(),
            references=types.ReferenceClientCapabilities(),
            completion=types.CompletionClientCapabilities(
                completion_item=types.ClientCompletionItemOptions(snippet_support=False)
            ),
        ),
    )


def pull_capabilities() -> types.ClientCapabilities:
    """A client that pulls diagnostics, a document's and the workspace's (with
    related documents; no refresh)."""
    caps = capabilities()
    assert caps.workspace is not None and caps.text_document is not None
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(
        related_document_support=True
    )
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=False)
    return caps


def rename_capabilities() -> types.ClientCapabilities:
    """A client that renames: versioned document changes with file renames,
    willRenameFiles, prepareRename (no file watching, no progress)."""
    c = capabilities(watch=False, progress=False)
    assert c.workspace is not None and c.text_document is not None
    c.workspace.workspace_edit = types.WorkspaceEditClientCapabilities(
        document_changes=True, resource_operations=[types.ResourceOperationKind.Rename]
    )
    c.workspace.file_operations = types.FileOperationClientCapabilities(will_rename=True)
    c.text_document.rename = types.RenameClientCapabilities(prepare_support=True)
    return c


def copy_workspace(dest: Path) -> Path:
    """The fixtures folder (holding handbook/) copied to ``dest``; never the repo's own."""
    shutil.copytree(FIXTURES, dest, ignore=shutil.ignore_patterns(".mdseek"))
    return dest


def fixture_queries() -> dict:
    return json.loads(QUERIES.read_text())


def uri(path: Path) -> str:
    return path.resolve().as_uri()


async def initialize(
    client: LanguageClient, ws: Path, options: Any = None, **kw: Any
) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=kw.pop("caps", None) or capabilities(),
            root_uri=uri(ws),
            workspace_folders=[types.WorkspaceFolder(uri=uri(ws), name=ws.name)],
            initialization_options=options,
            **kw,
        )
    )


def plain(obj: Any) -> Any:
    """pygls hands custom results over as namedtuples: back to dicts and lists."""
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    return obj


async def request(client: LanguageClient, method: str, params: Any = None) -> Any:
    res = await client.protocol.send_request_async(method, params if params is not None else {})
    return plain(res)


async def status(client: LanguageClient) -> dict:
    return await request(client, "mdseek/status", {})


async def wait_ready(client: LanguageClient, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    st: dict = {}
    while time.monotonic() < deadline:
        st = await status(client)
        if st["state"] in ("ready", "lexical-only") and not st.get("updates_pending"):
            return st
        await asyncio.sleep(0.1)
    raise AssertionError(f"server not ready after {timeout}s: {st}")


async def wait_updates(client: LanguageClient, done_before: int, timeout: float = 30.0) -> dict:
    """Until the server has finished a file update after ``done_before`` and has none pending."""
    deadline = time.monotonic() + timeout
    st: dict = {}
    while time.monotonic() < deadline:
        st = await status(client)
        if st["updates_done"] > done_before and st["updates_pending"] == 0:
            return st
        await asyncio.sleep(0.02)
    raise AssertionError(f"no index update after {timeout}s: {st}")


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    u = uri(path)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=u,
                language_id="markdown",
                version=version,
                text=path.read_text() if text is None else text,
            )
        )
    )
    return u


def utf16_col(line: str, col: int) -> int:
    return len(line[:col].encode("utf-16-le")) // 2


def indexed_template(tmp_path_factory, request=None) -> Path:
    """The fixture workspace, indexed once per test session (embedding the
    handbook takes ~30 s on 2 cores); modules copy it, index file included.
    Reuses conftest's ``golden_index`` when the session has one, so a full run
    embeds the handbook only once."""
    base = tmp_path_factory.getbasetemp() / "mdseek-lsp-template"
    ws = base / "ws"
    done = base / ".complete"
    if done.exists():
        return ws
    if base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True)
    golden = None
    if request is not None:
        try:
            golden = Path(request.getfixturevalue("golden_index"))
        except Exception:
            golden = None
    copy_workspace(ws)
    index = ws / ".mdseek" / "index.sqlite"  # in the workspace, so copies carry it along
    index.parent.mkdir(mode=0o700)  # as mdseek makes it: a folder others can read is not adopted
    if golden is not None and golden.is_file():
        shutil.copy(golden, index)
    from mdseek.index.engine.engine import Engine

    eng = Engine(ws, index_path=index)
    rep = eng.index()  # with the golden index: only stat/hash checks, nothing embedded
    assert rep.pending == 0 and rep.chunks > 0, rep
    eng.close()  # the last connection: the WAL is checkpointed into the file
    done.touch()
    return ws


def indexed_copy(tmp_path_factory, name: str, request=None) -> Path:
    """A private copy of the indexed workspace (mtimes kept, so nothing is re-embedded)."""
    src = indexed_template(tmp_path_factory, request)
    dest = tmp_path_factory.mktemp(name) / "ws"
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("*.sqlite-wal", "*.sqlite-shm"))
    from conftest import made_here

    made_here(dest / ".mdseek" / "index.sqlite")  # the copy is the user's own
    return dest
