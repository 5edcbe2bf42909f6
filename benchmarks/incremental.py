"""Incremental reindex: a one-line edit in the document with the most chunks,
reindexed, against re-embedding the whole document (what a per-document
indexer does)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from mdseek.index.engine.engine import Engine
from mdseek.index.store import survey

Log = Callable[[str], None]

# -- incremental --------------------------------------------------------------


def _editable_line(lines: list[str], start: int, end: int) -> int | None:
    """A prose line in [start, end): not a heading, fence, table, list marker or blank."""
    fence = False
    cands = []
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s.startswith("```") or s.startswith("~~~"):
            fence = not fence
            continue
        if start <= i < end and not fence and len(s) > 40 and s[0].isalpha():
            cands.append(i)
    return cands[len(cands) // 2] if cands else None


def incremental(src_root: Path, src_index: Path, work: Path, log: Log) -> dict:
    root = work / "docs"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for f in src_root.rglob("*.md"):
        dest = root / f.relative_to(src_root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest)
    index = work / "index.sqlite"
    survey.copy(src_index, index)
    eng = Engine(root, index_path=index)
    try:
        eng.models.embedder.load()
        rep0 = eng.index()  # nothing changed: the reconcile cost at startup
        # the document with the most chunks (the first by path among equals)
        rel, n_chunks = min(survey.chunks_per_document(index), key=lambda d: (-d[1], d[0]))
        chunks = eng.store.chunks.document_chunks(rel)
        mid = chunks[len(chunks) // 2]
        path = root / rel
        lines = path.read_text(encoding="utf-8").split("\n")
        line = _editable_line(lines, mid.start_line, mid.end_line)
        if line is None:
            line = _editable_line(lines, 0, len(lines))
        if line is None:
            raise RuntimeError(f"no prose line to edit in {rel}")
        lines[line] = lines[line].rstrip() + " This sentence was added by the benchmark."
        path.write_text("\n".join(lines), encoding="utf-8")
        rep = eng.index_file(path)
        # What a per-document indexer does: embed every chunk of the document again.
        texts = [c.embedding_text for c in eng.store.chunks.document_chunks(rel)]
        st = eng.models.embedder.load()
        t0 = time.perf_counter()
        st.encode(texts, eng.models.embedder.batch_size)
        whole = time.perf_counter() - t0
        out = {
            "document": rel,
            "document_chunks": n_chunks,
            "edited_line": line + 1,
            "chunks_embedded": rep.embedded,
            "chunks_rewritten": rep.chunks_written,
            "reindex_seconds": round(rep.seconds, 3),
            "embed_seconds": round(rep.embed_seconds, 3),
            "whole_document_embed_seconds": round(whole, 3),
            "speedup": round(whole / rep.seconds, 1) if rep.seconds else None,
            "unchanged_reconcile_seconds": round(rep0.seconds, 3),
            "unchanged_reconcile_files": rep0.files,
        }
        log(
            f"  incremental: {rel} ({n_chunks} chunks) one-line edit: {rep.embedded} embedded in"
            f" {rep.seconds:.2f}s vs {whole:.2f}s to re-embed the document ({out['speedup']}x);"
            f" no-change reconcile of {rep0.files} files {rep0.seconds:.2f}s"
        )
        return out
    finally:
        eng.close()
