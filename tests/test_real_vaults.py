"""mdseek on two public markdown collections nobody on this project wrote: the
Obsidian help vault (wiki links, embeds, heading and block links) and the
rustc dev guide (relative markdown links, reference definitions, anchors).

Through the language server over stdio (pytest-lsp), on a copy of each:
* workspace diagnostics: every broken-link warning is checked by the test's
  own reading of the folder (``vault_check``: CommonMark/GitHub and Obsidian
  rules written from their documentation, no mdseek code): a warning on a link
  that reading resolves is a false warning, and there must be none;
* rename the heading most links reach (``textDocument/rename``) and move the
  note most links reach into a new folder (``workspace/willRenameFiles``, then
  the move on disk): every link that resolved before still resolves to the same
  heading or file, and nothing but link targets (and the renamed heading) changed.

The collections are read from ``$MDSEEK_VAULTS``, else ``../shared/data/vaults``
beside the checkout (where CI has shared/), else /work/shared/data/vaults
(``obsidian-help/``, ``rustc-dev-guide/``; see that folder's README for their
source and commit) and never committed; the test is skipped when they are absent.
Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import pytest_lsp
import rename_check as rc
import vault_check as vc
from lsp_support import config, plain, rename_capabilities, uri
from lsprotocol import types
from pytest_lsp import LanguageClient
from waiting import until

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
VAULTS = Path(
    os.environ.get("MDSEEK_VAULTS")
    or next(
        (
            str(p)
            for p in (REPO.parent / "shared/data/vaults", Path("/work/shared/data/vaults"))
            if p.is_dir()
        ),
        "/work/shared/data/vaults",
    )
)
NAMES = ["obsidian-help", "rustc-dev-guide"]
RESOLVED = ("file", "heading", "block")


def present(name: str) -> bool:
    return (VAULTS / name).is_dir() and any((VAULTS / name).rglob("*.md"))


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient):
    caps = rename_capabilities()
    assert caps.text_document is not None
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities()
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=caps, root_uri=None, workspace_folders=[])
    )
    yield
    await lsp_client.shutdown_session()


async def add_folder(client: LanguageClient, root: Path) -> None:
    folder = types.WorkspaceFolder(uri=uri(root), name=root.name)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[folder], removed=[])
        )
    )
    want = str(root.resolve())

    async def state() -> str:
        st = plain(await client.protocol.send_request_async("mdseek/status", {}))
        return next((r["state"] for r in st["roots"] if r["path"] == want), "absent")

    await until(state, lambda s: s not in ("absent", "starting"), timeout=120, what="folder open")


def remove_folder(client: LanguageClient, root: Path) -> None:
    folder = types.WorkspaceFolder(uri=uri(root), name=root.name)
    client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=[], removed=[folder])
        )
    )


def rel_of(root: Path, u: str) -> str:
    from urllib.parse import unquote

    base = uri(root).rstrip("/") + "/"
    assert u.startswith(base), u
    return unquote(u[len(base) :])


def link_under(links: list[vc.Link], d: types.Diagnostic) -> vc.Link | None:
    """The test's own link a warning is about: on its line, inside its range."""
    r = d.range
    start, end = (r.start.line, r.start.character), (r.end.line, r.end.character)
    for lk in links:
        if start <= lk.origin <= end or start <= (lk.line, lk.start) <= end:
            return lk
    return None


def resolution(v: vc.Vault) -> dict[tuple, tuple]:
    """Every link (file, line, its index on that line) -> where it leads."""
    out = {}
    counts: dict[tuple[str, int], int] = {}
    for lk in sorted(v.links(), key=lambda k: (k.file, k.line, k.start)):
        n = counts.get((lk.file, lk.line), 0)
        counts[(lk.file, lk.line)] = n + 1
        out[(lk.file, lk.line, n)] = v.resolve(lk)
    return out


