"""What every ported peer case shares: one language server per test module
(pytest-lsp over stdio), a fresh workspace folder per case (written to a temp
folder, added with ``workspace/didChangeWorkspaceFolders`` and removed after),
the requests, and the comparisons.

The data (documents, positions, expected results) lives in the ``test_*``
modules, one per peer and feature, copied from the peer's own test at the
commit named there. Expected values are the peer's, translated into LSP terms
by the rules each module states; nothing is computed by mdseek.

A case is a dict:

    name        the peer's test name (plus ``#n`` for its n-th assertion)
    files       {workspace path: text}; a text of None is a file the peer's
                workspace lists without a body (an image, an empty note)
    at          the document the request is made in (default ``doc.md``)
    pos         (line, character) of the request, UTF-16 as in the peer
    convention  set when mdseek follows another convention than the peer here:
                the one-line reason; the case is then xfail(strict=True)
    skip        set when the case cannot run here: the reason
    ...         the feature's own keys (see each ``run_*``)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsp_support import config, plain, rename_capabilities, uri
from lsprotocol import types
from pytest_lsp import LanguageClient
from waiting import until

VSCODE = "microsoft/vscode-markdown-languageservice"
MARKSMAN = "artempyanykh/marksman"

Range = tuple[int, int, int, int]

_serial = itertools.count()


def lines(*rows: str) -> str:
    """The peer's ``joinLines``: rows joined with newlines, no final newline."""
    return "\n".join(rows)


# -- cases as pytest params ------------------------------------------------------------


def params(cases: Sequence[dict]) -> list[Any]:
    """One pytest param per case, marked by its ``convention`` or ``skip``."""
    out = []
    seen: set[str] = set()
    for c in cases:
        assert c["name"] not in seen, f"two cases named {c['name']!r}"
        seen.add(c["name"])
        marks = []
        if c.get("convention"):
            marks.append(pytest.mark.xfail(strict=True, reason=f"convention: {c['convention']}"))
        if c.get("skip"):
            marks.append(pytest.mark.skip(reason=c["skip"]))
        out.append(pytest.param(c, id=c["name"], marks=marks))
    return out


def counts(cases: Iterable[dict]) -> tuple[int, int, int]:
    """(passing, convention, total): skipped cases count as neither passing nor convention."""
    cases = list(cases)
    conv = sum(1 for c in cases if c.get("convention"))
    skip = sum(1 for c in cases if c.get("skip") and not c.get("convention"))
    return len(cases) - conv - skip, conv, len(cases)


# -- one server per module -------------------------------------------------------------


def server_fixture(create_files: bool = False):
    """A module-scoped pytest-lsp client of ``mdseek serve`` with no folder yet:
    each case adds its own (:func:`workspace`). ``create_files``: the client
    applies workspace edits that create files (as VS Code does)."""

    @pytest_lsp.fixture(scope="module", config=config())
    async def client(lsp_client: LanguageClient):
        caps = rename_capabilities()
        assert caps.text_document is not None
        edit = caps.workspace.workspace_edit if caps.workspace else None
        if create_files and edit is not None:
            edit.resource_operations = [
                *(edit.resource_operations or []),
                types.ResourceOperationKind.Create,
            ]
        caps.text_document.diagnostic = types.DiagnosticClientCapabilities()
        caps.text_document.folding_range = types.FoldingRangeClientCapabilities(
            line_folding_only=True
        )
        await lsp_client.initialize_session(
            types.InitializeParams(capabilities=caps, root_uri=None, workspace_folders=[])
        )
        yield
        await lsp_client.shutdown_session()

    return client


