"""Models other than the default: their prompts, exactly what sentence-transformers
computes with them on both backends, and the models mdseek refuses.

The models are tiny random BERTs built here (tests/tiny_models.py); nothing
is downloaded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mdseek.index.model.embed import Embedder, EmbedSettings
from mdseek.index.model.model import ModelUnavailable, model_id, model_prompts, resolve_model
from tests.tiny_models import build_embedder

# The prompts sentence-transformers' encode_query / encode_document apply, by hand.
MODELS = {
    # e5 style: "passage" is the document prompt; CLS pooling; a 40-token window
    "cls": dict(
        pooling="cls", max_seq_length=40, prompts={"query": "query: ", "passage": "passage: "}
    ),
    # nomic style; mean pooling; a 24-token window, no Normalize module
    "mean": dict(
        pooling="mean",
        max_seq_length=24,
        prompts={"query": "search_query: ", "document": "search_document: "},
        normalize=False,
    ),
    # one prompt for everything, through default_prompt_name
    "default": dict(
        pooling="mean",
        max_seq_length=64,
        prompts={"retrieval": "Represent this text: "},
        default_prompt_name="retrieval",
    ),
}
EXPECTED = {
    "cls": ("query: ", "passage: "),
    "mean": ("search_query: ", "search_document: "),
    "default": ("Represent this text: ", "Represent this text: "),
}
TEXTS = [
    "database failover",
    "How do I rotate the TLS certificate on the ingress gateway?",
    "# Payroll\n\nSalaries are paid on the 25th of each month; contractors invoice monthly.",
    "Le café est servi à 10 h. 東京のオフィスは9時に開きます。",
    "The quick brown fox jumps over the lazy dog. " * 12,  # past every window here
]
DEFAULT_ID = "sentence-transformers/all-MiniLM-L6-v2@4833883622a7"  # as stored by earlier releases


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny-models")
    return {name: build_embedder(root / name, **spec) for name, spec in MODELS.items()}


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)


def test_prompts_are_read_as_sentence_transformers_picks_them(tiny):
    for name, (query, document) in EXPECTED.items():
        p = model_prompts(str(tiny[name]))
        assert (p.query, p.document) == (query, document), name


def test_default_model_has_no_prompts_and_keeps_its_id():
    emb = Embedder(None, settings=EmbedSettings(precision="fp32"))
    assert (emb.prompts.query, emb.prompts.document) == ("", "")
    assert emb.model_id == DEFAULT_ID  # an fp32 index is not re-embedded
    # int8 (the default with the model wheel's copy) is another id (its vectors are others)
    assert Embedder(None, settings=EmbedSettings(precision="int8")).model_id == (
        DEFAULT_ID + "#onnx-int8"
    )


@pytest.mark.parametrize("backend", ["onnx", "torch"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_vectors_equal_sentence_transformers_with_the_right_prompt(tiny, name, backend):
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(tiny[name]), device="cpu")
    query, document = EXPECTED[name]
    emb = Embedder(str(tiny[name]), settings=EmbedSettings(backend=backend, threads=1))
    docs = emb.encode(TEXTS)
    queries = np.stack([emb.encode_query(t) for t in TEXTS])
    assert emb.backend == backend
    want_docs = st.encode(TEXTS, prompt=document, convert_to_numpy=True)
    want_queries = st.encode(TEXTS, prompt=query, convert_to_numpy=True)
    assert _cos(docs, want_docs).min() >= 0.9999
    assert _cos(queries, want_queries).min() >= 0.9999
    # The comparison can tell: the same texts without the prompt are other vectors.
    bare = st.encode(TEXTS, prompt="", convert_to_numpy=True)
    assert _cos(docs, bare).min() < 0.999


def test_prompts_are_part_of_the_model_id_and_overridable(tiny):
    path = str(tiny["cls"])
    base = model_id(resolve_model(path))
    own = Embedder(path, settings=EmbedSettings())
    same = Embedder(path, settings=EmbedSettings(query_prompt="query: "))
    other = Embedder(path, settings=EmbedSettings(document_prompt=""))
    assert own.model_id.startswith(base + "#prompts-")
    assert same.model_id == own.model_id  # the same prompts: the same vectors
    assert other.model_id != own.model_id
    assert (other.prompts.query, other.prompts.document) == ("query: ", "")
    none = Embedder(path, settings=EmbedSettings(query_prompt="", document_prompt=""))
    assert none.model_id == base


def test_env_overrides_the_prompts(tiny, monkeypatch):
    monkeypatch.setenv("MDSEEK_QUERY_PROMPT", "question: ")
    monkeypatch.setenv("MDSEEK_DOCUMENT_PROMPT", "")
    s = EmbedSettings.from_env()
    p = s.prompts_for(str(tiny["cls"]))
    assert (p.query, p.document) == ("question: ", "")


def test_a_prompt_change_reembeds_and_never_mixes(tiny, tmp_path):
    from mdseek.index.engine.engine import Engine

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.md").write_text("# Payroll\n\nSalaries are paid monthly.\n\n## Taxes\n\nWithheld.\n")
    db = tmp_path / "index.sqlite"
    path = str(tiny["cls"])
    first = Engine(ws, index_path=db, model=path, embed=EmbedSettings(threads=1))
    first.index()
    n = first.store.chunks.count()
    assert n >= 2 and first.store.vectors.pending_count(first.models.model_id) == 0
    first.close()
    second = Engine(ws, index_path=db, model=path, embed=EmbedSettings(document_prompt="doc: "))
    assert second.models.model_id != first.models.model_id
    assert (
        second.store.vectors.pending_count(second.models.model_id) == n
    )  # every chunk embedded again
    second.close()


def test_chunks_leave_room_for_the_document_prompt(tiny, tmp_path):
    from mdseek.index.engine.engine import Engine

    ws = tmp_path / "ws"
    ws.mkdir()
    path = str(tiny["mean"])  # a 24-token window
    plain = Engine(ws, index_path=tmp_path / "a.sqlite", model=path,
                   embed=EmbedSettings(query_prompt="", document_prompt=""))  # fmt: skip
    prompted = Engine(ws, index_path=tmp_path / "b.sqlite", model=path)
    # "search_document: " is 4 tokens of this vocabulary: search _ document :
    assert plain.models.tokenizer.window == 24
    assert prompted.models.tokenizer.window == 20
    plain.close()
    prompted.close()


# -- models mdseek refuses ---------------------------------------------------


def _copy(tiny, tmp_path, name="cls") -> Path:
    dest = tmp_path / "model"
    shutil.copytree(tiny[name], dest)
    return dest


def _load_error(path: Path, **settings) -> str:
    emb = Embedder(str(path), settings=EmbedSettings(backend="torch", **settings))
    with pytest.raises(ModelUnavailable) as err:
        emb.load()
    msg = str(err.value)
    assert "\n" not in msg
    return msg


def test_unknown_pooling_is_refused(tiny, tmp_path):
    m = _copy(tiny, tmp_path)
    cfg = m / "1_Pooling" / "config.json"
    data = json.loads(cfg.read_text())
    data["pooling_mode"] = "attention_weighted"
    cfg.write_text(json.dumps(data))
    assert "unknown pooling attention_weighted" in _load_error(m)


def test_custom_module_is_refused(tiny, tmp_path):
    m = _copy(tiny, tmp_path)
    mods = json.loads((m / "modules.json").read_text())
    mods[1]["type"] = "my_package.SecretPooling"
    (m / "modules.json").write_text(json.dumps(mods))
    assert "needs custom code (module my_package.SecretPooling)" in _load_error(m)


def test_remote_code_is_refused(tiny, tmp_path):
    m = _copy(tiny, tmp_path)
    cfg = json.loads((m / "config.json").read_text())
    cfg["auto_map"] = {"AutoModel": "modeling_evil.EvilModel"}
    (m / "config.json").write_text(json.dumps(cfg))
    assert "needs trust_remote_code" in _load_error(m)


def test_pickle_weights_need_an_opt_in(tiny, tmp_path):
    import torch
    from safetensors.torch import load_file

    m = _copy(tiny, tmp_path)
    torch.save(load_file(m / "model.safetensors"), m / "pytorch_model.bin")
    (m / "model.safetensors").unlink()
    msg = _load_error(m)
    assert "pytorch_model.bin" in msg and "pickle" in msg and "--allow-pickle" in msg
    emb = Embedder(str(m), settings=EmbedSettings(backend="torch", allow_pickle=True))
    want = Embedder(str(tiny["cls"]), settings=EmbedSettings(backend="torch"))
    assert _cos(emb.encode(TEXTS), want.encode(TEXTS)).min() >= 0.9999


def test_server_settings_keep_a_prompt_verbatim(tiny):
    from mdseek.lsp.server.config import parse_settings

    s, problems = parse_settings({"mdseek": {"queryPrompt": "query: ", "documentPrompt": ""}})
    assert problems == []
    p = s.embed_settings().prompts_for(str(tiny["cls"]))
    assert (p.query, p.document) == ("query: ", "")  # trailing space kept; "" = no prompt
    _, problems = parse_settings({"queryPrompt": 3})
    assert problems == ["queryPrompt must be a string (got 3); using the default None"]


def test_the_bundled_default_model_passes_the_checks(monkeypatch):
    from mdseek.index.model.model import check_usable, default_model_path

    folder = default_model_path()
    assert (folder / "model.safetensors").exists()  # what lets it load without --allow-pickle
    check_usable(str(folder))  # raises if refused


def test_a_workspace_setting_cannot_allow_pickle(monkeypatch):
    from mdseek.lsp.server.config import parse_settings

    monkeypatch.delenv("MDSEEK_ALLOW_PICKLE", raising=False)
    s, _ = parse_settings({"mdseek": {"allowPickle": True, "allow_pickle": True}})
    assert s.embed_settings().allow_pickle is False
