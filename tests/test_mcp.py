"""``mdseek mcp`` driven by the MCP SDK's own client over stdio: the tools, their
errors, confinement to the served folders, freshness, and sharing the index
with a running language server."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from lsp_support import (
    SERVER_CMD,
    fixture_queries,
    indexed_copy,
    initialize,
    make_client,
    request,
    uri,
    wait_ready,
    wait_updates,
)
from lsprotocol import types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from sandbox import server_env
from waiting import until

pytestmark = pytest.mark.slow

TOOLS = {"search", "get_section", "related", "outline", "status"}
SECRET = "zebracorn-outside-secret"


# The headings of handbook/howto/writing-migrations.md, written by hand: (1-based
# line, heading, GitHub anchor). Lines 28-29 are comments in a bash fence.
MIGRATIONS = [
    (1, "Writing Database Migrations", "writing-database-migrations"),
    (10, "The expand–contract rule", "the-expandcontract-rule"),
    (25, "Creating a migration file", "creating-a-migration-file"),
    (37, "Rules for safe migrations", "rules-for-safe-migrations"),
    (42, "Adding a column", "adding-a-column"),
    (57, "Adding an index", "adding-an-index"),
    (65, "Renaming things", "renaming-things"),
    (71, "Long-running data changes", "long-running-data-changes"),
    (82, "Testing a migration", "testing-a-migration"),
    (97, "Rollback — step 1: stop the deploy", "rollback--step-1-stop-the-deploy"),
    (
        104,
        'Rollback — step 2: "undo" the migrate command',  # plain: no backticks
        "rollback--step-2-undo-the-migrate-command",
    ),
    (116, "Rollback — step 3: fix forward", "rollback--step-3-fix-forward"),
]


def top_heading(query: str, **args: Any):
    """A probe for until(): the search's results (heading of each)."""

    async def probe(client: Client) -> list[str]:
        res = await call(client, "search", {"query": query, "limit": 3, **args})
        return [r["heading"] for r in res["results"]]

    return probe


async def no_pending(client: Client) -> dict:
    return await until(
        lambda: call(client, "status"),
        lambda st: st["pending_embeds"] == 0,
        timeout=120,
        what="vectors of the edit",
    )


@asynccontextmanager
async def mcp_client(*dirs: Path, args: tuple[str, ...] = ()):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mdseek", "mcp", *map(str, dirs), *args],
        env=server_env(),  # the SDK hands a server only HOME, PATH and a few more otherwise
    )
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> dict:
    res = await client.call_tool(tool, args or {})
    assert not res.is_error, res.content
    assert res.structured_content is not None
    return res.structured_content


async def error(client: Client, tool: str, args: dict[str, Any]) -> str:
    res = await client.call_tool(tool, args)
    assert res.is_error, res.structured_content
    return res.content[0].text  # type: ignore[union-attr]


