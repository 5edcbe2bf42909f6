"""The ONNX Runtime backend: a real export of the real model (once per test
session, in the session's cache), checked against torch, and the query path
that never imports torch."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading

import numpy as np
import pytest
from sandbox import server_env

from mdseek.index.engine.engine import Engine
from mdseek.index.model import onnx_export, packaged
from mdseek.index.model.embed import Embedder, EmbedSettings
from mdseek.index.model.model import model_cache_dir
from mdseek.index.model.onnx_encoder import read_manifest

from conftest import workspace_with_index


@pytest.fixture(scope="module")
def onnx_embedder():
    emb = Embedder(settings=EmbedSettings(backend="onnx", precision="fp32"))
    assert emb.available() and emb.backend == "onnx", emb.fallback_reason
    return emb


@pytest.fixture(scope="module")
def exported(onnx_embedder):
    """The default model exported into the (test session's) user cache, as
    any other model is on first use: the model wheel's folder is not used here."""
    return onnx_export.ensure_fp32(onnx_embedder.resolved, onnx_embedder.model_id)


@pytest.fixture
def no_model_wheel(monkeypatch):
    """As if the model wheel were not installed (the torch install without it)."""
    monkeypatch.setattr(packaged, "_candidates", lambda: [])
    packaged.forget()
    yield
    monkeypatch.undo()
    packaged.forget()


def test_export_is_cached_with_its_verification(onnx_embedder, exported):
    folder = model_cache_dir(onnx_embedder.model_id)
    assert exported == folder
    m = read_manifest(folder)
    assert m and m["status"] == "ok" and m["model_id"] == onnx_embedder.model_id
    assert m["verify"]["min_cosine_vs_torch"] >= onnx_export.MIN_COSINE
    assert m["window"] == 256 and m["dim"] == 384
    for name in ("model.onnx", "model.onnx.data", "tokenizer.json", "sentence_bert_config.json"):
        assert (folder / name).stat().st_size > 0, name
    assert not [p for p in folder.parent.iterdir() if ".tmp-" in p.name]  # no leftovers
    assert not list(folder.glob("plain.onnx*")) and not list(folder.glob("traced.onnx*"))


def test_export_is_the_fused_graph(onnx_embedder, exported):
    """One Attention op per layer (not torch's decomposed attention), embedding
    and skip LayerNorms fused: the graph onnxruntime's optimizer makes."""
    import onnx

    folder = model_cache_dir(onnx_embedder.model_id)
    m = read_manifest(folder)
    ops = [
        n.op_type
        for n in onnx.load(str(folder / "model.onnx"), load_external_data=False).graph.node
    ]
    assert ops.count("Attention") == 6 == m["fused"]["Attention"], m["fused"]
    assert ops.count("SkipLayerNormalization") == 12 and "Softmax" not in ops and "IsNaN" not in ops


def test_old_format_export_is_redone(tmp_path, monkeypatch, onnx_embedder):
    """A folder cached by an older mdseek (format 3: the unfused graph) is
    re-exported, not served."""
    import shutil

    monkeypatch.setenv("MDSEEK_CACHE_DIR", str(tmp_path / "cache"))
    folder = model_cache_dir(onnx_embedder.model_id)
    src = onnx_embedder.load().folder
    assert folder != src
    folder.parent.mkdir(parents=True)
    shutil.copytree(src, folder)
    old = json.loads((folder / "manifest.json").read_text())
    old.update(format=3, fused=None)
    (folder / "manifest.json").write_text(json.dumps(old))
    assert read_manifest(folder) is None
    assert onnx_export.ensure_fp32(onnx_embedder.resolved, onnx_embedder.model_id) == folder
    m = read_manifest(folder)
    assert m and m["status"] == "ok" and m["fused"]["Attention"] == 6
    assert m["verify"]["min_cosine_vs_torch"] >= onnx_export.MIN_COSINE


def test_onnx_agrees_with_torch_on_real_chunks(onnx_embedder, indexed_ws):
    """Chunk texts of the handbook (mixed lengths, so mixed padding), both backends."""
    rows = indexed_ws.store.db.execute("SELECT embedding_text FROM chunks ORDER BY id").fetchall()
    texts = [r[0] for r in rows][::4][:60] + [
        "database failover",
        "how do I get reimbursed for a taxi",
    ]
    got = onnx_embedder.encode(texts)
    ref = Embedder(settings=EmbedSettings(backend="torch")).encode(texts)
    assert got.shape == ref.shape and got.dtype == np.float32
    cos = (got * ref).sum(axis=1)
    assert cos.min() >= 0.9999, sorted(cos)[:5]
    # batching and input order change nothing: each text alone gives the same vector
    alone = np.stack([onnx_embedder.encode([t])[0] for t in texts[::-1][:12]])
    assert np.allclose(alone, got[::-1][:12], atol=1e-5)


def test_switching_backend_never_reembeds(tmp_path, golden_index):
    ws = workspace_with_index(tmp_path / "ws", golden_index)
    for backend in ("torch", "onnx"):
        eng = Engine(ws, embed=EmbedSettings(backend=backend, precision="fp32"))
        rep = eng.index()
        assert rep.embedded == 0 and rep.pending == 0, backend
        resp = eng.search("what do I do when the main database machine dies", limit=3)
        assert resp.mode == "hybrid" and eng.models.embedder.backend == backend
        assert "database-failover" in resp.results[0].path
        eng.close()


def test_cold_search_imports_no_torch(tmp_path, golden_index, onnx_embedder):
    """The command line answers a hybrid query on an existing index without torch."""
    ws = workspace_with_index(tmp_path / "ws", golden_index)
    code = (
        "import sys, json\n"
        "from mdseek.lsp.cli import main\n"
        f"rc = main(['search', {str(ws)!r}, 'rotate the TLS certificate', '--json', '--limit', '3'])\n"
        "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules)\n"
        "print(json.dumps({'rc': rc, 'heavy': heavy}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=server_env()
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    status = json.loads(lines[-1])
    results = json.loads("\n".join(lines[:-1]))["results"]
    assert status == {"rc": 0, "heavy": []}, out.stderr
    assert results and any(r["dense_rank"] for r in results)


def test_rejected_export_is_remembered_and_torch_serves(
    tmp_path, monkeypatch, caplog, no_model_wheel
):
    """Two first exports at once export once; a check that fails leaves a
    manifest saying why, later loads fall back to torch and say so once."""
    monkeypatch.setenv("MDSEEK_CACHE_DIR", str(tmp_path / "cache"))
    emb = Embedder(settings=EmbedSettings(backend="onnx", threads=1, precision="fp32"))
    real = onnx_export.export_fp32
    calls = []

    def counted(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(onnx_export, "export_fp32", counted)
    errors: list[str] = []

    def first_use():
        try:  # an impossible threshold: the real export, then a real rejection
            onnx_export.ensure_fp32(emb.resolved, emb.model_id, min_cosine=1.01)
        except onnx_export.ExportRejected as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=first_use) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(errors) == 2 and "min cosine" in errors[0], (calls, errors)
    m = read_manifest(model_cache_dir(emb.model_id))
    assert m and m["status"] == "rejected" and "min cosine" in m["reason"]
    with caplog.at_level(logging.WARNING):
        assert emb.available() and emb.backend == "torch"
        assert "min cosine" in (emb.fallback_reason or "")
        again = Embedder(settings=EmbedSettings(backend="onnx", precision="fp32"))
        assert again.available() and again.backend == "torch"
    assert len(calls) == 1  # the rejection is not re-tried
    said = [r for r in caplog.records if "embedding with torch" in r.getMessage()]
    assert len(said) == 1
    assert emb.model_id == again.model_id == Embedder().model_id  # same vectors, same id


def test_thread_setting(monkeypatch):
    monkeypatch.setenv("MDSEEK_THREADS", "1")
    monkeypatch.setenv("MDSEEK_BACKEND", "torch")
    s = EmbedSettings.from_env()
    assert s == EmbedSettings(backend="torch", threads=1) and s.n_threads == 1
    assert EmbedSettings.from_env(backend="onnx", threads=3) == EmbedSettings("onnx", 3)
    assert EmbedSettings().n_threads >= 1
    monkeypatch.setenv("MDSEEK_THREADS", "many")
    with pytest.raises(ValueError, match="MDSEEK_THREADS"):
        EmbedSettings.from_env()
    with pytest.raises(ValueError, match="backend"):
        EmbedSettings(backend="tpu")


def test_server_settings_choose_backend_and_threads(monkeypatch):
    from mdseek.lsp.server.config import parse_settings

    monkeypatch.delenv("MDSEEK_THREADS", raising=False)
    monkeypatch.delenv("MDSEEK_BACKEND", raising=False)
    s, problems = parse_settings({"mdseek": {"backend": "torch", "threads": 1}})
    assert problems == [] and s.embed_settings() == EmbedSettings("torch", 1)
    s, problems = parse_settings({"backend": "gpu", "threads": -2})
    assert len(problems) == 2 and s.embed_settings() == EmbedSettings()
    assert parse_settings({"threads": 2})[0].engine_key() != parse_settings({})[0].engine_key()


def test_engines_of_one_process_share_the_onnx_session(onnx_embedder):
    other = Embedder(
        settings=EmbedSettings(
            backend="onnx", threads=onnx_embedder.settings.n_threads, precision="fp32"
        )
    )
    assert other.load() is onnx_embedder.load()
