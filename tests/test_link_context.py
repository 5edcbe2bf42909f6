"""Link completion reads context as a writer would expect (issue 20): ten
hand-written notes over the fixture handbook, each a question a colleague
might write, with the sections of the handbook that answer it (chosen by hand).
Each note is written three ways -- the link ending the question's paragraph,
the link as the next paragraph, the link as a list item under the text -- and
completion after ``](`` must offer a relevant section among its first 10
offers (by sort order) in at least 8 of the 10 notes, in every form.

Run ``pytest tests/test_link_context.py -s`` for the per-form counts."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, indexed_copy, initialize, open_doc, wait_ready
from lsprotocol import types
from pytest_lsp import LanguageClient

pytestmark = pytest.mark.slow

# (question, accepted targets "path#anchor" under handbook/)
NOTES = [
    (
        "My laptop was stolen from my bag at the airport last night, and my hardware key was"
        " in the same bag. Who do I have to tell, and how quickly?",
        {"policies/security.md#reporting-a-security-concern",
         "policies/security.md#hardware-security-keys", "policies/security.md#devices"},
    ),
    (
        "After five years on the team I would like to take three months away to travel; does"
        " the company support a long break like that?",
        {"policies/leave.md#sabbaticals"},
    ),
    (
        "The main database machine died overnight and nothing took over by itself; we had to"
        " decide by hand which standby should become the new writer.",
        {"runbooks/database-failover.md#promote-the-replica",
         "runbooks/database-failover.md#manual-failover"},
    ),
    (
        "I need to add a new column to the runs table, and the deploy must not lock the table"
        " while the old code is still running.",
        {"howto/writing-migrations.md#adding-a-column",
         "howto/writing-migrations.md#the-expandcontract-rule",
         "howto/writing-migrations.md#rules-for-safe-migrations"},
    ),
    (
        "Yesterday's release broke checkout for several customers and we want to go back to the"
        " previous version as fast as possible.",
        {"howto/releasing.md#rolling-back-a-release"},
    ),
    (
        "Can I claim a monitor and a proper chair for working from home, and is there a limit"
        " on how much?",
        {"policies/expenses.md#home-office-setup"},
    ),
    (
        "Before we switch the new scheduler on for everybody, I want to turn it on for a few"
        " tenants first and watch the error rate.",
        {"howto/feature-flags.md#rolling-out", "howto/releasing.md#canary"},
    ),
    (
        "The edge certificate expired this morning because the automatic renewal silently"
        " failed, and browsers now show warnings.",
        {"runbooks/certificate-rotation.md#when-renewal-fails"},
    ),
    (
        "Jobs are piling up faster than the workers can take them and customers see their runs"
        " waiting for an hour; should we just add more workers?",
        {"runbooks/queue-backlog.md#scale-the-worker-pool",
         "runbooks/queue-backlog.md#is-the-backlog-growing-or-draining",
         "runbooks/queue-backlog.md#remedies", "runbooks/queue-backlog.md#are-workers-healthy"},
    ),
    (
        "For the offsite in Amsterdam, should I book a train or a flight, and which class am I"
        " allowed?",
        {"policies/travel.md#trains-before-planes", "policies/travel.md#class-of-travel"},
    ),
]  # fmt: skip
HEAD = "# Scratch\n\n## Questions\n\n"
FORMS = {
    "in paragraph": lambda q: f"{HEAD}{q} See [the guidance](",
    "next paragraph": lambda q: f"{HEAD}{q}\n\nSee [the guidance](",
    "list under text": lambda q: f"{HEAD}{q}\n\n- [the guidance](",
}
WS: dict = {}


@pytest.fixture(scope="module")
def ws(tmp_path_factory, request) -> Path:
    return indexed_copy(tmp_path_factory, "context", request)


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    WS["ws"] = ws
    await initialize(lsp_client, ws)
    await wait_ready(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def hits(client: LanguageClient, form: str) -> list[bool]:
    ws: Path = WS["ws"]
    out = []
    for n, (question, wanted) in enumerate(NOTES):
        text = FORMS[form](question)
        path = ws / "handbook" / "notes" / f"scratch-{form.replace(' ', '-')}-{n}.md"
        u = open_doc(client, path, text)
        lines = text.split("\n")
        res = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=u),
                position=types.Position(line=len(lines) - 1, character=len(lines[-1])),
            )
        )
        items = res.items if isinstance(res, types.CompletionList) else res or []
        first = sorted(items, key=lambda i: i.sort_text or i.label)[:10]
        offered = [
            i.text_edit.new_text.rstrip(")")
            for i in first
            if isinstance(i.text_edit, types.TextEdit)
        ]
        out.append(any(o.endswith(w) for o in offered for w in wanted))
    return out


@pytest.mark.parametrize("form", list(FORMS))
async def test_a_relevant_section_is_offered(client: LanguageClient, form: str) -> None:
    got = await hits(client, form)
    missed = [n for n, ok in enumerate(got) if not ok]
    print(
        f"\n{form}: {sum(got)}/{len(got)} notes with a relevant section in the first 10 offers"
        f" (missed: {missed})"
    )
    assert sum(got) >= 8, got
