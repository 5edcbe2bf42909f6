"""Token counts of many texts at once (the first index of a big vault counts
every pending text): counted a slice at a time, every text counted once, in order."""

from __future__ import annotations

from mdseek.index.model.embed import Embedder, EmbedSettings
from mdseek.index.model.model import resolve_model
from mdseek.index.model.tokenizer import load_tokenizer


def test_counts_of_many_texts_cross_slices_in_order():
    # "word" is one token of the default model; [CLS] and [SEP] add two.
    texts = ["word " * (i % 300) for i in range(1100)]
    untruncated = [i % 300 + 2 for i in range(1100)]
    assert load_tokenizer(resolve_model(None)).count_many(texts) == untruncated
    enc = Embedder(settings=EmbedSettings(backend="onnx", threads=1)).load()
    assert enc.token_counts(texts) == [min(n, 256) for n in untruncated]  # the model's window
