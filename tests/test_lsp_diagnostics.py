"""Broken links are reported for every indexed file, opened or not: pushed to
clients that do not pull, pulled (workspace/diagnostic) by clients that do;
a quick fix points a broken anchor at the nearest heading; the outline can be
switched off (VS Code has its own)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import (
    config,
    initialize,
    open_doc,
    pull_capabilities,
    uri,
    wait_ready,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

TARGET = "# Target\n\n## Promote the replica\n\nText.\n\n## Rebuild the old primary\n\nMore.\n"
NEVER_OPENED = (
    "# Notes\n\nSee [promote](target.md#promote-the-replca) and [gone](missing.md).\n\n"
    "Fine: [ok](target.md#rebuild-the-old-primary).\n\n"
    "Reference: [ref][r].\n\n[r]: target.md#rebuild-old-primary\n"
)
CLEAN = "# Clean\n\nAll good: [t](target.md#promote-the-replica).\n"


def make_ws(base: Path) -> Path:
    ws = base / "ws"
    ws.mkdir()
    (ws / "target.md").write_text(TARGET)
    (ws / "notes.md").write_text(NEVER_OPENED)
    (ws / "clean.md").write_text(CLEAN)
    return ws


async def wait_for(pred, timeout: float = 30.0, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


# -- push: a client that does not pull (Neovim, eglot, Helix) -----------------------


@pytest.fixture(scope="module")
def push_ws(tmp_path_factory) -> Path:
    return make_ws(tmp_path_factory.mktemp("push"))


@pytest_lsp.fixture(scope="module", config=config())
async def push_client(lsp_client: LanguageClient, push_ws: Path):
    await initialize(lsp_client, push_ws, options={"documentSymbols": False})
    yield
    await lsp_client.shutdown_session()


async def test_never_opened_file_gets_pushed_diagnostics(
    push_client: LanguageClient, push_ws: Path
):
    await wait_ready(push_client)
    notes = uri(push_ws / "notes.md")
    diags = await wait_for(
        lambda: push_client.diagnostics.get(notes), what="diagnostics of notes.md"
    )
    lines = {d.range.start.line: d.message for d in diags}
    assert set(lines) == {2, 6}, lines  # the two broken links; the reference link at its use
    assert "promote-the-replca" in lines[2] or "missing.md" in lines[2]
    assert (
        uri(push_ws / "clean.md") not in push_client.diagnostics
    )  # nothing to clear, nothing sent
    n_before = len(push_client.diagnostics)
    # fixed on disk, outside the editor: the warning goes away
    (push_ws / "notes.md").write_text(
        NEVER_OPENED.replace("promote-the-replca", "promote-the-replica")
        .replace(" and [gone](missing.md)", "")
        .replace("rebuild-old-primary", "rebuild-the-old-primary")
    )
    push_client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=notes, type=types.FileChangeType.Changed)]
        )
    )
    await wait_for(
        lambda: len(push_client.diagnostics.get(notes, [1])) == 0, what="cleared diagnostics"
    )
    assert len(push_client.diagnostics) == n_before


async def test_quick_fix_points_a_broken_anchor_at_the_nearest_heading(
    push_client: LanguageClient, push_ws: Path
):
    await wait_ready(push_client)
    path = push_ws / "fix.md"
    text = "# Fix\n\nGo [there](target.md#promote-replica) now.\n\n[r2]: target.md#rebuld-the-old-primary\n\nUse [it][r2].\n"
    path.write_text(text)
    u = open_doc(push_client, path, text)
    diags = await wait_for(lambda: push_client.diagnostics.get(u), what="diagnostics of fix.md")
    assert len(diags) == 2
    lines = text.split("\n")
    for d, want_line, new in (
        (diags[0], 2, "promote-the-replica"),
        (diags[1], 4, "rebuild-the-old-primary"),
    ):
        actions = await push_client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=u),
                range=d.range,
                context=types.CodeActionContext(diagnostics=[d]),
            )
        )
        assert actions, d
        best = actions[0]
        assert best.is_preferred and best.kind == types.CodeActionKind.QuickFix
        (edit,) = best.edit.changes[u]
        assert edit.new_text == new
        assert edit.range.start.line == want_line  # the reference definition, for [it][r2]
        line = lines[want_line]
        fixed = (
            line[: edit.range.start.character] + edit.new_text + line[edit.range.end.character :]
        )
        assert f"target.md#{new}" in fixed, fixed


async def test_outline_can_be_switched_off(push_client: LanguageClient, push_ws: Path):
    u = open_doc(push_client, push_ws / "target.md")
    res = await push_client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=u))
    )
    assert res == []


# -- pull: a client that pulls (VS Code) ----------------------------------------------


@pytest.fixture(scope="module")
def pull_ws(tmp_path_factory) -> Path:
    return make_ws(tmp_path_factory.mktemp("pull"))


@pytest_lsp.fixture(scope="module", config=config())
async def pull_client(lsp_client: LanguageClient, pull_ws: Path):
    await initialize(lsp_client, pull_ws, caps=pull_capabilities())
    yield
    await lsp_client.shutdown_session()


async def test_workspace_pull_reports_every_indexed_file(
    pull_client: LanguageClient, pull_ws: Path
):
    await wait_ready(pull_client)
    report = await pull_client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    by_uri = {i.uri: i for i in report.items}
    notes, clean = uri(pull_ws / "notes.md"), uri(pull_ws / "clean.md")
    assert {i.range.start.line for i in by_uri[notes].items} == {2, 6}
    assert len(by_uri[clean].items) == 0
    # an open document is pulled on its own, and nothing is pushed for it
    u = open_doc(pull_client, pull_ws / "notes.md")
    doc = await pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=u))
    )
    assert len(doc.items) == 3
    again = await pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=u), previous_result_id=doc.result_id
        )
    )
    assert again.kind == "unchanged"
    # a change on disk: the next workspace pull answers; unchanged files say so
    previous = [
        types.PreviousResultId(uri=i.uri, value=i.result_id) for i in report.items if i.result_id
    ]
    # (the open above counts as a change: this pull answers at once, all unchanged)
    settled = await pull_client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=previous)
    )
    assert {i.kind for i in settled.items} == {"unchanged"}
    pending = asyncio.ensure_future(
        pull_client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=previous)
        )
    )
    await asyncio.sleep(0.5)
    assert not pending.done()  # nothing changed yet: the pull waits (long poll)
    (pull_ws / "clean.md").write_text(CLEAN.replace("promote-the-replica", "no-such-heading"))
    pull_client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=clean, type=types.FileChangeType.Changed)]
        )
    )
    report2 = await asyncio.wait_for(pending, 20)
    by_uri2 = {i.uri: i for i in report2.items}
    assert by_uri2[clean].kind == "full" and len(by_uri2[clean].items) == 1
    assert by_uri2[notes].kind == "unchanged"
    assert not pull_client.diagnostics.get(notes)  # pulled, never pushed


def test_nearest_heading_of_a_broken_anchor():
    from mdseek.index.text.parse import parse_text
    from mdseek.lsp.server.quick_fixes import nearest_headings

    doc = parse_text(
        "# Guide\n\n## Renaming things\n\n## Rollback — step 1: stop the deploy\n\n## Testing a migration\n\n"
        "## Café budget\n"
    )
    assert nearest_headings(doc, "rolling-back-everything", False)[0] == (
        "rollback--step-1-stop-the-deploy",
        "Rollback — step 1: stop the deploy",  # named by its text
    )
    assert nearest_headings(doc, "testing-migrations", False)[0][0] == "testing-a-migration"
    assert nearest_headings(doc, "cafe-budget", False)[0] == ("café-budget", "Café budget")
    assert nearest_headings(doc, "Renaming thing", True)[0][0] == "Renaming things"  # wiki: text
    # ranked by likeness, and nothing unlike the broken anchor is offered
    assert [t for _, t in nearest_headings(doc, "testing-migration-plan", False)] == [
        "Testing a migration"
    ]
    assert nearest_headings(doc, "kubernetes-autoscaling", False) == []
