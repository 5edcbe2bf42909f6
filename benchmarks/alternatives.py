"""Simple alternatives a user could build, measured beside mdseek: fixed-size
chunks, their token coverage against the model's window, and dense-only baselines."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mdseek.index.text.coverage import Coverage, window_coverage
from mdseek.index.text.files import FileFilter, scan
from mdseek.index.text.parse import parse_bytes

from .data import QrelSet
from .metrics import doc_id, score_runs

Log = Callable[[str], None]


def fixed_chunks(text: str, size: int = 1200) -> list[tuple[int, int]]:
    """Character spans of fixed-size chunks split on blank lines: paragraphs are packed
    greedily up to ``size`` characters; a longer paragraph is cut every ``size``."""
    spans: list[tuple[int, int]] = []
    paras = []
    pos = 0
    for m in re.finditer(r"\n[ \t]*\n", text):
        paras.append((pos, m.start()))
        pos = m.end()
    paras.append((pos, len(text)))
    cur: tuple[int, int] | None = None
    for a, b in paras:
        if not text[a:b].strip():
            continue
        while b - a > size:
            if cur:
                spans.append(cur)
                cur = None
            spans.append((a, a + size))
            a += size
        if cur and b - cur[0] <= size:
            cur = (cur[0], b)
        else:
            if cur:
                spans.append(cur)
            cur = (a, b)
    if cur:
        spans.append(cur)
    return spans


def coverage_table(roots: dict[str, Path], tok, log: Log) -> dict:
    """mdseek's chunker vs one vector per document vs 1,200-character chunks, same tokenizer."""
    from mdseek.index.text.coverage import coverage_of

    out = {}
    for name, root in roots.items():
        t0 = time.perf_counter()
        ours = coverage_of(root, tok, FileFilter())
        whole = Coverage()
        fixed = Coverage()
        for f in scan(root, FileFilter()):
            doc = parse_bytes(f.path.read_bytes(), f.rel)
            whole.add(window_coverage(tok, [("", doc.text)]))
            fixed.add(
                window_coverage(tok, [("", doc.text[a:b]) for a, b in fixed_chunks(doc.text)])
            )
        out[name] = {
            "files": len(ours["files"]),
            "mdseek": {
                "coverage": ours["coverage"],
                "vectors": ours["chunks"],
                "body_tokens": ours["body_tokens"],
            },
            "whole_document": {
                "coverage": round(whole.fraction, 6),
                "vectors": whole.vectors,
                "body_tokens": whole.body_tokens,
            },
            "fixed_1200_chars": {
                "coverage": round(fixed.fraction, 6),
                "vectors": fixed.vectors,
                "body_tokens": fixed.body_tokens,
            },
            "window": tok.window,
        }
        log(
            f"  coverage {name}: mdseek {ours['coverage'] * 100:.1f}%, whole doc {whole.fraction * 100:.1f}%,"
            f" 1200 chars {fixed.fraction * 100:.1f}% ({time.perf_counter() - t0:.1f}s)"
        )
    return out


def dense_baselines(
    root: Path, qrels: QrelSet, embedder, qvecs: dict[str, np.ndarray], log: Log
) -> dict:
    """Dense retrieval a user could build in an afternoon, with the same model:
    one vector per document, and one per 1,200-character chunk (max-pooled to
    documents). Document level only: neither returns sections."""
    docs = []
    for f in scan(root, FileFilter()):
        doc = parse_bytes(f.path.read_bytes(), f.rel)
        docs.append((doc_id(f.rel), doc))
    out = {}
    t0 = time.perf_counter()
    # One vector per whole document (the model reads its first window of tokens).
    mat = embedder.encode([d.text for _, d in docs])
    runs = {}
    for qid in qrels.queries:
        order = np.argsort(-(mat @ qvecs[qid]))
        runs[qid] = [(docs[i][0], 0, docs[i][1].line_count) for i in order[:100]]
    res = score_runs(runs, qrels, False)
    res["vectors"] = len(docs)
    out["whole_document"] = res
    # Fixed 1,200-character chunks.
    pieces = []
    for stem, d in docs:
        for a, b in fixed_chunks(d.text):
            pieces.append((stem, d.offset_line(a), d.offset_line(max(a, b - 1)) + 1, d.text[a:b]))
    mat = embedder.encode([p[3] for p in pieces])
    runs = {}
    for qid in qrels.queries:
        order = np.argsort(-(mat @ qvecs[qid]))[:300]
        runs[qid] = [(pieces[i][0], pieces[i][1], pieces[i][2]) for i in order]
    res = score_runs(runs, qrels, False)
    res["vectors"] = len(pieces)
    out["fixed_1200_chars"] = res
    log(
        f"  dense baselines: {len(docs)} + {len(pieces)} vectors in {time.perf_counter() - t0:.0f}s"
    )
    return out