class Workspace:
    """A case's folder while it is one of the server's workspace folders."""

    def __init__(self, client: LanguageClient, root: Path, files: dict[str, str | None]):
        self.client, self.root, self.files = client, root, files

    def path(self, rel: str) -> Path:
        return self.root / rel

    def uri(self, rel: str) -> str:
        return uri(self.root / rel)

    def rel(self, u: str) -> str:
        base = uri(self.root).rstrip("/") + "/"
        assert u.startswith(base), f"{u} is not in the case's folder {base}"
        from urllib.parse import unquote

        return unquote(u[len(base) :])

    def text(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    async def __aenter__(self) -> Workspace:
        for rel, text in self.files.items():
            p = self.root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text or "", encoding="utf-8")
        folder = types.WorkspaceFolder(uri=uri(self.root), name=self.root.name)
        self.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[folder], removed=[])
            )
        )
        want = str(self.root.resolve())

        async def roots() -> list[str]:
            st = plain(await self.client.protocol.send_request_async("mdseek/status", {}))
            return [r["path"] for r in st["roots"]]

        await until(roots, lambda rs: want in rs, timeout=30, what=f"folder {want} added")
        return self

    async def opened(self) -> None:
        """Until the folder is indexed (``ready``, or ``lexical-only``): completion
        of link targets ranks sections by meaning, so its answer is the same
        every run only once the folder's vectors are made."""
        want = str(self.root.resolve())

        async def state() -> str:
            st = plain(await self.client.protocol.send_request_async("mdseek/status", {}))
            return next((r["state"] for r in st["roots"] if r["path"] == want), "starting")

        await until(
            state,
            lambda s: s in ("ready", "lexical-only"),
            timeout=120,
            what=f"folder {want} indexed",
        )

    async def __aexit__(self, *exc: object) -> None:
        folder = types.WorkspaceFolder(uri=uri(self.root), name=self.root.name)
        self.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[], removed=[folder])
            )
        )


def workspace(client: LanguageClient, tmp: Path, case: dict) -> Workspace:
    root = tmp / f"case{next(_serial)}"
    root.mkdir(parents=True)
    return Workspace(client, root, case["files"])


def tdi(u: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=u)


def position(p: Sequence[int]) -> types.Position:
    return types.Position(line=p[0], character=p[1])


def as_tuple(r: types.Range) -> Range:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


# -- applying edits (the test's own, on plain text) ---------------------------------------


def _offset(text: str, line: int, character: int) -> int:
    """UTF-16 (line, character) -> index into ``text``."""
    rows = text.split("\n")
    assert line <= len(rows), (line, len(rows))
    base = sum(len(r) + 1 for r in rows[:line])
    row = rows[line] if line < len(rows) else ""
    units = 0
    for i, ch in enumerate(row):
        if units >= character:
            return base + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return base + len(row)


def apply_edits(text: str, edits: Iterable[tuple[Range, str]]) -> str:
    """Text edits (ranges in the original text, none overlapping) applied."""
    spans = []
    for (l0, c0, l1, c1), new in edits:
        spans.append((_offset(text, l0, c0), _offset(text, l1, c1), new))
    spans.sort(key=lambda s: (s[0], s[1]))
    for (_, a1, _), (b0, _, _) in itertools.pairwise(spans):
        assert a1 <= b0, f"overlapping edits {spans}"
    for a, b, new in reversed(spans):
        text = text[:a] + new + text[b:]
    return text


