"""Extract a section to a new note, then inline it back, through the real
language server over stdio (pytest-lsp): the code actions' WorkspaceEdits
(create, edit, delete) applied as a client applies them, with the file events
a client sends; the folder ends as it began, byte for byte. And the refusals:
an existing target file, a target that leads outside the folder (a link to
elsewhere left at its name), a client that cannot create files."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
import rename_check as rc
from lsp_support import config, initialize, rename_capabilities, uri
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

DB = """# Database

Intro, see [promotion](#replica-promotion) and [lag](#lag).

## Replica promotion

Promote the replica. Back to [the intro](#database), on to [lag](#lag).
See [the drill](../drills/drill.md).

### Checks

Check the lag first.

## Lag

Keep it low.
"""

DRILL = """# Drill

Follow [the steps](../runbooks/db.md#replica-promotion), then
[checks](../runbooks/db.md#checks). Also [the whole runbook](../runbooks/db.md).
"""

WS: dict = {}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    dest = tmp_path / "ws"
    (dest / "runbooks").mkdir(parents=True)
    (dest / "drills").mkdir()
    (dest / "runbooks" / "db.md").write_text(DB)
    (dest / "drills" / "drill.md").write_text(DRILL)
    (dest / "README.md").write_text("# Ops\n\n[[db]] and [the list](runbooks/db.md#lag).\n")
    WS["ws"] = dest
    return dest


def caps(*ops: types.ResourceOperationKind) -> types.ClientCapabilities:
    c = rename_capabilities()
    assert c.workspace is not None and c.text_document is not None
    c.workspace.workspace_edit = types.WorkspaceEditClientCapabilities(
        document_changes=True, resource_operations=list(ops)
    )
    c.text_document.code_action = types.CodeActionClientCapabilities(disabled_support=True)
    return c


K = types.ResourceOperationKind


@pytest_lsp.fixture(config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    await initialize(lsp_client, ws, caps=caps(K.Create, K.Delete, K.Rename))
    yield
    await lsp_client.shutdown_session()


async def actions(client: LanguageClient, path: Path, line: int, col: int):
    p = types.Position(line=line, character=col)
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)),
            range=types.Range(start=p, end=p),
            context=types.CodeActionContext(
                diagnostics=[], trigger_kind=types.CodeActionTriggerKind.Invoked
            ),
        )
    )


def one(acts, kind: str) -> types.CodeAction:
    found = [a for a in acts or [] if isinstance(a, types.CodeAction) and a.kind == kind]
    assert len(found) == 1, acts
    return found[0]


def told(client: LanguageClient, edit: types.WorkspaceEdit) -> None:
    """The file events a client with file watchers sends once it applied an edit."""
    T = types.FileChangeType
    events = []
    for c in edit.document_changes or []:
        if isinstance(c, types.CreateFile):
            events.append(types.FileEvent(uri=c.uri, type=T.Created))
        elif isinstance(c, types.DeleteFile):
            events.append(types.FileEvent(uri=c.uri, type=T.Deleted))
        elif isinstance(c, types.TextDocumentEdit):
            events.append(types.FileEvent(uri=c.text_document.uri, type=T.Changed))
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=events))


def snapshot(ws: Path) -> dict[str, bytes]:
    return {str(p.relative_to(ws)): p.read_bytes() for p in sorted(ws.rglob("*.md"))}


async def test_extract_then_inline_gives_back_the_folder(client: LanguageClient):
    ws = WS["ws"]
    before = snapshot(ws)
    db = ws / "runbooks" / "db.md"
    act = one(await actions(client, db, 4, 5), "refactor.extract")
    assert act.title == "Extract section to runbooks/replica-promotion.md" and act.edit
    rc.apply_workspace_edit(act.edit)
    told(client, act.edit)
    new = ws / "runbooks" / "replica-promotion.md"
    assert new.read_text() == (
        "# Replica promotion\n\nPromote the replica. Back to [the intro](db.md#database),"
        " on to [lag](db.md#lag).\nSee [the drill](../drills/drill.md).\n\n## Checks\n\n"
        "Check the lag first.\n"
    )
    assert db.read_text().split("\n")[4] == "## [Replica promotion](replica-promotion.md)"
    assert (ws / "drills" / "drill.md").read_text() == (
        "# Drill\n\nFollow [the steps](../runbooks/replica-promotion.md#replica-promotion), then\n"
        "[checks](../runbooks/replica-promotion.md#checks). Also [the whole runbook](../runbooks/db.md).\n"
    )
    act = one(await actions(client, db, 4, 6), "refactor.inline")
    assert act.title == "Inline runbooks/replica-promotion.md here" and act.edit
    rc.apply_workspace_edit(act.edit)
    told(client, act.edit)
    assert snapshot(ws) == before


async def test_extract_refuses_a_file_that_exists(client: LanguageClient):
    ws = WS["ws"]
    (ws / "runbooks" / "lag.md").write_text("# Mine\n")
    act = one(await actions(client, ws / "runbooks" / "db.md", 13, 3), "refactor.extract")
    assert act.edit is None and act.disabled is not None
    assert act.disabled.reason == "runbooks/lag.md already exists: mdseek does not overwrite it"


async def test_extract_refuses_a_target_that_leads_outside_the_folder(client: LanguageClient):
    # a link left at the target's name, to a file outside: writing through it
    # would make a file out of the folder
    ws = WS["ws"]
    outside = ws.parent / "outside"
    outside.mkdir()
    (ws / "runbooks" / "replica-promotion.md").symlink_to(outside / "stolen.md")
    act = one(await actions(client, ws / "runbooks" / "db.md", 4, 5), "refactor.extract")
    assert act.edit is None and act.disabled is not None
    real = (outside / "stolen.md").resolve()
    assert act.disabled.reason == (
        f"runbooks/replica-promotion.md is outside the workspace folders (it resolves to {real})"
    )
    assert not real.exists() and list(outside.iterdir()) == []


@pytest_lsp.fixture(config=config())
async def renamer(lsp_client: LanguageClient, ws: Path):
    await initialize(lsp_client, ws, caps=caps(K.Rename))
    yield
    await lsp_client.shutdown_session()


async def test_a_client_that_cannot_create_files_is_told(renamer: LanguageClient):
    act = one(await actions(renamer, WS["ws"] / "runbooks" / "db.md", 4, 5), "refactor.extract")
    assert act.edit is None and act.disabled is not None
    assert act.disabled.reason == (
        "this editor cannot create files through an edit (no resource operations)"
    )
