"""Save -> searchable through the real server, for one-line edits in a big file.

    .venv/bin/python -m benchmarks.save_latency [--edits 20] [--file customizing.md]
                                                [--work DIR] [--json]

A workspace is made of the product docs (../shared/data/rhdh/docs, or the
fixtures when absent) and indexed once with ``mdseek index`` (kept in
``--work`` between runs when given). Then ``python -m mdseek serve`` is started
over stdio with pygls' own client, and each edit:

1. appends a unique word to one line of a paragraph of the big file (a
   different section each time), writes the file, sends ``didSave``;
2. polls ``mdseek/status`` every 5 ms until the update is done (written and
   the edited chunk embedded): **save -> searchable** (debounce included);
3. checks with ``mdseek/search`` that the word is found in the file (not
   timed: a search embeds its query, which would disturb the polling).

The server reports each update's own time split into parse+chunk, SQLite
writes and embedding (``last_update`` in ``mdseek/status``), so the total can
be judged with any embedding backend: non-embedding = total - embedding.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types

from .data import FIXTURES, data_dir
from .lsp_latency import make_client, pct, plain, wait_state


def make_workspace(work: Path, big: str, fixtures: bool = False) -> tuple[Path, Path]:
    ws = work / "ws"
    if ws.is_dir() and (ws / ".mdseek" / "index.sqlite").exists():
        found = list(ws.rglob(big))
        return ws, found[0] if found else max(ws.rglob("*.md"), key=lambda p: p.stat().st_size)
    d = data_dir()
    src = (
        d / "rhdh" / "docs"
        if not fixtures and d is not None and (d / "rhdh" / "docs").is_dir()
        else FIXTURES
    )
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(src, ws, ignore=shutil.ignore_patterns(".mdseek"))
    found = list(ws.rglob(big))
    target = found[0] if found else max(ws.rglob("*.md"), key=lambda p: p.stat().st_size)
    return ws, target


def editable_lines(path: Path) -> list[int]:
    """Lines of top-level paragraphs (not code, not headings), spread over the file."""
    from mdseek.index.text.parse import parse_bytes

    doc = parse_bytes(path.read_bytes(), path.name)
    lines = []
    for b in doc.blocks:
        if b.kind == "paragraph":
            lines.append(b.end_line - 1)
    return lines


async def search_finds(client, word: str, rel: str) -> bool:
    res = plain(
        await client.protocol.send_request_async("mdseek/search", {"query": word, "limit": 5})
    )
    return any(r["path"] == rel for r in res.get("results", []))


async def status(client) -> dict:
    return plain(await client.protocol.send_request_async("mdseek/status", {}))


async def run(args) -> dict:
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="mdseek-save-"))
    work.mkdir(parents=True, exist_ok=True)
    ws, big = make_workspace(work, args.file, getattr(args, "fixtures", False))
    rel = big.relative_to(ws).as_posix()
    from mdseek.index.engine.engine import Engine

    t0 = time.perf_counter()
    eng = Engine(ws)
    eng.index()
    n_chunks = len(eng.store.chunks.document_chunks(rel))
    eng.close()
    print(
        f"index ready in {time.perf_counter() - t0:.1f}s; {rel}: {n_chunks} chunks", file=sys.stderr
    )

    original = big.read_text()
    client = make_client()
    await client.start_io(sys.executable, "-m", "mdseek", "serve", "--stdio")
    uri = ws.as_uri()
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="ws")],
        )
    )
    client.initialized(types.InitializedParams())
    await wait_state(client, ("ready",))
    rng = random.Random(13)
    targets = editable_lines(big)
    rows = []
    try:
        for n in range(args.edits):
            lines = big.read_text().split("\n")
            line = targets[rng.randrange(len(targets))]
            word = f"zq{n}x{rng.randrange(10**6)}marker"
            lines[line] = lines[line].rstrip() + f" {word}"
            big.write_text("\n".join(lines))
            before = (await status(client))["updates_done"]
            s = time.perf_counter()
            client.text_document_did_save(
                types.DidSaveTextDocumentParams(
                    text_document=types.TextDocumentIdentifier(uri=big.as_uri())
                )
            )
            while True:
                st = await status(client)
                if st["updates_done"] > before and st["updates_pending"] == 0:
                    done = time.perf_counter() - s
                    break
                await asyncio.sleep(0.005)
            st = await status(client)  # the per-folder timings are read before the counters
            if not await search_finds(client, word, rel):
                raise SystemExit(f"edit {n}: {word!r} not found in {rel} after the update")
            last = (
                next(
                    (r.get("last_update") for r in st.get("roots", []) if r.get("last_update")),
                    None,
                )
                or {}
            )
            rows.append({"searchable_ms": round(done * 1000, 1), **last})
            print(f"  edit {n}: {rows[-1]}", file=sys.stderr)
            await asyncio.sleep(0.3)  # let the watcher-free server settle between saves
    finally:
        big.write_text(original)
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)

    def summary(key: str) -> dict | None:
        xs = [r[key] for r in rows if key in r]
        return (
            {"p50": round(statistics.median(xs), 1), "p95": round(pct(xs, 95), 1)} if xs else None
        )

    return {
        "file": rel,
        "chunks": n_chunks,
        "edits": len(rows),
        "searchable_ms": summary("searchable_ms"),
        "server_total_ms": summary("ms"),
        "server_chunk_ms": summary("chunk_ms"),
        "server_write_ms": summary("write_ms"),
        "server_embed_ms": summary("embed_ms"),
        "server_non_embed_ms": summary("non_embed_ms"),
        "rows": rows,
    }


def measure(
    work: Path, edits: int = 20, file: str = "customizing.md", fixtures: bool = False
) -> dict:
    """One measurement in ``work`` (kept: the index is reused), for the full run;
    ``fixtures``: on the fixture handbook (the quick run)."""
    res = asyncio.run(
        run(argparse.Namespace(edits=edits, file=file, work=str(work), fixtures=fixtures))
    )
    return {k: v for k, v in res.items() if k != "rows"}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--edits", type=int, default=20)
    ap.add_argument(
        "--file", default="customizing.md", help="the big file to edit (name under the docs)"
    )
    ap.add_argument("--work", help="scratch folder kept between runs (the index is reused)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    res = asyncio.run(run(args))
    if args.json:
        print(json.dumps(res, indent=2))
        return
    print(
        f"{res['file']}: {res['chunks']} chunks, {res['edits']} one-line edits, didSave over stdio"
    )
    for key, label in (
        ("searchable_ms", "save -> searchable (client)"),
        ("server_total_ms", "server: update total"),
        ("server_chunk_ms", "server: parse + chunk"),
        ("server_write_ms", "server: SQLite write"),
        ("server_embed_ms", "server: embedding"),
        ("server_non_embed_ms", "server: total - embedding"),
    ):
        v = res[key]
        if v:
            print(f"  {label:34} p50 {v['p50']:7.1f} ms   p95 {v['p95']:7.1f} ms")


if __name__ == "__main__":
    main()
