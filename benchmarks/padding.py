"""Padding waste of the model's batches: tokens padded per real token (issue 41).

    python -m benchmarks.padding INDEX.sqlite [INDEX.sqlite ...] [--batches 8,32] [--json OUT]

Reads every text an index embeds (its chunks and passages, as the store lists
them: chunks first, in file order) and counts its tokens with the bundled
model's tokenizer, truncated at the model's window as the encoder truncates.
A batch of ``b`` texts is padded to its longest text, so its waste is
``longest * n - sum(tokens)``; reported per corpus as padded tokens / real
tokens for three orders of the same texts:

* ``as stored``: the store's order, cut into batches of ``b`` (no sorting at all);
* ``per call``: calls of ``EMBED_BATCH`` texts in the store's order, each sorted
  by the encoder (``OnnxEncoder.encode``: longest first) before it is cut into
  batches of ``b`` -- what sorting inside the encoder alone gives;
* ``engine``: the engine's order (``EmbedQueue``: the whole pending set sorted by
  kind, then tokens), then the encoder's: what mdseek does on a first index.

No model call: the tokenizer only, so the load of the machine changes nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mdseek.index.store import survey

from .output import emit


def waste(lengths: list[int], batch: int) -> int:
    """Padded tokens when ``lengths`` are cut, in this order, into batches of ``batch``."""
    out = 0
    for i in range(0, len(lengths), batch):
        part = lengths[i : i + batch]
        out += max(part) * len(part) - sum(part)
    return out


def orders(lengths: list[int], kinds: list[int], call: int) -> dict[str, list[int]]:
    """The three orders of the module's docstring."""
    per_call: list[int] = []
    for i in range(0, len(lengths), call):
        per_call += sorted(lengths[i : i + call], reverse=True)
    engine_order = sorted(range(len(lengths)), key=lambda i: (kinds[i], lengths[i]))
    engine: list[int] = []
    for i in range(0, len(engine_order), call):
        engine += sorted((lengths[j] for j in engine_order[i : i + call]), reverse=True)
    return {"as stored": lengths, "per call": per_call, "engine": engine}


def main(argv: list[str] | None = None) -> int:
    from mdseek.index.engine.embed_queue import EMBED_BATCH
    from mdseek.index.model.embed import Embedder, EmbedSettings

    ap = argparse.ArgumentParser(prog="python -m benchmarks.padding", description=__doc__)
    ap.add_argument("index", nargs="+", type=Path)
    ap.add_argument("--batches", default="8,32")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    emb = Embedder(settings=EmbedSettings(precision="fp32"))
    window = int(emb.load().max_seq_length)
    result: dict = {"window": window, "texts_per_call": EMBED_BATCH, "corpora": {}}
    for index in args.index:
        rows = survey.texts_in_store_order(index)
        lengths = [min(n, window) for n in emb.token_counts([t for t, _ in rows])]
        kinds = [k for _, k in rows]
        real = sum(lengths)
        per: dict = {"texts": len(rows), "tokens": real}
        for name, order in orders(lengths, kinds, EMBED_BATCH).items():
            for b in batches:
                per[f"{name}, batch {b}"] = round(waste(order, b) / real, 4)
        result["corpora"][index.parent.name] = per
    return emit(result, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
