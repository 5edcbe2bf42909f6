"""Language-server latency on the fixture workspace, over real stdio.

    .venv/bin/python benchmarks/lsp_latency.py [--repeats 10] [--fresh]

Measures, with pygls' own LSP client driving ``python -m mdseek serve``:

* initialize → first answer: time from sending ``initialize`` until the first
  ``workspace/symbol`` answer (with results) comes back; also until the first
  *hybrid* answer (model loaded, vectors ready);
* didSave → index current: a one-line edit written to disk, ``didSave`` sent,
  until ``mdseek/status`` reports the update done (includes the ~200 ms save
  debounce); median over ``--repeats`` edits;
* workspace/symbol latency: median and p95 over the fixture queries (each sent
  as a user types it would end: the full query).

By default the workspace copy keeps a pre-built index (the steady state when
an editor opens a folder it has seen before); ``--fresh`` starts with no index
(the first open: every chunk is embedded, which dominates).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
QUERIES = json.loads((REPO / "tests/fixture_queries.json").read_text())["queries"]


def plain(obj):
    if hasattr(obj, "_asdict"):
        return {k: plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


def caps() -> types.ClientCapabilities:
    return types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(configuration=False),
    )


def make_client() -> LanguageClient:
    client = LanguageClient("mdseek-bench", "0")

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def _create(params):  # accept the server's progress tokens
        return None

    @client.feature(types.PROGRESS)
    def _progress(params):
        return None

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def _show(params):
        print(f"  server says: {params.message}", file=sys.stderr)

    return client


async def status(client) -> dict:
    return plain(await client.protocol.send_request_async("mdseek/status", {}))


async def wait_state(client, states: tuple[str, ...], timeout: float = 600) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = await status(client)
        if st["state"] in states and not st["updates_pending"]:
            return st
        await asyncio.sleep(0.05)
    raise SystemExit(f"server not {states} after {timeout}s")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, round(p / 100 * (len(xs) - 1))))
    return xs[k]


async def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeats", type=int, default=10, help="one-line edits to time (default 10)")
    ap.add_argument("--fresh", action="store_true", help="start without an index (first open)")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="mdseek-bench-"))
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")  # the index (and the server's) stay in tmp
    ws = tmp / "ws"
    shutil.copytree(FIXTURES, ws, ignore=shutil.ignore_patterns(".mdseek"))
    if not args.fresh:
        print("pre-building the index (mdseek index) ...", file=sys.stderr)
        from mdseek.index.engine.engine import Engine

        eng = Engine(ws)
        eng.index()
        eng.close()

    client = make_client()
    await client.start_io(sys.executable, "-m", "mdseek", "serve", "--stdio")
    uri = ws.as_uri()
    t0 = time.perf_counter()
    await client.initialize_async(
        types.InitializeParams(
            capabilities=caps(),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="ws")],
        )
    )
    t_init = time.perf_counter() - t0
    client.initialized(types.InitializedParams())
    query = next(q["query"] for q in QUERIES if q["kind"] == "keyword")
    first = None
    while first is None:
        res = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
        if res:
            first = time.perf_counter() - t0
        else:
            await asyncio.sleep(0.02)
    st = await wait_state(client, ("ready", "lexical-only"))
    t_ready = time.perf_counter() - t0

    # workspace/symbol latency
    lat = []
    for q in QUERIES:
        s = time.perf_counter()
        await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=q["query"]))
        lat.append((time.perf_counter() - s) * 1000)

    # didSave -> index current, one-line edits
    path = ws / "handbook/runbooks/database-failover.md"
    text = path.read_text()
    lines = text.split("\n")
    target = next(i for i, ln in enumerate(lines) if ln.startswith("Pick the replica"))
    saves = []
    for n in range(args.repeats):
        lines[target] = lines[target].rstrip() + f" edit{n}"
        path.write_text("\n".join(lines))
        before = (await status(client))["updates_done"]
        s = time.perf_counter()
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=path.as_uri())
            )
        )
        while True:
            cur = await status(client)
            if cur["updates_done"] > before and cur["updates_pending"] == 0:
                break
            await asyncio.sleep(0.005)
        saves.append((time.perf_counter() - s) * 1000)
    final = await status(client)

    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"workspace: {st['files']} files, {st['chunks']} chunks, state {st['state']}, "
        f"{'fresh (no index)' if args.fresh else 'pre-built index'}"
    )
    print(f"initialize answered (incl. startup) {t_init * 1000:8.0f} ms")
    print(f"initialize -> first symbol answer     {first * 1000:8.0f} ms")
    print(f"initialize -> ready (hybrid)          {t_ready * 1000:8.0f} ms")
    print(
        f"didSave -> index current (1-line edit, n={len(saves)}): median {statistics.median(saves):6.0f} ms, "
        f"min {min(saves):.0f} ms, max {max(saves):.0f} ms (includes the 200 ms debounce)"
    )
    print(
        f"workspace/symbol (n={len(lat)}): median {statistics.median(lat):6.1f} ms, p95 {pct(lat, 95):6.1f} ms"
    )
    print(
        f"texts embedded by the server: {final['embedded_total']} (one per edit expected: {args.repeats})"
    )


if __name__ == "__main__":
    asyncio.run(main())
