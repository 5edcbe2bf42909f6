"""Small read-only figures about an index that the front ends report."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine import Engine


def window_fraction(engine: Engine) -> float:
    """Fraction of the index's chunks whose embedded text fits the model's
    window (tokens <= window): 1.0 when the chunker did its job (and for an
    empty index)."""
    window = engine.models.tokenizer.window
    store = engine.store

    def fraction(db: sqlite3.Connection) -> float:
        total, fit = db.execute(
            "SELECT count(*), coalesce(sum(tokens <= ?), 0) FROM chunks", (window,)
        ).fetchone()
        return 1.0 if not total else round(fit / total, 6)

    return store.cached(f"window fraction {window}", fraction)
