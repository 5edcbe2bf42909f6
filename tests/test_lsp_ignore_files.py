"""The issue's target, through the real language server: a docs folder with a
built ``_site/`` copy that ``.gitignore`` names gives 0 hits and 0 warnings
from the copy; a link into the copy is warned about as ignored, not as a
missing file; status counts the ignored files."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import (
    config,
    initialize,
    pull_capabilities,
    request,
    uri,
    wait_ready,
)
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

DOCS = {
    "index.md": "# Handbook\n\nStart with the [guide](guide.md).\n\nThe [built copy](_site/guide.md).\n",
    "guide.md": "# Glacier guide\n\nRotate the glacier keys every quarter.\n",
}


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("ignore") / "docs"
    for folder in ("", "_site/"):
        for rel, text in DOCS.items():
            p = ws / folder / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            # the copy also links to a page the build dropped: a warning if it were read
            p.write_text(text + ("\nSee [old](removed.md).\n" if folder else ""))
    (ws / ".gitignore").write_text("_site/\n")
    return ws


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, docs: Path):
    await initialize(lsp_client, docs, caps=pull_capabilities())
    yield
    await lsp_client.shutdown_session()


async def test_a_built_site_copy_gives_no_hits_and_no_warnings(client: LanguageClient, docs: Path):
    st = await wait_ready(client)
    assert st["files"] == 2 and st["ignored_files"] == 2, st
    res = await request(client, "mdseek/search", {"query": "rotate the glacier keys"})
    assert [r["path"] for r in res["results"]][:1] == ["guide.md"], res
    assert not [r for r in res["results"] if "_site" in r["uri"]], res
    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="glacier"))
    assert symbols and not [s for s in symbols if "_site" in s.location.uri], symbols
    report = await client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[])
    )
    by_uri = {i.uri: [d.message for d in i.items] for i in report.items}
    assert not [u for u, msgs in by_uri.items() if "_site" in u and msgs], by_uri
    assert by_uri[uri(docs / "index.md")] == [
        "_site/guide.md is ignored by .gitignore: it is not indexed"
    ]