def workspace_edit_result(
    ws: Workspace, edit: types.WorkspaceEdit | None
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """What a client applying ``edit`` would get: the new text of every file it
    edits (by the path the edit names) and the file renames, in order."""
    texts: dict[str, str] = {}
    renames: list[tuple[str, str]] = []
    if edit is None:
        return texts, renames

    def edit_file(u: str, edits: Sequence[Any]) -> None:
        rel = ws.rel(u)
        old = texts.get(rel)
        if old is None:
            old = ws.text(rel)
        pairs = [(as_tuple(e.range), e.new_text) for e in edits]
        texts[rel] = apply_edits(old, pairs)

    for u, edits in (edit.changes or {}).items():
        edit_file(u, edits)
    for ch in edit.document_changes or []:
        if isinstance(ch, types.TextDocumentEdit):
            edit_file(ch.text_document.uri, ch.edits)
        elif isinstance(ch, types.RenameFile):
            renames.append((ws.rel(ch.old_uri), ws.rel(ch.new_uri)))
        else:
            raise AssertionError(f"unexpected change {ch!r}")
    return texts, renames


def expected_texts(ws: Workspace, edits: dict[str, list[tuple[Range, str]]]) -> dict[str, str]:
    """The peer's expected text edits applied to the case's files."""
    return {rel: apply_edits(ws.files[rel] or "", e) for rel, e in edits.items()}


def changed(ws: Workspace, texts: dict[str, str]) -> dict[str, str]:
    """Only the files whose text differs from the case's."""
    return {rel: t for rel, t in texts.items() if t != (ws.files.get(rel) or "")}


# -- the requests ---------------------------------------------------------------------------


async def run_rename(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``new_name`` and ``edits`` {path: [(range, new text)]} (and ``renames``
    [(old path, new path)]) for textDocument/rename, ``only`` a path where the
    peer asserts that file's edits only; or ``prepare``
    ((range, placeholder), or None where the peer's prepareRename rejects)."""
    async with workspace(client, tmp, case) as ws:
        at = tdi(ws.uri(case.get("at", "doc.md")))
        pos = position(case["pos"])
        if "prepare" in case:
            try:
                got = await client.text_document_prepare_rename_async(
                    types.PrepareRenameParams(text_document=at, position=pos)
                )
            except Exception:  # a refusal (an error answer) is what the peer's rejection is
                got = None
            want = case["prepare"]
            if want is None:
                assert got is None
                return
            assert isinstance(got, types.PrepareRenamePlaceholder), got
            assert (as_tuple(got.range), got.placeholder) == (tuple(want[0]), want[1])
            return
        edit = await client.text_document_rename_async(
            types.RenameParams(text_document=at, position=pos, new_name=case["new_name"])
        )
        texts, renames = workspace_edit_result(ws, edit)
        if "only" in case:  # the peer asserts one file's edits
            rel = case["only"]
            want = expected_texts(ws, {rel: case["edits"][rel]})[rel]
            assert texts.get(rel, ws.files[rel]) == want
            return
        assert changed(ws, texts) == expected_texts(ws, case["edits"])
        assert renames == [tuple(r) for r in case.get("renames", [])]


async def run_file_rename(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``moves`` [(old path, new path)] sent as workspace/willRenameFiles
    before the move, ``edits`` {path at the time of the request: [(range, new text)]}."""
    async with workspace(client, tmp, case) as ws:
        files = [types.FileRename(old_uri=ws.uri(a), new_uri=ws.uri(b)) for a, b in case["moves"]]
        edit = await client.workspace_will_rename_files_async(types.RenameFilesParams(files=files))
        texts, renames = workspace_edit_result(ws, edit)
        assert renames == []
        assert changed(ws, texts) == expected_texts(ws, case["edits"])


def _locations(ws: Workspace, found: Any) -> list[tuple[str, Range]]:
    if found is None:
        return []
    if not isinstance(found, (list, tuple)):
        found = [found]
    out = []
    for loc in found:
        if isinstance(loc, types.LocationLink):
            out.append((ws.rel(loc.target_uri), as_tuple(loc.target_selection_range)))
        else:
            out.append((ws.rel(loc.uri), as_tuple(loc.range)))
    return sorted(out)


def _match_locations(got: list[tuple[str, Range]], want: Sequence[Sequence[Any]]) -> None:
    """The peer's (path, line[, start char, end char]) against each location, in
    order (both sorted by path and start): ``None`` chars are not asserted."""
    assert len(got) == len(want), f"{got} != {want}"
    for (path, (l0, c0, l1, c1)), w in zip(got, want, strict=True):
        wp, wl, *chars = w
        start = chars[0] if len(chars) > 0 else None
        end = chars[1] if len(chars) > 1 else None
        assert (path, l0, l1) == (wp, wl, wl), f"{got} != {want}"
        if start is not None:
            assert c0 == start, f"{got} != {want}"
        if end is not None:
            assert c1 == end, f"{got} != {want}"


async def run_references(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``refs`` [(path, line[, start, end])], the declaration included
    unless ``include_declaration`` is False; or ``count`` where the peer asserts
    only how many there are."""
    async with workspace(client, tmp, case) as ws:
        found = await client.text_document_references_async(
            types.ReferenceParams(
                text_document=tdi(ws.uri(case.get("at", "doc.md"))),
                position=position(case["pos"]),
                context=types.ReferenceContext(
                    include_declaration=case.get("include_declaration", True)
                ),
            )
        )
        got = _locations(ws, found)
        if "count" in case:
            assert len(got) == case["count"], got
            return
        _match_locations(got, sorted(case["refs"], key=lambda r: tuple(r)))


async def run_definition(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``defs`` [(path, line[, start, end])] ([] where the peer finds none)."""
    async with workspace(client, tmp, case) as ws:
        found = await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=tdi(ws.uri(case.get("at", "doc.md"))),
                position=position(case["pos"]),
            )
        )
        _match_locations(_locations(ws, found), sorted(case["defs"], key=lambda r: tuple(r)))


def _inside(inner: Range, outer: Range) -> bool:
    return (outer[0], outer[1]) <= (inner[0], inner[1]) and (inner[2], inner[3]) <= (
        outer[2],
        outer[3],
    )


def match_spans(got: Sequence[Range], want: Sequence[Range]) -> None:
    """mdseek marks a whole link (``[text](dest)``, ``[[note]]``) where the VS
    Code peer marks the destination: each expected range must lie inside a
    range mdseek gives, the innermost one holding it (an image's source inside
    a link: the image's) being its own, and each of mdseek's be that of exactly one."""
    own: dict[Range, list] = {tuple(g): [] for g in got}
    for w in want:
        holders = [g for g in got if _inside(tuple(w), g)]
        inner = [h for h in holders if all(_inside(h, o) for o in holders)]
        assert len(inner) == 1, f"{tuple(w)} in {holders} (all: {list(got)})"
        own[inner[0]].append(tuple(w))
    for g, held in own.items():
        assert len(held) == 1, f"{g} holds {held} (expected {list(want)})"


async def run_document_links(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``links`` [range], or [(range, target)] where the peer asserts the
    target: (path, line) for a heading (mdseek's ``#L<n>``), (path,) for a file,
    or a URL; ``exact`` where the peer's ranges are whole links, as mdseek's;
    ``targets_only`` where the peer's assertion is of targets alone (its
    ranges, asserted apart, are another case)."""
    async with workspace(client, tmp, case) as ws:
        found = await client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=tdi(ws.uri(case.get("at", "doc.md"))))
        )
        got = [as_tuple(d.range) for d in found or []]
        want = case["links"]
        spans = [w[0] if len(w) == 2 and isinstance(w[0], (list, tuple)) else w for w in want]
        if case.get("targets_only"):
            pass
        elif case.get("exact"):  # the peer marks the whole link, as mdseek does
            assert sorted(got) == sorted(tuple(s) for s in spans)
        else:
            match_spans(got, spans)
        for w in want:
            if not (len(w) == 2 and isinstance(w[0], (list, tuple))):
                continue
            rng, target = w
            link = next((d for d in found if _inside(tuple(rng), as_tuple(d.range))), None)
            assert link is not None, f"no link holds {rng}"
            if isinstance(target, str):
                assert link.target == target
                continue
            want_uri = ws.uri(target[0])
            if len(target) > 1:
                want_uri += f"#L{target[1] + 1}"
            assert link.target == want_uri, (link.target, want_uri)


async def diagnostics_of(client: LanguageClient, ws: Workspace, rel: str) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=tdi(ws.uri(rel)))
    )
    return list(report.items)


async def run_diagnostics(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``diags`` [range] of the peer (its destination ranges, see
    :func:`match_spans`); or ``lines`` [line] where the peer names only the
    lines (or links) it warns about."""
    async with workspace(client, tmp, case) as ws:
        found = await diagnostics_of(client, ws, case.get("at", "doc.md"))
        got = [as_tuple(d.range) for d in found]
        if "lines" in case:
            assert sorted(g[0] for g in got) == sorted(case["lines"]), [
                (as_tuple(d.range), d.message) for d in found
            ]
            return
        match_spans(got, [tuple(d) for d in case["diags"]])


async def run_folding(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``folds`` [(start line, end line[, kind])], compared as sorted lists."""
    async with workspace(client, tmp, case) as ws:
        found = await client.text_document_folding_range_async(
            types.FoldingRangeParams(text_document=tdi(ws.uri(case.get("at", "doc.md"))))
        )
        got = sorted((f.start_line, f.end_line) for f in found or [])
        want = sorted((f[0], f[1]) for f in case["folds"])
        assert got == want
        kinds = {(f.start_line, f.end_line): f.kind for f in found or []}
        for f in case["folds"]:
            if len(f) > 2:
                assert kinds[(f[0], f[1])] == f[2]


CURSOR = "$$CURSOR$$"


def cursors(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Where the peer's ``$$CURSOR$$`` markers are: (line, UTF-16 character) of
    each. The peer leaves the markers in the document it tests (its
    ``getCursorPositions`` reads them from the text the document holds), so the
    text is returned as it is."""
    out = []
    i = text.find(CURSOR)
    while i >= 0:
        before = text[:i]
        row = before.rsplit("\n", 1)[-1]
        out.append((before.count("\n"), len(row.encode("utf-16-le")) // 2))
        i = text.find(CURSOR, i + len(CURSOR))
    return text, out


async def run_selection(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``text`` with ``$$CURSOR$$`` markers (the peer's), ``chains``: for
    each cursor the peer's lineage, innermost first, as (start line, end line)
    or full ranges; ``positions`` where the peer gives them instead of markers."""
    text, points = cursors(case["text"])
    points = case.get("positions", points)
    case = {**case, "files": {"doc.md": text}}
    async with workspace(client, tmp, case) as ws:
        found = await client.text_document_selection_range_async(
            types.SelectionRangeParams(
                text_document=tdi(ws.uri("doc.md")), positions=[position(p) for p in points]
            )
        )
        got_all = []
        for sel in found or []:
            chain = []
            while sel is not None:
                chain.append(as_tuple(sel.range))
                sel = sel.parent
            got_all.append(chain)
        assert len(got_all) == len(case["chains"])
        for got, want in zip(got_all, case["chains"], strict=True):
            if want and len(want[0]) == 2:
                assert [(r[0], r[2]) for r in got] == [tuple(w) for w in want]
            else:
                assert got == [tuple(w) for w in want]


def _symbols(found: Sequence[Any]) -> list[Any]:
    out = []
    for s in found:
        kids = _symbols(s.children or [])
        out.append((s.name, as_tuple(s.range), as_tuple(s.selection_range), kids))
    return out


def _match_symbols(got: list[Any], want: list[Any]) -> None:
    assert [g[0] for g in got] == [w["name"] for w in want], (got, want)
    for g, w in zip(got, want, strict=True):
        if "range" in w:
            assert g[1] == tuple(w["range"])
        if "selection" in w:
            assert g[2] == tuple(w["selection"])
        _match_symbols(g[3], w.get("children", []))


async def run_symbols(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``symbols``: [{name, range?, selection?, children?}]."""
    async with workspace(client, tmp, case) as ws:
        found = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=tdi(ws.uri(case.get("at", "doc.md"))))
        )
        _match_symbols(_symbols(found or []), case["symbols"])


async def completion_items(
    client: LanguageClient, ws: Workspace, rel: str, pos: Sequence[int]
) -> list[types.CompletionItem]:
    res = await client.text_document_completion_async(
        types.CompletionParams(text_document=tdi(ws.uri(rel)), position=position(pos))
    )
    if res is None:
        return []
    return list(res.items if isinstance(res, types.CompletionList) else res)


def accepted_line(text: str, pos: Sequence[int], item: types.CompletionItem) -> str:
    """The cursor's line after the client accepts ``item`` (its text edit, or its
    insert text / label at the cursor)."""
    te = item.text_edit
    if isinstance(te, types.InsertReplaceEdit):
        rng, new = te.replace, te.new_text
    elif te is not None:
        rng, new = te.range, te.new_text
    else:
        p = types.Position(line=pos[0], character=pos[1])
        rng, new = types.Range(start=p, end=p), item.insert_text or item.label
    out = apply_edits(text, [(as_tuple(rng), new)])
    return out.split("\n")[pos[0]]


async def run_completion(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``accepted``: the cursor's line after accepting each of the peer's
    completions (its edit applied to the document), compared as sorted lists
    (with ``once``, only that no two items leave the same line);
    with ``text`` holding the peer's ``$$CURSOR$$`` instead of ``pos``."""
    if "text" in case:
        text, (pos,) = cursors(case["text"])
        case = {**case, "pos": pos, "files": {**case.get("files", {}), case["at"]: text}}
    async with workspace(client, tmp, case) as ws:
        await ws.opened()
        at = case.get("at", "doc.md")
        items = await completion_items(client, ws, at, case["pos"])
        text = ws.files[at] or ""
        got = sorted(accepted_line(text, case["pos"], it) for it in items)
        if case.get("once"):  # the peer's "no duplicates" alone: no line left twice
            assert len(set(got)) == len(got), got
            return
        assert got == sorted(case["accepted"]), [(it.label, it.text_edit) for it in items]


async def run_slugs(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``lookups`` [(fragment, heading line or None)]: the peer's
    ``lookupByFragment``, asked through a link ``[x](doc.md#fragment)`` written
    in a second document: go to definition lands on the heading's line, and a
    fragment the peer finds nothing for is a broken link (a diagnostic);
    ``slugs`` [anchor]: the peer's ``entries[i].slug``, each offered by anchor
    completion after ``[x](doc.md#``."""
    lookups = case.get("lookups", [])
    links = lines(*(f"[x](doc.md#{frag})" for frag, _ in lookups), "[x](doc.md#")
    case = {**case, "files": {**case["files"], "links.md": links}}
    async with workspace(client, tmp, case) as ws:
        found = await diagnostics_of(client, ws, "links.md")
        broken = sorted(d.range.start.line for d in found)
        assert broken == [n for n, (_, want) in enumerate(lookups) if want is None], [
            (as_tuple(d.range), d.message) for d in found
        ]
        for n, (_, want) in enumerate(lookups):
            if want is None:
                continue
            got = await client.text_document_definition_async(
                types.DefinitionParams(
                    text_document=tdi(ws.uri("links.md")), position=position((n, 1))
                )
            )
            _match_locations(_locations(ws, got), [("doc.md", want)])
        if "slugs" in case:
            last = len(lookups)
            pos = (last, len("[x](doc.md#"))
            items = await completion_items(client, ws, "links.md", pos)
            offered = {accepted_line(links, pos, it) for it in items}
            for slug in case["slugs"]:
                assert f"[x](doc.md#{slug}" in offered, sorted(offered)


async def run_completion_items(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``text`` (the peer's document, ``$$CURSOR$$`` left in), ``at`` and
    ``items``: the peer's (label, new text) of each completion, compared with
    mdseek's as sorted lists (the peer orders by its own sort text)."""
    text, (pos,) = cursors(case["text"])
    at = case.get("at", "new.md")
    case = {**case, "files": {**case.get("files", {}), at: text}}
    async with workspace(client, tmp, case) as ws:
        await ws.opened()
        items = await completion_items(client, ws, at, pos)
        got = []
        for it in items:
            te = it.text_edit
            new = te.new_text if te is not None else (it.insert_text or it.label)
            got.append((it.label, new))
        assert sorted(got) == sorted(tuple(i) for i in case["items"])


def _reached(line: str, source: str) -> str | None:
    """The workspace path the (only) link or definition of ``line`` leads to, read
    by CommonMark (markdown-it, not mdseek): its destination decoded, resolved
    from ``source``'s folder (or the root, for ``/...``), the fragment dropped."""
    import posixpath
    from urllib.parse import unquote

    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    env: dict = {}
    hrefs = [
        str(t.attrs.get("src" if t.type == "image" else "href"))
        for tok in md.parse(line, env)
        for t in tok.children or []
        if t.type in ("link_open", "image")
    ] + [r["href"] for r in env.get("references", {}).values()]
    if len(hrefs) != 1:
        return None
    path = unquote(hrefs[0].partition("#")[0])
    if not path:
        return None
    joined = (
        path.lstrip("/")
        if path.startswith("/")
        else posixpath.join(posixpath.dirname(source), path)
    )
    return posixpath.normpath(joined)


async def run_path_offers(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``text`` (the peer's document, ``$$CURSOR$$`` left in), ``at`` and
    ``reach``: the files the peer's path items lead to (a folder item ``sub/``:
    a file in it). Each must be reached by one of mdseek's items: the line once
    the item is accepted, read by CommonMark, leads there; and no two items leave
    the same line. The marker is taken out of the document (as an editor's
    buffer has none: a ``>`` after it is the one the link needs)."""
    text, (pos,) = cursors(case["text"])
    text = text.replace(CURSOR, "")
    at = case.get("at", "new.md")
    case = {**case, "files": {**case.get("files", {}), at: text}}
    async with workspace(client, tmp, case) as ws:
        await ws.opened()
        items = await completion_items(client, ws, at, pos)
        accepted = [accepted_line(text, pos, it) for it in items]
        assert len(accepted) == len(set(accepted)), sorted(accepted)
        reached = {_reached(a, at) for a in accepted}
        missing = [r for r in case["reach"] if r not in reached]
        assert not missing, (missing, sorted(accepted))


async def run_highlights(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``ranges``: the peer's highlight ranges, compared exactly (sorted)."""
    async with workspace(client, tmp, case) as ws:
        found = await client.text_document_document_highlight_async(
            types.DocumentHighlightParams(
                text_document=tdi(ws.uri(case.get("at", "doc.md"))),
                position=position(case["pos"]),
            )
        )
        got = sorted(as_tuple(h.range) for h in found or [])
        assert got == sorted(tuple(r) for r in case["ranges"])


async def workspace_symbol_names(client: LanguageClient, query: str) -> list[str]:
    """The names of ``workspace/symbol``'s answer to ``query``, but mdseek's
    note row (kind Event: "mdseek: no section matches well …", "mdseek: Nothing
    close in meaning …"), which says how good the answer is and names no symbol."""
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return [s.name for s in found or [] if s.kind != types.SymbolKind.Event]


async def run_workspace_symbols(client: LanguageClient, tmp: Path, case: dict) -> None:
    """Keys: ``query`` and ``names`` (the peer's, compared in the order of their
    places: file, then line), or ``count``; ``then``: a change made before
    asking, ``{path: text}`` (None: the file deleted), told to the server as
    ``workspace/didChangeWatchedFiles``."""
    async with workspace(client, tmp, case) as ws:
        await ws.opened()
        changes = []
        for rel, text in case.get("then", {}).items():
            existed = ws.path(rel).exists()
            if text is None:
                ws.path(rel).unlink()
                kind = types.FileChangeType.Deleted
            else:
                ws.path(rel).write_text(text, encoding="utf-8")
                kind = types.FileChangeType.Changed if existed else types.FileChangeType.Created
            changes.append(types.FileEvent(uri=ws.uri(rel), type=kind))
        if changes:
            client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(changes=changes)
            )
            await ws.opened()
        found = await client.workspace_symbol_async(
            types.WorkspaceSymbolParams(query=case["query"])
        )
        rows = [s for s in found or [] if s.kind != types.SymbolKind.Event]
        if "count" in case:
            assert len(rows) == case["count"], [s.name for s in rows]
            return

        def place(s: Any) -> tuple:
            loc = s.location
            return (ws.rel(loc.uri), loc.range.start.line) if hasattr(loc, "range") else ()

        assert [s.name for s in sorted(rows, key=place)] == case["names"]
