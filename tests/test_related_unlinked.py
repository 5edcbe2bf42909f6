"""Related sections, unlinked (issue 45): what a section already links to, or is
linked from, left out of its related sections -- in the engine (real model,
real SQLite), through ``mdseek related`` and MCP's ``related``.

The folder: a failover runbook (``a.md``) that links one section of ``b.md``
and the whole note ``f.md`` (a wiki link), and is linked from ``c.md``; ``d.md``
is about the same thing and linked with nothing."""

from __future__ import annotations

import json

import pytest
from sandbox import mdseek

NOTES = {
    "a.md": "# Database failover\n\n"
    "When the primary database dies, promote the replica database and repoint the"
    " application. See [replica promotion](b.md#replica-promotion) and [[f]].\n",
    "b.md": "# Replicas\n\nHow the database replicas are kept.\n\n"
    "## Replica promotion\n\nPromote a database replica when the primary database dies:"
    " stop writes, promote the replica, repoint the application.\n",
    "c.md": "# Failover drill\n\nEvery month we practise a database failover: the primary"
    " database dies, the replica is promoted, the application is repointed."
    " The steps are in [the runbook](a.md).\n",
    "d.md": "# Database outage\n\nThe primary database died at night; we promoted the replica"
    " database and repointed the application by hand.\n",
    "f.md": "# Failover checklist\n\n## Before\n\nCheck the replica database lag before the"
    " primary database is failed over.\n\n## After\n\nRepoint the application to the"
    " promoted replica database.\n",
    "e.md": "# Lunch menu\n\nSoup on Mondays, pasta on Fridays.\n",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from mdseek.index.api import EngineOptions, Folder

    ws = tmp_path_factory.mktemp("related") / "notes"
    ws.mkdir()
    for name, text in NOTES.items():
        (ws / name).write_text(text)
    folder, _ = Folder.open_now(ws, EngineOptions())
    rep = folder.index_now()
    assert rep.pending == 0
    yield folder
    folder.close()


def places(resp) -> set[tuple[str, str]]:
    return {(r.path, r.slug) for r in resp.results}


def test_unlinked_leaves_out_both_ways_and_whole_notes(folder):
    every = places(folder.related("a.md", "database-failover", 0, 20))
    linked = {
        ("b.md", "replica-promotion"),  # a links to it
        ("c.md", "failover-drill"),  # it links to a (the whole note)
        ("f.md", "failover-checklist"),  # a links to the whole note f: each of its sections
        ("f.md", "before"),
        ("f.md", "after"),
    }
    assert linked <= every and ("d.md", "database-outage") in every
    unlinked = places(folder.related("a.md", "database-failover", 0, 20, unlinked=True))
    assert not linked & unlinked
    assert ("d.md", "database-outage") in unlinked
    assert unlinked == every - linked  # b.md's title section stays: a links one section of b


LINKED = {
    ("b.md", "replica-promotion"),
    ("c.md", "failover-drill"),
    ("f.md", "failover-checklist"),
    ("f.md", "before"),
    ("f.md", "after"),
}


def test_unlinked_fills_the_limit_from_further_down(folder):
    every = folder.related("a.md", "database-failover", 0, 20).results
    first = next(i for i, r in enumerate(every) if (r.path, r.slug) not in LINKED)
    assert first > 0  # the most related section is a linked one: the first unlinked comes later
    one = folder.related("a.md", "database-failover", 0, 1, unlinked=True).results
    assert [(r.path, r.slug) for r in one] == [(every[first].path, every[first].slug)]


def test_among_the_most_related_only_without_fill(folder):
    every = folder.related("a.md", "database-failover", 0, 3).results
    among = folder.related("a.md", "database-failover", 0, 3, unlinked=True, fill=False).results
    want = [(r.path, r.slug) for r in every if (r.path, r.slug) not in LINKED]
    assert [(r.path, r.slug) for r in among] == want and len(want) < 3


def test_sections_like_a_paragraph_leave_out_its_sections_links(folder):
    text = "the primary database dies and the replica is promoted"
    every = places(folder.sections_like(text, "a.md", 20))
    unlinked = places(folder.sections_like(text, "a.md", 20, unlinked_line=2))
    assert ("b.md", "replica-promotion") in every and ("c.md", "failover-drill") in every
    assert ("b.md", "replica-promotion") not in unlinked
    assert ("c.md", "failover-drill") not in unlinked
    assert ("d.md", "database-outage") in unlinked


def test_the_related_verb(folder):
    ws = folder.path
    r = mdseek("related", "a.md:3", "--unlinked", "--json", "--limit", "20", cwd=ws)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["path"] == "a.md" and out["line"] == 1 and out["unlinked"] is True
    got = {(x["path"], x["anchor"]) for x in out["results"]}
    assert ("d.md", "database-outage") in got and ("c.md", "failover-drill") not in got
    r = mdseek("related", "a.md", "--limit", "20", cwd=ws)  # no line: the first section
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("related to a.md:1 (Database failover):\n")
    assert "c.md:1" in r.stdout
    r = mdseek("related", "a.md:99", cwd=ws)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "mdseek: error: line 99 is not in a.md (3 lines)\n"
    r = mdseek("related", "a.md:0", cwd=ws)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "LINE from 1" in r.stderr
    r = mdseek("related", "nope.md", cwd=ws)
    assert (r.returncode, r.stderr) == (1, "mdseek: error: nope.md: no such file\n")


async def test_mcp_related_takes_unlinked(folder):
    from test_mcp import call, error, mcp_client, no_pending, wait_mcp_ready

    async with mcp_client(folder.path) as client:
        await wait_mcp_ready(client)
        await no_pending(client)
        args = {"path": "a.md", "line": 1, "limit": 20}
        every = {(r["path"], r["anchor"]) for r in (await call(client, "related", args))["results"]}
        got = await call(client, "related", {**args, "unlinked": True})
        unlinked = {(r["path"], r["anchor"]) for r in got["results"]}
        assert LINKED <= every and unlinked == every - LINKED
        assert await error(client, "related", {**args, "unlinked": "yes"}) == (
            "unlinked must be true or false (got 'yes')"
        )