def masked(root: Path, files: list[str], keep_line: tuple[str, int] | None = None) -> dict:
    """Each markdown file's text with every written link target blanked out (and
    one heading line): what must not change when links are rewritten."""
    out = {}
    for f in files:
        rows = vc.read(root, f).split("\n")
        for lk in sorted(vc.links_of(root, f), key=lambda k: (k.line, -k.start)):
            row = rows[lk.line]
            rows[lk.line] = row[: lk.start] + "\u2063" + row[lk.end :]
        if keep_line and keep_line[0] == f:
            rows[keep_line[1]] = "\u2063"
        out[f] = "\n".join(rows)
    return out


async def check_diagnostics(client: LanguageClient, root: Path, v: vc.Vault) -> dict:
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    links = v.links()
    by_file: dict[str, list[vc.Link]] = {}
    for lk in links:
        by_file.setdefault(lk.file, []).append(lk)
    warned, false, unmatched, dups, other, aliases = [], [], [], 0, [], []
    for item in report.items:
        if not isinstance(item, types.WorkspaceFullDocumentDiagnosticReport):
            continue
        f = rel_of(root, item.uri)
        for d in item.items:
            if d.code == "duplicate-heading":
                texts = [vc.slug(h) for _, h in vc.headings(vc.read(root, f))]
                assert len(texts) > len(set(texts)), (f, d.message)
                dups += 1
                continue
            if d.code == "alias-unreachable":  # two notes claim it, or a file has that name
                rows = vc.read(root, f).split("\n")
                name = rows[d.range.start.line][d.range.start.character : d.range.end.character]
                claims = v.alias.get(name.strip().strip("\"'").lower(), [])
                assert len(claims) > 1 or name.lower() in v.by_name, (f, d.message)
                aliases.append((f, d.range.start.line + 1, name))
                continue
            if d.code != "broken-link":
                other.append((f, d.range.start.line + 1, d.message))
                continue
            lk = link_under(by_file.get(f, []), d)
            if lk is None:
                unmatched.append((f, d.range.start.line + 1, d.message))
                continue
            warned.append(lk)
            if v.resolve(lk)[0] in RESOLVED:
                false.append((f, lk.line + 1, lk.target, d.message, v.resolve(lk)))
    broken = [lk for lk in links if v.resolve(lk)[0] == "broken"]
    # a used definition's broken target is reported once, where it is used
    missed = [lk for lk in broken if lk not in warned and lk.kind != "used-def"]
    return {
        "files": len(v.markdown()),
        "links": len(links),
        "resolving": sum(1 for lk in links if v.resolve(lk)[0] in RESOLVED),
        "broken (own reading)": len(broken),
        "warnings": len(warned) + len(unmatched),
        "false warnings": false,
        "warnings on no link the test finds": unmatched,
        "broken links not warned about": [(lk.file, lk.line + 1, lk.target) for lk in missed],
        "duplicate-heading warnings (checked)": dups,
        "ambiguous-alias warnings (checked)": aliases,
        "other warnings": other,
    }


def most_linked_heading(v: vc.Vault) -> tuple[str, int, int]:
    """(file, heading index, incoming links) of the heading most links reach
    (a document's title left out: links to it are links to the file)."""
    count: dict[tuple[str, int], int] = {}
    for lk in v.links():
        r = v.resolve(lk)
        if r[0] == "heading" and r[2] > 0:
            count[(r[1], r[2])] = count.get((r[1], r[2]), 0) + 1
    (f, n), c = max(count.items(), key=lambda kv: (kv[1], kv[0]))
    return f, n, c


def most_linked_note(v: vc.Vault) -> tuple[str, int]:
    count: dict[str, int] = {}
    for lk in v.links():
        r = v.resolve(lk)
        if r[0] in RESOLVED and r[1].endswith(vc.MD) and r[1] != lk.file:
            count[r[1]] = count.get(r[1], 0) + 1
    f, c = max(count.items(), key=lambda kv: (kv[1], kv[0]))
    return f, c


def apply(root: Path, edit: types.WorkspaceEdit | None) -> int:
    if edit is None:
        return 0
    files = {c.text_document.uri for c in edit.document_changes or [] if hasattr(c, "edits")}
    rc.apply_workspace_edit(edit)
    return len(files)


