"""Folding ranges, document links and selection ranges over stdio (pytest-lsp),
against a hand-made workspace with hand-written expected ranges: sections,
front matter, lists (nested), fences holding ``#`` and ``-``, quotes, region
markers; inline, reference and wiki links across folders, a name with a space,
an image, a web link, broken and outside links; a non-ASCII line (UTF-16
columns)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import capabilities, config, initialize, open_doc, plain, uri
from lsprotocol import types
from pytest_lsp import LanguageClient
from waiting import until

pytestmark = pytest.mark.slow

GUIDE = """\
---
title: Guide
tags: [ops]
---
# Guide

Intro with a [web link](https://example.com/x) and `code span`.

## Install

- first item
  continues here
- second item
  - nested one
    still nested

```sh
# not a heading
- not a list
```

### Détails ünïcode

Émoji 😀 then [the target](<../other file.md#second-part>) here.

> quoted
> lines

## Links

See [[other file#Second part]] and [ref][r] and [pic](img.png).
Broken [gone](missing.md) and [out](../../outside.md) and [x](command:foo).

[r]: <../other file.md>

<!-- #region extra -->

Region text.

<!-- #endregion -->
"""
OTHER = "# Other\n\n## First part\n\nx\n\n## Second part\n\ny\n"
DUPS = """\
# Dups

Intro.

## Setup

### Notes

## Usage

### Notes

See [[New note#Plan]] and [gone](sub/gone.md).
"""
DUPS_WITH_TOC = """\
# Dups

<!-- toc -->
- [Setup](#setup)
  - [Notes](#notes)
- [Usage](#usage)
  - [Notes](#notes-1)
<!-- tocstop -->

Intro.

## Setup

### Notes

## Usage

### Notes

See [[New note#Plan]] and [gone](sub/gone.md).
"""
STALE = """\
# Stale

- [Old name](#old-name)
- [Second](#second)

## New name

## Second
"""
WS: dict = {}


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, tmp_path_factory):
    base = tmp_path_factory.mktemp("structure")
    (base / "outside.md").write_text("# Outside\n")  # exists, but not in the workspace
    ws = base / "ws"
    (ws / "notes").mkdir(parents=True)
    (ws / "notes" / "guide.md").write_text(GUIDE)
    (ws / "other file.md").write_text(OTHER)
    (ws / "notes" / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (ws / "dups.md").write_text(DUPS)
    (ws / "stale.md").write_text(STALE)
    (ws / "current.md").write_text(DUPS_WITH_TOC)
    WS["ws"] = ws
    caps = capabilities()
    assert caps.text_document is not None
    caps.text_document.document_link = types.DocumentLinkClientCapabilities(tooltip_support=True)
    assert caps.workspace is not None
    caps.workspace.workspace_edit = types.WorkspaceEditClientCapabilities(
        document_changes=True, resource_operations=[types.ResourceOperationKind.Create]
    )
    await initialize(lsp_client, ws, caps=caps)
    WS["guide"] = open_doc(lsp_client, ws / "notes" / "guide.md")
    yield
    await lsp_client.shutdown_session()


def doc() -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=WS["guide"])


def rng(a: int, b: int, c: int, d: int) -> types.Range:
    return types.Range(
        start=types.Position(line=a, character=b), end=types.Position(line=c, character=d)
    )


async def test_folding_ranges(client: LanguageClient) -> None:
    res = await client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=doc())
    )
    got = [(r.start_line, r.end_line, r.kind) for r in res]
    region = types.FoldingRangeKind.Region
    assert got == [
        (0, 3, None),  # front matter
        (4, 39, None),  # # Guide: to the end
        (8, 26, None),  # ## Install holds ### Détails, ends before ## Links
        (10, 14, None),  # the list
        (10, 11, None),  # first item
        (12, 14, None),  # second item with its nested list
        (13, 14, None),  # the nested list (and its one item)
        (16, 19, None),  # the fence: its "#" and "-" start nothing
        (21, 26, None),  # ### Détails
        (25, 26, None),  # the quote
        (28, 39, None),  # ## Links
        (35, 39, region),
    ]


async def test_document_links(client: LanguageClient) -> None:
    ws: Path = WS["ws"]
    other = uri(ws / "other file.md")
    res = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=doc())
    )
    got = [(r.range, r.target) for r in res]
    assert got == [
        (rng(6, 13, 6, 46), "https://example.com/x"),
        (rng(23, 14, 23, 58), f"{other}#L7"),  # 😀 is two UTF-16 units
        (rng(30, 4, 30, 30), f"{other}#L7"),  # wiki link by name, heading by text
        (rng(30, 35, 30, 43), other),  # reference-style, no anchor: the file
        (rng(30, 48, 30, 62), uri(ws / "notes" / "img.png")),
        (rng(33, 5, 33, 23), other),  # the definition [r]: <../other file.md> itself
    ]  # missing.md, the file outside the workspace and command: get nothing
    assert "Second part" in (res[1].tooltip or "")


async def test_selection_ranges(client: LanguageClient) -> None:
    res = await client.text_document_selection_range_async(
        types.SelectionRangeParams(
            text_document=doc(),
            positions=[
                types.Position(line=23, character=21),  # in "target" of the link text
                types.Position(line=13, character=6),  # in "nested"
            ],
        )
    )

    def chain(sel: types.SelectionRange | None) -> list[types.Range]:
        out = []
        while sel is not None:
            out.append(sel.range)
            sel = sel.parent
        return out

    guide, document = rng(4, 0, 39, 19), rng(0, 0, 39, 19)
    install = rng(8, 0, 26, 7)
    under = [rng(9, 0, 26, 7), install, rng(5, 0, 39, 19), guide, document]  # content, section
    assert chain(res[0]) == [
        rng(23, 15, 23, 25),  # the link's text (no word: the editor's own)
        rng(23, 14, 23, 58),  # the link
        rng(23, 0, 23, 64),  # the paragraph
        rng(22, 0, 26, 7),  # ### Détails's content
        rng(21, 0, 26, 7),  # ### Détails
        *under,
    ]
    assert chain(res[1]) == [
        rng(13, 0, 14, 16),  # the nested item's paragraph (= the item, = the nested list)
        rng(12, 0, 14, 16),  # the second item
        rng(10, 0, 14, 16),  # the list
        rng(9, 0, 19, 3),  # ## Install's text before its subsection
        *under,
    ]


async def test_code_lens_counts_references(client: LanguageClient) -> None:
    """codeLens "nonzero" (the default): lenses on the headings a link reaches only,
    counted and sent with their command; "all": every heading, counted on resolve
    (0 references too); "off": none."""
    ws: Path = WS["ws"]
    other = uri(ws / "other file.md")
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=other))
    lenses = await client.text_document_code_lens_async(params)
    assert [ln.range for ln in lenses] == [rng(0, 0, 0, 7), rng(6, 0, 6, 14)]  # not ## First part
    cmds = [ln.command for ln in lenses]
    assert [c.title for c in cmds if c] == ["1 reference", "2 references"]
    first, second = cmds
    assert first is not None and second is not None
    assert first.command == "mdseek.showReferences"
    guide = WS["guide"]
    assert plain(first.arguments) == [
        other,
        {"line": 0, "character": 0},
        [{"uri": guide, "range": _json(30, 35, 30, 43)}],  # [ref][r]: the file, so the title
    ]
    assert second.arguments is not None
    assert sorted(
        (loc["range"]["start"]["line"], loc["range"]["start"]["character"])
        for loc in plain(second.arguments)[2]
    ) == [(23, 14), (30, 4)]
    assert [(await client.code_lens_resolve_async(ln)).command for ln in lenses] == cmds

    async def lenses_with(mode: str) -> list[types.CodeLens]:
        client.set_configuration({"codeLens": mode}, section="mdseek")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
        want = {"all": 3, "off": 0, "nonzero": 2}[mode]
        return await until(
            lambda: client.text_document_code_lens_async(params),
            lambda found: len(found or []) == want,
            timeout=10,
            what=f"codeLens {mode} applied",
        )

    try:
        every = await lenses_with("all")
        assert all(ln.command is None for ln in every)  # counted when the editor shows them
        resolved = [await client.code_lens_resolve_async(ln) for ln in every]
        titles = [ln.command.title for ln in resolved if ln.command]
        assert titles == ["1 reference", "0 references", "2 references"]
        assert not await lenses_with("off")
    finally:
        await lenses_with("nonzero")


def _json(a: int, b: int, c: int, d: int) -> dict:
    return {"start": {"line": a, "character": b}, "end": {"line": c, "character": d}}


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Single-line-start edits on ASCII text (what the table of contents returns)."""
    lines = text.split("\n")

    def offset(p: types.Position) -> int:
        return sum(len(t) + 1 for t in lines[: p.line]) + p.character

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


async def actions(client: LanguageClient, u: str, diags: list | None = None) -> list:
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=u),
            range=rng(0, 0, 0, 0),
            context=types.CodeActionContext(diagnostics=diags or []),
        )
    )


async def test_table_of_contents_inserted_then_current(client: LanguageClient) -> None:
    ws: Path = WS["ws"]
    u = uri(ws / "dups.md")
    toc = [a for a in await actions(client, u) if a.kind == "source.toc"]
    assert [a.title for a in toc] == ["Insert table of contents"]
    assert apply(DUPS, toc[0].edit.changes[u]) == DUPS_WITH_TOC
    current = await actions(client, uri(ws / "current.md"))
    assert [a for a in current if a.kind == "source.toc"] == []


async def test_table_of_contents_updates_a_list_of_anchor_links(client: LanguageClient) -> None:
    u = uri(WS["ws"] / "stale.md")
    toc = [a for a in await actions(client, u) if a.kind == "source.toc"]
    assert [a.title for a in toc] == ["Update table of contents"]
    assert apply(STALE, toc[0].edit.changes[u]) == (
        "# Stale\n\n- [New name](#new-name)\n- [Second](#second)\n\n## New name\n\n## Second\n"
    )


async def test_duplicate_heading_warning_and_create_missing_note(client: LanguageClient) -> None:
    ws: Path = WS["ws"]
    u = open_doc(client, ws / "dups.md")
    deadline = asyncio.get_running_loop().time() + 30
    while u not in client.diagnostics and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    diags = client.diagnostics[u]
    got = sorted((d.range.start.line, d.range.start.character, d.code) for d in diags)
    assert got == [(10, 0, "duplicate-heading"), (12, 4, "broken-link"), (12, 26, "broken-link")]
    dup = next(d for d in diags if d.code == "duplicate-heading")
    assert dup.range == rng(10, 0, 10, 9)
    assert "#notes-1" in dup.message and "line 7" in dup.message
    assert dup.related_information and dup.related_information[0].location.range == rng(6, 0, 6, 9)

    broken = [d for d in diags if d.code == "broken-link"]
    fixes = [a for a in await actions(client, u, broken) if a.title.startswith("Create ")]
    assert [a.title for a in fixes] == ["Create New note.md", "Create sub/gone.md"]
    wiki, md = (a.edit.document_changes for a in fixes)
    assert isinstance(wiki[0], types.CreateFile) and wiki[0].uri == uri(ws / "New note.md")
    assert wiki[1].edits[0].new_text == "# New note\n\n## Plan\n"
    assert md[0].uri == uri(ws / "sub" / "gone.md")
    assert md[1].edits[0].new_text == "# gone\n"


def test_table_of_contents_between_marksmans_markers_is_updated_in_place() -> None:
    """A table marksman wrote (<!--toc:start--> ... <!--toc:end-->) is updated
    between its markers, not inserted a second time."""
    from mdseek.index.text.parse import parse_text
    from mdseek.lsp.server.convert import Positions
    from mdseek.lsp.server.toc import code_actions

    text = "# T\n\n<!--toc:start-->\n<!--toc:end-->\n\n## A\n\n## B\n"
    (action,) = code_actions(parse_text(text), "file:///t.md", Positions())
    assert action.title == "Update table of contents"
    assert action.edit is not None and action.edit.changes is not None
    assert apply(text, action.edit.changes["file:///t.md"]) == (
        "# T\n\n<!--toc:start-->\n- [A](#a)\n- [B](#b)\n<!--toc:end-->\n\n## A\n\n## B\n"
    )