async def wait_mcp_ready(client: Client, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    st: dict = {}
    while time.monotonic() < deadline:
        st = await call(client, "status")
        if st["state"] in ("ready", "lexical-only"):
            return st
        await asyncio.sleep(0.1)
    raise AssertionError(f"not ready: {st}")


@pytest.fixture
def ws(tmp_path_factory, request) -> Path:
    return indexed_copy(tmp_path_factory, "mcp", request)


async def test_tools_answer_from_the_index(ws: Path):
    async with mcp_client(ws) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        for t in tools.values():  # documented: a description and typed arguments
            assert t.description and t.output_schema
            for prop in t.input_schema.get("properties", {}).values():
                assert prop.get("description") or prop.get("type") == "integer"
        assert tools["search"].input_schema["required"] == ["query"]

        st = await wait_mcp_ready(client)
        assert st["files"] == len(list(ws.rglob("*.md"))) and st["pending_embeds"] == 0
        assert st["chunks"] > 0 and st["window_fit"] == 1.0 and st["model"]

        # search: the right section in the top 3 for every keyword query ...
        qs = [q for q in fixture_queries()["queries"] if q["kind"] == "keyword"]
        for q in qs:
            res = await call(client, "search", {"query": q["query"], "limit": 3})
            assert res["mode"] == "hybrid" and res["note"] is None
            assert (q["path"], q["heading"]) in [
                (r["path"], r["heading_text"]) for r in res["results"]
            ], q
        # ... and, for any query, exactly the engine's ranking (one code path)
        from mdseek.index.engine.engine import Engine

        eng = Engine(ws)
        try:
            for q in fixture_queries()["queries"][:3]:
                want = eng.search(q["query"], limit=5).results
                res = await call(client, "search", {"query": q["query"], "limit": 5})
                assert [(r["path"], r["anchor"], r["start_line"]) for r in res["results"]] == [
                    (r.path, r.slug, r.start_line + 1) for r in want
                ]
        finally:
            eng.close()

        res = await call(client, "search", {"query": qs[0]["query"], "limit": 3})
        top = res["results"][0]
        assert set(top) >= {
            "path",
            "heading",
            "anchor",
            "breadcrumb",
            "start_line",
            "end_line",
            "score",
            "snippet",
        }

        # get_section: exactly that section's lines of the file
        sec = await call(client, "get_section", {"path": top["path"], "anchor": top["anchor"]})
        lines = (ws / top["path"]).read_text().split("\n")
        assert sec["start_line"] == top["start_line"]
        assert sec["markdown"] == "\n".join(lines[sec["start_line"] - 1 : sec["end_line"]])
        assert sec["markdown"].startswith("#") and top["heading"] in sec["markdown"].split("\n")[0]
        assert sec["end_line"] <= top["end_line"]
        by_heading = await call(
            client, "get_section", {"path": top["path"], "heading": top["heading"]}
        )
        by_line = await call(
            client, "get_section", {"path": top["path"], "line": top["start_line"] + 1}
        )
        assert by_heading["markdown"] == by_line["markdown"] == sec["markdown"]
        whole = await call(
            client,
            "get_section",
            {"path": top["path"], "anchor": top["anchor"], "include_subsections": True},
        )
        assert whole["markdown"].startswith(sec["markdown"])

        # outline: every heading of the file with its line
        assert top["path"] == "handbook/howto/writing-migrations.md"
        out = await call(client, "outline", {"path": top["path"]})
        assert [(h["line"], h["heading_text"], h["anchor"]) for h in out["headings"]] == MIGRATIONS
        # headings as written, inline markup kept (the plain text beside them)
        written = {h["line"]: h["heading"] for h in out["headings"]}
        assert written[104] == 'Rollback — step 2: "undo" the `migrate` command'
        assert [written[n] for n, _, _ in MIGRATIONS if n != 104] == [
            h for n, h, _ in MIGRATIONS if n != 104
        ]
        step2 = await call(
            client,
            "get_section",
            {"path": top["path"], "anchor": "rollback--step-2-undo-the-migrate-command"},
        )
        assert (step2["heading"], step2["heading_text"]) == (
            'Rollback — step 2: "undo" the `migrate` command',
            'Rollback — step 2: "undo" the migrate command',
        )
        found = await call(client, "search", {"query": "undo the migrate command", "limit": 5})
        step2_hit = next(r for r in found["results"] if r["start_line"] == 104)
        assert step2_hit["heading"] == step2["heading"]
        assert step2_hit["heading_text"] == step2["heading_text"]
        assert all(lines[h["line"] - 1].startswith("#") for h in out["headings"])
        assert any(h["anchor"] == top["anchor"] for h in out["headings"])

        # related: sections of other files
        rel = await call(
            client, "related", {"path": top["path"], "anchor": top["anchor"], "limit": 4}
        )
        assert rel["results"] and all(r["path"] != top["path"] for r in rel["results"])

        # a path glob keeps results inside it
        res = await call(client, "search", {"query": "rollback", "limit": 5, "path": "howto/**"})
        assert res["results"] == []  # a glob with a folder is relative to the served folder
        res = await call(
            client, "search", {"query": "rollback", "limit": 5, "path": "handbook/howto/**"}
        )
        assert res["results"] and all(
            r["path"].startswith("handbook/howto/") for r in res["results"]
        )
        res = await call(
            client, "search", {"query": "rollback", "limit": 5, "path": "releasing.md"}
        )
        assert res["results"] and {r["path"] for r in res["results"]} == {
            "handbook/howto/releasing.md"
        }


async def test_bad_arguments_are_clear_tool_errors(ws: Path):
    async with mcp_client(ws) as client:
        path = "handbook/runbooks/database-failover.md"
        msg = await error(client, "get_section", {"path": path, "heading": "No such heading here"})
        assert "No such heading here" in msg and "'Promote the replica'" in msg  # the real headings
        msg = await error(client, "get_section", {"path": path})
        assert "exactly one of heading, anchor or line" in msg
        msg = await error(client, "get_section", {"path": path, "heading": "Overview", "line": 3})
        assert "exactly one" in msg
        assert "line 100000" in await error(client, "get_section", {"path": path, "line": 100000})
        assert "query" in await error(client, "search", {"query": ""})
        assert "limit" in await error(client, "search", {"query": "x", "limit": "lots"})
        assert "limit" in await error(client, "search", {"query": "x", "limit": 0})
        assert "mode" in await error(client, "search", {"query": "x", "mode": "psychic"})
        assert "query" in await error(client, "search", {})
        assert "no such markdown file" in await error(
            client, "outline", {"path": "handbook/nope.md"}
        )
        res = await client.call_tool("no_such_tool", {})
        assert res.is_error
        # the server is still fine afterwards
        assert (await call(client, "outline", {"path": path}))["headings"]


async def test_a_tools_own_error_is_exactly_mdseeks_line(ws: Path):
    """An error a tool raises itself (past the argument checks: no such file,
    no such line, a path outside the served folders), over real stdio: exactly
    mdseek's one line, the words the CLI and the language server use, without
    the SDK's "Error executing tool NAME: " before it.

    Mutant caught: ``CheckedServer.call_tool`` (lsp/mcp/args.py) keeping the
    SDK's prefix, ``raise ToolError(str(exc.__cause__)) from exc.__cause__``
    -> ``raise``."""
    lines = len((ws / FILE).read_text().splitlines())
    async with mcp_client(ws) as client:
        assert await error(client, "outline", {"path": "handbook/nope.md"}) == (
            "handbook/nope.md: no such markdown file (or over the size limit)"
        )
        assert await error(client, "get_section", {"path": FILE, "line": 100000}) == (
            f"line 100000 is not in {FILE} ({lines} lines)"
        )
        assert await error(client, "related", {"path": "handbook/nope.md", "line": 1}) == (
            "handbook/nope.md: no such markdown file (or over the size limit)"
        )


FILE = "handbook/runbooks/database-failover.md"
FILE_HINT = "give a markdown file's path as search or outline shows it"
SEARCH_ARGS = "search takes query, limit, mode, path, tag, where, highlight"
SECTION_ARGS = "get_section takes path, heading, anchor, line, include_subsections"
# Every tool, every argument given the wrong kind of value, left out, or misnamed:
# (tool, arguments, the one line answered), the words index/search/requests.py gives the
# CLI and the language server for the same mistake.
WRONG_ARGUMENTS = [
    ("search", {"query": 123}, "query must be text: say what you are looking for, in words"),
    ("search", {"query": ["a", "b"]}, "query must be text: say what you are looking for, in words"),
    ("search", {}, "query is missing: say what you are looking for, in words"),
    ("search", {"query": None}, "query is missing: say what you are looking for, in words"),
    ("search", {"query": "x", "limit": "lots"}, "limit must be a whole number from 1 to 200 (got 'lots')"),
    ("search", {"query": "x", "limit": 2.5}, "limit must be a whole number from 1 to 200 (got '2.5')"),
    ("search", {"query": "x", "limit": [5]}, "limit must be a whole number from 1 to 200 (got '[5]')"),
    ("search", {"query": "x", "limit": True}, "limit must be a whole number from 1 to 200 (got 'True')"),
    ("search", {"query": "x", "limit": 0}, "limit must be a whole number from 1 to 200 (got 0)"),
    ("search", {"query": "x", "mode": 3}, "mode must be hybrid, lexical or dense (got '3')"),
    ("search", {"query": "x", "mode": ["dense"]}, "mode must be hybrid, lexical or dense (got \"['dense']\")"),
    ("search", {"query": "x", "path": 7}, "path must be a glob or a list of globs, e.g. 'docs/**' or '!drafts/**'"),
    ("search", {"query": "x", "path": ["a/**", 7]}, "path must be a glob or a list of globs, e.g. 'docs/**' or '!drafts/**'"),
    ("search", {"query": "x", "path": {"glob": "a"}}, "path must be a glob or a list of globs, e.g. 'docs/**' or '!drafts/**'"),
    ("search", {"query": "x", "highlight": "yes"}, "highlight must be true or false (got 'yes')"),
    ("search", {"query": "x", "highlight": 1}, "highlight must be true or false (got 1)"),
    ("search", {"query": "x", "limits": 5}, f"unknown argument 'limits': {SEARCH_ARGS}"),
    ("get_section", {"path": 5, "line": 1}, f"path must be text: {FILE_HINT}"),
    ("get_section", {"path": [FILE], "line": 1}, f"path must be text: {FILE_HINT}"),
    ("get_section", {"line": 1}, f"path is missing: {FILE_HINT}"),
    ("get_section", {"path": "", "line": 1}, f"path is empty: {FILE_HINT}"),
    ("get_section", {"path": FILE, "heading": 5}, "heading must be text: give a heading as outline shows it"),
    ("get_section", {"path": FILE, "anchor": ["a"]}, "anchor must be text: give a heading's anchor as search or outline shows it"),
    ("get_section", {"path": FILE, "line": "three"}, "line must be a whole number, 1 or more (got 'three')"),
    ("get_section", {"path": FILE, "line": 0}, "line must be a whole number, 1 or more (got 0)"),
    ("get_section", {"path": FILE, "line": 1.5}, "line must be a whole number, 1 or more (got '1.5')"),
    ("get_section", {"path": FILE, "line": 1, "include_subsections": "maybe"}, "include_subsections must be true or false (got 'maybe')"),
    ("get_section", {"path": FILE, "section": "Overview"}, f"unknown argument 'section': {SECTION_ARGS}"),
    ("related", {"path": 5, "line": 1}, f"path must be text: {FILE_HINT}"),
    ("related", {"line": 1}, f"path is missing: {FILE_HINT}"),
    ("related", {"path": FILE, "heading": 5}, "heading must be text: give a heading as outline shows it"),
    ("related", {"path": FILE, "anchor": 5}, "anchor must be text: give a heading's anchor as search or outline shows it"),
    ("related", {"path": FILE, "line": "x"}, "line must be a whole number, 1 or more (got 'x')"),
    ("related", {"path": FILE, "line": 1, "limit": "many"}, "limit must be a whole number from 1 to 200 (got 'many')"),
    ("related", {"path": FILE, "line": 1, "top": 3}, "unknown argument 'top': related takes path, heading, anchor, line, limit, unlinked"),
    ("outline", {"path": 3}, f"path must be text: {FILE_HINT}"),
    ("outline", {}, f"path is missing: {FILE_HINT}"),
    ("outline", {"path": None}, f"path is missing: {FILE_HINT}"),
    ("outline", {"file": FILE}, "unknown argument 'file': outline takes path"),
    ("status", {"verbose": True}, "unknown argument 'verbose': status takes no arguments"),
]  # fmt: skip


async def test_wrong_arguments_answer_one_plain_line(ws: Path):
    """No pydantic text, no SDK prefix: exactly mdseek's line, for every tool."""
    async with mcp_client(ws) as client:
        got = []
        for tool, args, _ in WRONG_ARGUMENTS:
            res = await client.call_tool(tool, args)
            text = " ".join(getattr(c, "text", "") for c in res.content)
            got.append((tool, args, text if res.is_error else f"(answered) {text[:80]}"))
        wrong = [
            (tool, args, text, line)
            for (tool, args, text), (_, _, line) in zip(got, WRONG_ARGUMENTS, strict=True)
            if text != line
        ]
        assert not wrong, "\n".join(f"{t} {a}: {x!r} (want {w!r})" for t, a, x, w in wrong)
        # right values still pass, a number given as text too
        assert (await call(client, "outline", {"path": FILE}))["headings"]
        sec = await call(client, "get_section", {"path": FILE, "line": "8"})  # front matter above
        assert sec["start_line"] == 8 and sec["heading"] == "Database Failover"
        res = await call(client, "search", {"query": "failover", "limit": "2", "path": None})
        assert len(res["results"]) <= 2


async def test_nothing_outside_the_served_folder(ws: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n## Keys\n\n{SECRET} lives here.\n")
    (ws / "handbook" / "link-to-secret.md").symlink_to(outside / "secret.md")
    (ws / "handbook" / "outside-dir").symlink_to(outside, target_is_directory=True)
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text(f"[core]\n# {SECRET}\n")
    (ws / "notes.txt").write_text(f"{SECRET}\n")
    rel_up = os.path.relpath(outside / "secret.md", ws)
    probes = [
        rel_up,  # ../../outside/secret.md
        "handbook/../" + rel_up,
        str(outside / "secret.md"),  # absolute
        "handbook/link-to-secret.md",  # symlinked file
        "handbook/outside-dir/secret.md",  # through a symlinked folder
        "/etc/passwd",
        "/etc/hostname",
        ".git/config",  # inside, but not a served markdown file
        "notes.txt",
        ".mdseek/index.sqlite",
        "",
    ]
    async with mcp_client(ws) as client:
        await wait_mcp_ready(client)
        for p in probes:
            for tool, args in (
                ("outline", {"path": p}),
                ("get_section", {"path": p, "line": 1}),
                ("get_section", {"path": p, "heading": "Keys"}),
                ("related", {"path": p, "line": 1}),
            ):
                res = await client.call_tool(tool, args)
                text = " ".join(getattr(c, "text", "") for c in res.content)
                assert res.is_error, (tool, p, text)
                assert SECRET not in text and "root:" not in text, (tool, p)
        res = await call(client, "search", {"query": SECRET, "limit": 20})
        assert all(SECRET not in r["snippet"] for r in res["results"])
        assert all(
            "secret.md" not in r["path"] and "outside" not in r["path"] for r in res["results"]
        )


async def test_fresh_without_an_editor(ws: Path):
    async with mcp_client(ws) as client:
        await wait_mcp_ready(client)
        path = ws / "handbook/policies/travel.md"
        path.write_text(
            path.read_text()
            + "\n## Okapi allowance\n\nThe quillwhistle stipend covers okapi rides.\n"
        )
        # a later call's mtime scan rechunks it before answering (scans are at
        # most FRESH_SECONDS apart): no editor, no watcher, no restart
        found = await until(
            lambda: top_heading("quillwhistle", mode="lexical")(client),
            lambda heads: heads[:1] == ["Okapi allowance"],
            timeout=10,
            what="the edit found",
        )
        assert found[0] == "Okapi allowance"
        sec = await call(
            client,
            "get_section",
            {"path": "handbook/policies/travel.md", "anchor": "okapi-allowance"},
        )
        assert "quillwhistle stipend" in sec["markdown"]
        # vectors follow in the background: the status says when
        await no_pending(client)
        res = await call(
            client, "search", {"query": "stipend for okapi rides", "limit": 3, "mode": "dense"}
        )
        assert res["results"][0]["heading"] == "Okapi allowance"  # by meaning too
        # a deleted file leaves the index at the next call
        gone = ws / "handbook/policies/leave.md"
        gone.unlink()
        res = await until(
            lambda: call(client, "search", {"query": "parental leave", "limit": 20}),
            lambda res: all(r["path"] != "handbook/policies/leave.md" for r in res["results"]),
            timeout=10,
            what="the deleted file gone from search",
        )
        assert res["results"]  # the rest of the handbook still answers
        assert "no such markdown file" in await error(
            client, "outline", {"path": "handbook/policies/leave.md"}
        )


async def test_two_folders_prefix_paths(ws: Path, tmp_path: Path):
    other = tmp_path / "notes"
    other.mkdir()
    (other / "garden.md").write_text(
        "# Garden\n\n## Compost\n\nTurn the marrowbloom compost weekly.\n"
    )
    async with mcp_client(ws, other) as client:
        await wait_mcp_ready(client)
        res = await call(client, "search", {"query": "marrowbloom compost", "limit": 3})
        assert res["results"][0]["path"] == "notes/garden.md"
        sec = await call(client, "get_section", {"path": "notes/garden.md", "heading": "Compost"})
        assert sec["markdown"] == "## Compost\n\nTurn the marrowbloom compost weekly."
        out = await call(client, "outline", {"path": "ws/handbook/policies/travel.md"})
        assert out["path"] == "ws/handbook/policies/travel.md" and out["headings"]
        msg = await error(client, "outline", {"path": "handbook/policies/travel.md"})
        assert "ws" in msg and "notes" in msg


async def test_beside_a_running_language_server(ws: Path):
    """mdseek serve and mdseek mcp on one index: each sees the other's writes,
    and the index stays sound."""
    lsp = make_client()
    await lsp.start_io(*SERVER_CMD, env=server_env())
    try:
        await initialize(lsp, ws)
        async with mcp_client(ws) as client:
            await asyncio.gather(wait_ready(lsp), wait_mcp_ready(client))
            # an edit the language server indexes on save is found through MCP
            a = ws / "handbook/policies/expenses.md"
            a.write_text(
                a.read_text() + "\n## Shared index check\n\nThe wombatcrossing rule applies.\n"
            )
            st0 = await request(lsp, "mdseek/status", {})
            lsp.text_document_did_save(
                types.DidSaveTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri(a))
                )
            )
            await wait_updates(lsp, st0["updates_done"])
            res = await call(client, "search", {"query": "wombatcrossing", "limit": 3})
            assert res["results"][0]["heading"] == "Shared index check"
            # an edit MCP indexes (on its own mtime scan) is found by the language server
            b = ws / "handbook/policies/security.md"
            b.write_text(
                b.read_text() + "\n## Second writer\n\nThe pangolinferry key is rotated.\n"
            )
            await until(
                lambda: top_heading("pangolinferry", mode="lexical")(client),
                lambda heads: heads[:1] == ["Second writer"],
                timeout=10,
                what="MCP's own scan indexing the edit",
            )
            await no_pending(client)  # its vector, in the background
            found = await request(
                lsp, "mdseek/search", {"query": "is the pangolinferry key rotated", "limit": 3}
            )
            assert found["results"] and found["results"][0]["heading"] == "Second writer"
            # both keep searching while the other writes: the language server
            # reindexes a saved file while both answer keyword queries
            c = ws / "handbook/policies/travel.md"
            c.write_text(c.read_text() + "\n## Third edit\n\nThe tapirlantern fare.\n")
            st1 = await request(lsp, "mdseek/status", {})
            lsp.text_document_did_save(
                types.DidSaveTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=uri(c))
                )
            )
            qs = [q for q in fixture_queries()["queries"] if q["kind"] == "keyword"][:4]
            answers = await asyncio.gather(
                *(call(client, "search", {"query": q["query"], "limit": 5}) for q in qs),
                *(request(lsp, "mdseek/search", {"query": q["query"], "limit": 5}) for q in qs),
                wait_updates(lsp, st1["updates_done"]),
            )
            for q, res in zip(qs + qs, answers[:-1], strict=True):
                assert (q["path"], q["heading"]) in [
                    (r["path"], r["heading"]) for r in res["results"]
                ], q
    finally:
        try:
            await asyncio.wait_for(lsp.shutdown_session(), 20)
        except Exception:
            pass
        await lsp.stop()
    db = sqlite3.connect(ws / ".mdseek/index.sqlite")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        dup = db.execute(
            "SELECT count(*) FROM (SELECT path FROM documents GROUP BY path HAVING count(*) > 1)"
        ).fetchone()[0]
        assert dup == 0
        assert (
            db.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
            == db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        )
    finally:
        db.close()
