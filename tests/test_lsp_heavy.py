"""One huge document never holds up another's request: work that grows with a
document runs off the server's event loop, and a cancelled request stops
(issue 40: 100,000 headings froze the server for 45 s; a file may now hold
MAX_HEADINGS, and one at that limit is the heavy document here)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from lsp_support import SERVER_CMD, initialize, make_client, open_doc, status, wait_ready
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import LanguageClient

from mdseek.index.text.parse import MAX_HEADINGS

pytestmark = pytest.mark.slow

HEADINGS = MAX_HEADINGS  # the most a file may hold (100,000 once: 45 s)


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "notes"
    ws.mkdir()
    (ws / "small.md").write_text("# Small\n\nSee [the target](target.md) for more.\n")
    (ws / "target.md").write_text("# Target\n\nWhat the target says.\n")
    return ws


@asynccontextmanager
async def served(ws: Path) -> AsyncIterator[LanguageClient]:
    """A language server started on ``ws``, initialised; shut down after."""
    client = make_client()
    await client.start_io(*SERVER_CMD)
    try:
        await initialize(client, ws)
        yield client
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_huge_outline_never_delays_a_small_hover(tmp_path: Path):
    ws = _ws(tmp_path)
    async with served(ws) as client:
        await wait_ready(client)
        # Open in the editor, never saved: only the requests below read it.
        huge = open_doc(client, ws / "huge.md", "".join(f"# h{i}\n" for i in range(HEADINGS)))
        small = open_doc(client, ws / "small.md")
        await status(client)  # both buffers are in before the requests

        def send(method: str, params: object) -> asyncio.Future:
            """Written to the server at once (so in this order), awaited later."""
            return asyncio.wrap_future(client.protocol.send_request(method, params))

        symbols = send(
            types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
            types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=huge)),
        )
        sent = time.monotonic()
        hovered = send(
            types.TEXT_DOCUMENT_HOVER,
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=small),
                position=types.Position(line=2, character=6),
            ),
        )
        await asyncio.wait({hovered}, timeout=1.0)  # not wait_for: it would cancel it
        took = time.monotonic() - sent
        assert hovered.done(), "no hover within 1 s"
        hover = hovered.result()
        assert hover is not None and "What the target says" in str(hover.contents)
        assert not symbols.done(), "the outline answered first"
        assert took < 1.0, f"the hover took {took:.2f} s"
        print(f"hover answered in {took:.3f} s beside a {HEADINGS:,}-heading outline")
        got = await asyncio.wait_for(symbols, timeout=300)
        assert len(got) == HEADINGS and got[-1].name == f"h{HEADINGS - 1}"


async def test_a_cancelled_outline_answers_cancelled(tmp_path: Path):
    ws = _ws(tmp_path)
    async with served(ws) as client:
        await wait_ready(client)
        before = (await status(client))["cancelled"]
        # sent right after the buffer: the outline parses it first (10,000
        # headings: a second or so), so the cancel below lands while it runs
        # (with the parse done before, a quiet machine answered before the cancel)
        huge = open_doc(client, ws / "huge.md", "".join(f"# h{i}\n" for i in range(HEADINGS)))
        fut = asyncio.wrap_future(
            client.protocol.send_request(
                types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
                types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=huge)),
                msg_id="outline-1",
            )
        )
        await status(client)  # answered after the outline's handler has started
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="outline-1"))
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(fut, timeout=60)
        assert (await status(client))["cancelled"] == before + 1


async def test_diagnostics_of_many_links_to_many_headings(tmp_path: Path):
    """Each link's anchor was looked for by a scan of the target's headings: a
    file of 10,000 headings and 20,000 links to anchors it lacks made 600
    million comparisons. Every link is checked, each broken one reported: 5,000
    broken and 5,000 good ones (the most a file's links are read: MAX_LINKS)."""
    ws = _ws(tmp_path)
    heads = "".join(f"## Part {i}\n\n" for i in range(HEADINGS))
    links = "".join(f"[see {i}](#nowhere-{i}) [ok](#part-{i % HEADINGS})\n\n" for i in range(5_000))
    async with served(ws) as client:
        await wait_ready(client)
        doc = open_doc(client, ws / "many.md", heads + links)
        report = await asyncio.wait_for(
            client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=doc))
            ),
            timeout=60,
        )
        broken = [d for d in report.items if d.message.startswith("No heading")]
        assert len(broken) == 5_000 and broken[0].message == "No heading '#nowhere-0' in many.md"
