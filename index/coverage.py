"""Coverage: the share of a corpus's body tokens that fall inside some vector's window.

For one embedded text ``prefix + body`` the model reads ``window`` tokens,
special tokens included; body tokens past that are ignored. A chunker that
keeps every embedded text inside the window covers 100%; one vector per
document, or fixed-size character chunks, usually do not. The same function
measures all three, with the same tokenizer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .model import ModelTokenizer


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
    """Coverage of (prefix, body) pairs, each embedded as ``prefix + body``."""
    pieces = list(pieces)
    cov = Coverage()
    if not pieces:
        return cov
    specials = tok.special_overhead()
    prefixes = tok.count_many([p for p, _ in pieces])
    bodies = tok.count_many([b for _, b in pieces])
    for p, b in zip(prefixes, bodies, strict=True):
        body = b - specials
        room = tok.window - p  # p includes [CLS] and [SEP]: room left for body tokens
        cov.body_tokens += body
        cov.covered_tokens += max(0, min(body, room))
        cov.vectors += 1
    return cov
