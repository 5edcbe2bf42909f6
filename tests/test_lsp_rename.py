"""Rename over stdio (pytest-lsp): a heading, a heading or file from a link, and
files and folders moved in the editor (workspace/willRenameFiles). Each test
applies the returned WorkspaceEdit to a copy of the hand-made fixture
(tests/rename_ws: every link form, several folders, a name with a space,
non-ASCII lines), then checks with the tests' own resolver (rename_check.py)
that every link reaches the same heading or file as before and that nothing
but link targets and the renamed heading changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_lsp
import rename_check as rc
from lsp_support import config, initialize, open_doc, rename_capabilities, uri
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

FIXTURE = Path(__file__).resolve().parent / "rename_ws"
SETUP = "guide/setup.md"
LOG = "notes/daily log.md"
WS: dict = {}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    dest = tmp_path / "ws"
    shutil.copytree(FIXTURE, dest)
    WS["ws"] = dest
    return dest


@pytest_lsp.fixture(config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    WS["init"] = await initialize(lsp_client, ws, caps=rename_capabilities())
    yield
    await lsp_client.shutdown_session()


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


async def prepare(client: LanguageClient, path: Path, line: int, col: int):
    return await client.text_document_prepare_rename_async(
        types.PrepareRenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)), position=pos(line, col)
        )
    )


async def rename(client: LanguageClient, path: Path, line: int, col: int, name: str):
    return await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri(path)),
            position=pos(line, col),
            new_name=name,
        )
    )


def snapshot(ws: Path) -> dict[str, str]:
    return {f: (ws / f).read_text() for f in rc.files_of(ws) if f.endswith(".md")}


def assert_only_targets_changed(
    before: dict[str, str], after: dict[str, str], heading: tuple[str, int] | None = None
) -> None:
    assert before.keys() == after.keys()
    for f in before:
        hl = heading[1] if heading and heading[0] == f else None
        assert rc.masked(after[f], hl) == rc.masked(before[f], hl), f


async def test_rename_a_heading_keeps_every_link(client: LanguageClient):
    ws = WS["ws"]
    before, links = snapshot(ws), rc.all_links(ws)
    open_doc(client, ws / LOG, version=7)  # an open buffer: its edit carries version 7
    prep = await prepare(client, ws / SETUP, 4, 5)
    assert isinstance(prep, types.PrepareRenamePlaceholder)
    assert prep.placeholder == "Install"
    assert prep.range == types.Range(start=pos(4, 3), end=pos(4, 10))
    edit = await rename(client, ws / SETUP, 4, 5, "Installation")
    versions = rc.apply_workspace_edit(edit)
    assert versions[(ws / LOG).resolve()] == 7
    assert versions[(ws / SETUP).resolve()] is None  # not open: read from disk
    after = snapshot(ws)
    assert (ws / SETUP).read_text().split("\n")[4] == "## Installation"
    log = after[LOG].split("\n")
    # by hand: the first Install is renamed, the two later ones move up a number
    assert log[2] == (
        'See [install](../guide/setup.md#installation "Install steps")'
        " and [second](../guide/setup.md#install)."
    )
    assert log[3] == (
        "Angle brackets: [spaces](<../guide/setup.md#installation>)"
        " and [third](../guide/setup.md#install-1)."
    )
    assert log[4] == (
        "Wiki: [[setup#Installation]] and [[setup#Installation|the install step]] and [[setup]]."
    )
    assert log[7] == "[guide]: ../guide/setup.md#installation"
    assert log[-2] == (
        "😀 emoji first: [ü](../guide/setup.md#installation)"
        " and [café](../guide/setup.md#ünïcødé-café)."
    )
    assert "- [Extensionless](guide/setup#install)" in after["index.md"]
    assert rc.all_links(ws) == links  # every link reaches the same heading as before
    assert_only_targets_changed(before, after, (SETUP, 4))


async def test_rename_the_second_of_two_duplicates_moves_only_its_links(client: LanguageClient):
    ws = WS["ws"]
    before, links = snapshot(ws), rc.all_links(ws)
    rc.apply_workspace_edit(await rename(client, ws / SETUP, 14, 4, "Reinstall"))
    log = (ws / LOG).read_text().split("\n")
    assert log[2] == (
        'See [install](../guide/setup.md#install "Install steps")'
        " and [second](../guide/setup.md#reinstall)."
    )
    assert log[3].endswith("[third](../guide/setup.md#install-1).")
    assert log[4] == "Wiki: [[setup#Install]] and [[setup#Install|the install step]] and [[setup]]."
    assert rc.all_links(ws) == links
    assert_only_targets_changed(before, snapshot(ws), (SETUP, 14))


async def test_rename_from_a_link_renames_its_heading(client: LanguageClient):
    ws = WS["ws"]
    before, links = snapshot(ws), rc.all_links(ws)
    line = (ws / LOG).read_text().split("\n")[-2]
    col = line.index("#install") + 3  # inside the fragment, after a non-BMP emoji
    u16 = len(line[:col].encode("utf-16-le")) // 2
    prep = await prepare(client, ws / LOG, 19, u16)
    assert isinstance(prep, types.PrepareRenamePlaceholder) and prep.placeholder == "Install"
    start = len(line[: line.index("#install") + 1].encode("utf-16-le")) // 2
    assert prep.range == types.Range(start=pos(19, start), end=pos(19, start + len("install")))
    wiki = await prepare(client, ws / LOG, 4, 16)  # [[setup#Install]]
    assert wiki.range == types.Range(start=pos(4, 14), end=pos(4, 21))
    rc.apply_workspace_edit(await rename(client, ws / LOG, 4, 16, "Getting started"))
    assert (ws / SETUP).read_text().split("\n")[4] == "## Getting started"
    assert "[[setup#Getting started]]" in (ws / LOG).read_text()
    assert rc.all_links(ws) == links
    assert_only_targets_changed(before, snapshot(ws), (SETUP, 4))


async def test_bad_renames_are_refused_or_null(client: LanguageClient):
    ws = WS["ws"]
    before = snapshot(ws)
    assert await prepare(client, ws / SETUP, 6, 3) is None  # a paragraph
    assert await prepare(client, ws / LOG, 9, 8) is None  # a link inside a code span
    assert await prepare(client, ws / LOG, 12, 3) is None  # a link inside a fence
    for name, says in (
        ("Options", "already has the anchor #options"),
        ("   ", "empty"),
        ("!!!", "no anchor"),
    ):
        with pytest.raises(Exception, match=says):
            await rename(client, ws / SETUP, 8, 4, name)
    assert snapshot(ws) == before


async def test_a_file_that_cannot_be_decoded_is_left_alone(client: LanguageClient):
    ws = WS["ws"]
    bad = ws / "notes/latin1.md"
    data = b"# Latin\n\n[x](../guide/setup.md#install) caf\xe9\n"
    bad.write_bytes(data)
    edit = await rename(client, ws / SETUP, 4, 5, "Installation")
    touched = {rc.uri_path(c.text_document.uri) for c in edit.document_changes}
    assert bad.resolve() not in touched and (ws / LOG).resolve() in touched
    assert bad.read_bytes() == data
    # its own heading: refused in one line (an edit would be saved as UTF-8)
    with pytest.raises(Exception, match=r"latin1\.md is not valid UTF-8: mdseek does not edit"):
        await rename(client, bad, 0, 3, "Other")


def mapped(links: dict, move) -> dict:
    return {(move(f), ln, n): (move(t), h) for (f, ln, n), (t, h) in links.items()}


async def will_rename(client: LanguageClient, old: Path, new: Path) -> types.WorkspaceEdit:
    return await client.workspace_will_rename_files_async(
        types.RenameFilesParams(files=[types.FileRename(old_uri=uri(old), new_uri=uri(new))])
    )


async def test_moving_a_file_keeps_links_to_it_and_from_it(client: LanguageClient):
    ws = WS["ws"]
    fo = WS["init"].capabilities.workspace.file_operations
    globs = {f.pattern.glob for f in fo.will_rename.filters}
    assert "**/*.{md,markdown}" in globs
    before, links = snapshot(ws), rc.all_links(ws)
    new = ws / "manuals/setup-guide.md"  # another folder and another stem
    edit = await will_rename(client, ws / SETUP, new)
    rc.apply_workspace_edit(edit)  # addressed to the file where it is now
    new.parent.mkdir()
    (ws / SETUP).rename(new)  # then the editor moves it
    moved = (ws / "manuals/setup-guide.md").read_text()
    assert "![diagram](../guide/diagram.txt)" in moved  # its own relative link follows
    assert (
        "[[setup-guide#Install]] and [[setup-guide#Install|the install step]] and [[setup-guide]]"
        in (ws / LOG).read_text()
    )

    def move(f: str) -> str:
        return "manuals/setup-guide.md" if f == SETUP else f

    assert rc.all_links(ws) == mapped(links, move)
    after = snapshot(ws)
    after[SETUP] = after.pop("manuals/setup-guide.md")
    assert_only_targets_changed(before, after)


async def test_moving_a_folder_keeps_links(client: LanguageClient):
    ws = WS["ws"]
    before, links = snapshot(ws), rc.all_links(ws)
    new = ws / "docs/guide-v2"
    rc.apply_workspace_edit(await will_rename(client, ws / "guide", new))
    new.parent.mkdir()
    (ws / "guide").rename(new)
    index = (ws / "index.md").read_text()
    assert "[Configure](docs/guide-v2/setup.md#configure)" in index
    assert "[Diagram](docs/guide-v2/diagram.txt)" in index
    assert "[Extensionless](docs/guide-v2/setup#install-1)" in index
    assert "[root-relative](/docs/guide-v2/setup.md#options)" in (ws / "deep/a/b/c.md").read_text()

    def move(f: str) -> str:
        return "docs/guide-v2/" + f[len("guide/") :] if f.startswith("guide/") else f

    assert rc.all_links(ws) == mapped(links, move)
    after = snapshot(ws)
    after[SETUP] = after.pop("docs/guide-v2/setup.md")
    assert_only_targets_changed(before, after)


async def test_rename_on_a_file_link_moves_the_file(client: LanguageClient):
    ws = WS["ws"]
    before, links = snapshot(ws), rc.all_links(ws)
    line = (ws / "index.md").read_text().split("\n")[2]  # - [Configure](guide/setup.md#configure)
    col = line.index("setup.md")
    prep = await prepare(client, ws / "index.md", 2, col)
    assert prep.placeholder == "guide/setup.md"
    edit = await rename(client, ws / "index.md", 2, col, "guide/install guide.md")
    assert isinstance(edit.document_changes[-1], types.RenameFile)
    rc.apply_workspace_edit(edit)
    assert not (ws / SETUP).exists() and (ws / "guide/install guide.md").is_file()
    assert "[Configure](guide/install%20guide.md#configure)" in (ws / "index.md").read_text()

    def move(f: str) -> str:
        return "guide/install guide.md" if f == SETUP else f

    assert rc.all_links(ws) == mapped(links, move)
    after = snapshot(ws)
    after[SETUP] = after.pop("guide/install guide.md")
    assert_only_targets_changed(before, after)
