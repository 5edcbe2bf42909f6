"""Coverage: the share of a corpus's body tokens that fall inside some vector's window.

For one embedded text ``prefix + body`` the model reads ``window`` tokens,
special tokens included; body tokens past that are ignored. A chunker that
keeps every embedded text inside the window covers 100%; one vector per
document, or fixed-size character chunks, usually do not. The same function
measures all three, with the same tokenizer.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..model.tokenizer import ModelTokenizer
from .chunk import Chunk, Chunker
from .files import FileFilter, display_path, read_found, scan

log = logging.getLogger(__name__)


@dataclass
class Coverage:
    body_tokens: int = 0
    covered_tokens: int = 0
    vectors: int = 0

    @property
    def fraction(self) -> float:
        return 1.0 if self.body_tokens == 0 else self.covered_tokens / self.body_tokens

    def add(self, other: Coverage) -> None:
        self.body_tokens += other.body_tokens
        self.covered_tokens += other.covered_tokens
        self.vectors += other.vectors


def window_coverage(tok: ModelTokenizer, pieces: Iterable[tuple[str, str]]) -> Coverage:
    """Coverage of (prefix, body) pairs, each embedded as ``prefix + body``.

    Exact for a text that fits: when the real tokenizer counts ``prefix + body``
    within the window, every body token is covered (no arithmetic on separate
    counts, which a tokenizer need not add up). For a text that does not fit,
    the model reads ``window`` tokens: the body tokens after the prefix's, up
    to that limit, are covered."""
    pieces = list(pieces)
    cov = Coverage()
    if not pieces:
        return cov
    specials = tok.special_overhead()
    whole = tok.count_many([p + b for p, b in pieces])
    prefixes = tok.count_many([p for p, _ in pieces])
    bodies = tok.count_many([b for _, b in pieces])
    for n, p, b in zip(whole, prefixes, bodies, strict=True):
        body = b - specials
        cov.body_tokens += body
        if n <= tok.window:
            cov.covered_tokens += body
        else:
            room = tok.window - p  # p includes [CLS] and [SEP]: room left for body tokens
            cov.covered_tokens += max(0, min(body, room))
        cov.vectors += 1
    return cov


def chunk_parts(chunk: Chunk) -> tuple[str, str]:
    """(prefix, body) of a chunk's embedded text as the chunker joined them: the
    breadcrumb and a blank line (a shortened breadcrumb when the full one
    would take over half the window), then the chunk's text."""
    full = chunk.breadcrumb + "\n\n"
    emb = chunk.embedding_text
    if emb.startswith(full):
        return full, emb[len(full) :]
    head, sep, rest = emb.partition("\n\n")
    return head + sep, rest


def chunk_coverage(tok: ModelTokenizer, chunks: Iterable[Chunk]) -> Coverage:
    """Coverage of chunks as they are embedded."""
    return window_coverage(tok, (chunk_parts(c) for c in chunks))


def coverage_of(root: Path, tok: ModelTokenizer, flt: FileFilter) -> dict:
    """Coverage of every indexed file under ``root`` as mdseek chunks it, per file
    and in all (``mdseek coverage DIR``; the benchmarks' coverage table)."""
    from .parse import parse_bytes

    chunker = Chunker(tok)
    total = Coverage()
    files = {}
    for f in scan(root, flt):
        try:
            doc = parse_bytes(read_found(f, flt.max_file_size), f.rel)
            chunks = chunker.chunk(doc)
        except Exception as exc:  # one bad file costs only itself
            log.warning("skipping %s: %s", display_path(f.rel), exc)
            continue
        cov = chunk_coverage(tok, chunks)
        total.add(cov)
        files[display_path(f.rel)] = {
            "coverage": round(cov.fraction, 6),
            "body_tokens": cov.body_tokens,
            "covered_tokens": cov.covered_tokens,
            "chunks": cov.vectors,
            "max_tokens": max((c.tokens for c in chunks), default=0),
        }
    return {
        "coverage": round(total.fraction, 6),
        "body_tokens": total.body_tokens,
        "covered_tokens": total.covered_tokens,
        "chunks": total.vectors,
        "files": files,
        "window": tok.window,
        "model": tok.name,
    }
