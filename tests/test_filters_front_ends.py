"""One filtered query through the three front ends -- ``mdseek search
--tag --where``, MCP ``search``'s ``tag`` and ``where``, the language
server's ``mdseek/search`` (and workspace/symbol with the filter leading the
query) -- gives the same sections; an unknown field gives
an empty answer with the same note in each. Real processes over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_support import SERVER_CMD, SandboxedConfig, initialize, make_client, request, wait_ready
from lsprotocol import types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from sandbox import server_env
from waiting import mcp_ready

pytestmark = pytest.mark.slow

NOTES = {
    "db.md": "---\nstatus: published\nowner: [ops, alice]\n---\n# Restart the database\n\n"
    "Restart the primary database service after a failover. #runbook/db\n",
    "web.md": "---\nstatus: published\ntags: [runbook]\n---\n# Restart the web tier\n\n"
    "Restart the web service behind the load balancer.\n",
    "draft.md": "---\nstatus: draft\ntags: [runbook]\n---\n# Restart the queue\n\n"
    "Restart the queue service, a draft.\n",
    "notes.md": "---\nstatus: published\n---\n# Restart notes\n\nWhy we restart the service.\n",
    "plain.md": "# Restart anything\n\nRestart any service. #runbook\n",
}
QUERY = "restart the service"
TAG, WHERE = "runbook", "status=published"
WANT = ["db.md", "web.md"]  # tagged runbook (or under it) and published, by hand


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("filters") / "notes"
    root.mkdir()
    for rel, text in NOTES.items():
        (root / rel).write_text(text)
    return root


def cli(ws: Path, *args: str) -> dict:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "mdseek",
            "search",
            str(ws),
            QUERY,
            "--json",
            "--no-progress",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=server_env(),
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


async def mcp(ws: Path, **args) -> dict:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mdseek", "mcp", str(ws)], env=server_env()
    )
    async with Client(params, read_timeout_seconds=120) as client:
        await mcp_ready(client)  # as the other front ends: after the first reading
        res = await client.call_tool("search", {"query": QUERY, **args})
        assert not res.is_error, res.content
        assert res.structured_content is not None
        return res.structured_content


async def lsp(ws: Path, symbols: str | None = None, **params) -> dict:
    """``mdseek/search``'s answer; with ``symbols``, also that workspace/symbol
    query's files (as ``symbol_paths``)."""
    client = await SandboxedConfig(
        server_command=SERVER_CMD, client_factory=make_client, server_env={}
    ).start()
    try:
        await initialize(client, ws)
        await wait_ready(client)
        answer = await request(client, "mdseek/search", {"query": QUERY, **params})
        if symbols is not None:
            found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=symbols))
            answer["symbol_paths"] = sorted({s.location.uri.rsplit("/", 1)[-1] for s in found})
        return answer
    finally:
        await client.shutdown_session()


def sections(answer: dict) -> list[tuple[str, int]]:
    return [(r["path"], r["start_line"]) for r in answer["results"]]


async def test_one_filtered_query_gives_the_same_sections_in_every_front_end(ws: Path):
    by_cli = cli(ws, "--tag", TAG, "--where", WHERE)
    by_mcp = await mcp(ws, tag=TAG, where=[WHERE])
    by_lsp = await lsp(ws, symbols=f"#{TAG} {WHERE} {QUERY}", tag=[TAG], where=WHERE)
    assert sorted(p for p, _ in sections(by_cli)) == WANT, by_cli
    assert by_lsp["symbol_paths"] == WANT  # workspace/symbol: the filter leads the query
    assert sections(by_mcp) == sections(by_cli), (by_mcp, by_cli)
    assert sections(by_lsp) == sections(by_cli), (by_lsp, by_cli)
    unfiltered = cli(ws)
    assert len(unfiltered["results"]) == len(NOTES)  # the index holds every note


async def test_an_unknown_field_is_an_empty_answer_with_a_note_everywhere(ws: Path):
    note = "no note has the field ownr (fields in this folder: owner, status, tags)"
    by_cli = cli(ws, "--where", "ownr=ops")
    by_mcp = await mcp(ws, where="ownr=ops")
    by_lsp = await lsp(ws, where=["ownr=ops"])
    for answer in (by_cli, by_mcp, by_lsp):
        assert answer["results"] == [] and note in answer["note"], answer