async def rename_heading(client: LanguageClient, root: Path, v: vc.Vault) -> dict:
    f, n, incoming = most_linked_heading(v)
    line, text = vc.headings(vc.read(root, f))[n]
    before = resolution(v)
    files = v.markdown()
    kept = masked(root, files, (f, line))
    row = vc.read(root, f).split("\n")[line]
    col = row.index(text) if text in row else len(row) - len(row.lstrip(" #"))
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri(root / f)),
            position=types.Position(line=line, character=col),
            new_name=f"{text} renamed",
        )
    )
    edited = apply(root, edit)
    vc._read.cache_clear()
    after = resolution(vc.Vault(root))
    return {
        "heading": f"{f}:{line + 1} {text!r}",
        "incoming links": incoming,
        "files edited": edited,
        **compare(before, after, lambda t: t),
        "other text changed": [g for g in files if masked(root, [g], (f, line))[g] != kept[g]],
    }


async def move_note(client: LanguageClient, root: Path, v: vc.Vault) -> dict:
    f, incoming = most_linked_note(v)
    new = f"moved by mdseek/{f.rsplit('/', 1)[-1]}"
    before = resolution(v)
    files = v.markdown()
    kept = masked(root, files)
    edit = await client.workspace_will_rename_files_async(
        types.RenameFilesParams(
            files=[types.FileRename(old_uri=uri(root / f), new_uri=uri(root / new))]
        )
    )
    edited = apply(root, edit)
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    (root / f).rename(root / new)
    vc._read.cache_clear()
    after_vault = vc.Vault(root)
    moved = {(new if k[0] == f else k[0], *k[1:]): r for k, r in resolution(after_vault).items()}
    after = {(f if k[0] == new else k[0], *k[1:]): r for k, r in moved.items()}

    def mapped(t: tuple) -> tuple:
        return (t[0], new, *t[2:]) if t[0] in RESOLVED and t[1] == f else t

    now = masked(root, [new if g == f else g for g in files])
    return {
        "note": f"{f} -> {new}",
        "incoming links": incoming,
        "files edited": edited,
        **compare(before, after, mapped),
        "other text changed": [g for g in files if now[new if g == f else g] != kept[g]],
    }


def compare(before: dict, after: dict, mapped) -> dict:
    resolving = [k for k, r in before.items() if r[0] in RESOLVED]
    lost = [(k, before[k], after.get(k)) for k in resolving if after.get(k) != mapped(before[k])]
    return {
        "links": len(before),
        "resolving before": len(resolving),
        "resolving after": sum(1 for r in after.values() if r[0] in RESOLVED),
        "previously resolving, now elsewhere or broken": lost,
    }


@pytest.mark.parametrize("name", NAMES)
async def test_real_vault(client: LanguageClient, tmp_path: Path, name: str):
    if not present(name):
        pytest.skip(f"{VAULTS / name} is absent (set MDSEEK_VAULTS; see tests/test_real_vaults.py)")
    root = tmp_path / name
    shutil.copytree(VAULTS / name, root)
    vc._read.cache_clear()
    v = vc.Vault(root)
    await add_folder(client, root)
    try:
        diag = await check_diagnostics(client, root, v)
        heading = await rename_heading(client, root, v)
        move = await move_note(client, root, vc.Vault(root))
    finally:
        remove_folder(client, root)
    figures = {"diagnostics": diag, "rename a heading": heading, "move a note": move}
    print(f"\n{name}:")
    for part, fig in figures.items():
        print(f"  {part}:")
        for k, val in fig.items():
            shown = len(val) if isinstance(val, list) else val
            print(f"    {k}: {shown}")
            if isinstance(val, list):
                for x in val[:8]:
                    print(f"      {x}")
    assert diag["false warnings"] == []
    assert diag["warnings on no link the test finds"] == []
    assert diag["other warnings"] == []
    for part in (heading, move):
        assert part["previously resolving, now elsewhere or broken"] == []
        assert part["other text changed"] == []
