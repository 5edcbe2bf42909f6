"""int8 by default for the bundled model (its wheel's verified copy; fp32 on
torch, for other models and when the copy is damaged), fp32 asked for, the
precision an index was asked for remembered, an index moved to the precision
asked for once (killed and resumed; a server searching throughout; an index of
the old fp32 default moved on its own), and the one-line refusals (a damaged
copy, a vectors file of the other precision)."""

from __future__ import annotations

import logging
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sandbox import server_env
from waiting import wait_for

from mdseek.index.engine.engine import Engine
from mdseek.index.model import packaged
from mdseek.index.model.embed import Embedder, EmbedSettings
from mdseek.index.model.onnx_encoder import OnnxEncoder, read_manifest
from mdseek.index.search.requests import SearchRequest
from mdseek.index.store.vectors_file import VectorsFileError

from conftest import copy_fixtures, workspace_with_index

QUERY = "what do I do when the main database machine dies"


@pytest.fixture(scope="module")
def wheel() -> Path:
    folder, why = packaged.installed()
    if folder is None:
        pytest.skip(f"no model wheel installed (bash .ci/setup installs it): {why}")
    return folder


def models(db: Path) -> dict[str, int]:
    con = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return dict(con.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall())
    finally:
        con.close()


def test_int8_is_the_bundled_models_default_the_wheels_copy(wheel):
    default = Embedder(settings=EmbedSettings(threads=1))
    assert default.precision == "int8" and not default.precision_asked
    assert default.model_id.endswith("#onnx-int8")
    default.load()
    assert default._model.folder == (wheel / packaged.INT8).resolve()
    fp32 = Embedder(settings=EmbedSettings(threads=1, precision="fp32"))
    assert fp32.precision == "fp32" and fp32.precision_asked
    assert fp32.model_id == default.model_id.removesuffix("#onnx-int8")
    asked = Embedder(settings=EmbedSettings(threads=1, precision="int8"))
    assert asked.model_id == default.model_id and asked.precision_asked
    # torch gives no int8 vectors: fp32 is its default
    assert Embedder(settings=EmbedSettings(backend="torch", threads=1)).model_id == fp32.model_id


def test_the_early_session_is_the_defaults_int8_copy(wheel):
    """A server or a search opens the default model's session before anyone
    asks (``warm_default_session``): the int8 copy, which the default's
    embedder then takes over (not a second session)."""
    from mdseek.index.model import embed

    embed.warm_default_session(threads=1).join(timeout=120)
    opened = embed._speculative
    assert opened == (str((wheel / packaged.INT8).resolve()), 1)
    emb = Embedder(settings=EmbedSettings(threads=1))
    session = embed._sessions.get(opened)
    assert session is not None and emb.load() is session and embed._speculative is None


def test_the_wheels_copy_is_the_recipes(wheel, tmp_path):
    """The shipped int8 copy gives the vectors onnx_int8's recipe gives when it
    quantises the shipped fp32 export (what an install without it would make)."""
    pytest.importorskip("onnx")
    from mdseek.index.model.onnx_int8 import _build, int8_model_id

    mid = packaged.read_manifest(wheel)["model_id"]
    _build(wheel, int8_model_id(mid), tmp_path / "int8")
    texts = ["database failover", "How do I rotate the TLS certificate on the ingress gateway?"]
    made = OnnxEncoder(tmp_path / "int8").encode(texts)
    shipped = OnnxEncoder(wheel / packaged.INT8).encode(texts)
    assert np.array_equal(made, shipped)


def test_a_damaged_int8_copy_is_refused_and_the_fp32_export_quantised(
    wheel, tmp_path, monkeypatch, caplog
):
    pytest.importorskip("onnx")
    copy = tmp_path / "site" / packaged.PACKAGE
    shutil.copytree(wheel, copy)
    model = copy / packaged.INT8 / "model.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size: only the hash tells
    model.write_bytes(bytes(data))
    monkeypatch.setattr(packaged, "_candidates", lambda: [copy])
    packaged.forget()
    try:
        with caplog.at_level(logging.WARNING):
            default = Embedder(settings=EmbedSettings(threads=1))  # nothing asked: fp32
            emb = Embedder(settings=EmbedSettings(threads=1, precision="int8"))
            emb.load()
        said = [r.getMessage() for r in caplog.records if "int8 copy" in r.getMessage()]
        assert said == [
            "the int8 copy of the bundled model is damaged: model.onnx is not the file"
            " that was verified (its sha256 differs); using fp32",
            "the int8 copy of the bundled model is damaged: model.onnx is not the file"
            " that was verified (its sha256 differs); quantising the fp32 export instead",
        ]
        fp32 = Embedder(settings=EmbedSettings(threads=1, precision="fp32"))
        assert default.precision == "fp32" and default.model_id == fp32.model_id
        assert emb.precision == "int8" and emb._model.folder != copy / packaged.INT8
        shipped = OnnxEncoder(wheel / packaged.INT8).encode(["database failover"])
        assert np.array_equal(emb.encode(["database failover"]), shipped)  # the same recipe
    finally:
        monkeypatch.undo()
        packaged.forget()


def fp32_index(tmp_path: Path) -> tuple[Path, Path, str]:
    """The fixtures indexed at fp32 (asked for), closed: the folder, the index
    file and the fp32 vectors' model id."""
    ws = copy_fixtures(tmp_path / "ws")
    db = tmp_path / "index.sqlite"
    eng = Engine(ws, index_path=db, embed=EmbedSettings(precision="fp32"))
    eng.index()
    fp32_id = eng.models.model_id
    eng.close()
    return ws, db, fp32_id


def test_precision_asked_once_is_remembered(wheel, tmp_path, caplog):
    ws, db, fp32_id = fp32_index(tmp_path)
    again = Engine(ws, index_path=db)  # nothing asked: the index's fp32, no move, nothing pending
    assert again.models.model_id == fp32_id and again.models.mover is None
    rep = again.index()
    assert rep.embedded == 0 and set(models(db)) == {fp32_id}
    again.store.set_meta("precision", "int4; DROP TABLE x")
    again.close()
    with caplog.at_level(logging.WARNING):
        odd = Engine(ws, index_path=db)
    assert (
        "this index remembers an unknown precision ('int4; DROP TABLE x'); using the default"
        in [r.getMessage() for r in caplog.records]
    )
    # the default (int8): the fp32 vectors serve while they move
    assert odd.models.mover is not None and odd.models.mover.model_id == fp32_id + "#onnx-int8"
    assert odd.models.model_id == fp32_id
    odd.close()
    asked = Engine(ws, index_path=db, embed=EmbedSettings(precision="int8"))  # a flag wins:
    assert asked.models.mover is not None and asked.models.mover.model_id == fp32_id + "#onnx-int8"
    assert asked.models.model_id == fp32_id  # a move, the fp32 vectors serving until it ends
    asked.close()


def test_a_new_int8_recipe_names_its_vectors_and_leaves_the_old_copy(
    wheel, tmp_path, monkeypatch, caplog
):
    """A bumped recipe (QUANTIZER 2) makes vectors of its own id and never
    serves the wheel's copy of recipe 1: its vectors would not match."""
    pytest.importorskip("onnx")
    from mdseek.index.model import onnx_int8

    monkeypatch.setattr(onnx_int8, "QUANTIZER", 2)
    packaged.forget()
    try:
        emb = Embedder(settings=EmbedSettings(threads=1, precision="int8"))
        fp32 = Embedder(settings=EmbedSettings(threads=1, precision="fp32"))
        assert emb.model_id == fp32.model_id + "#onnx-int8-r2"
        with caplog.at_level(logging.WARNING):
            emb.load()
        said = [r.getMessage() for r in caplog.records if "int8" in r.getMessage()]
        assert said == [
            "the int8 copy of the bundled model is of another int8 recipe than this"
            " mdseek's; quantising the fp32 export instead"
        ]
        assert emb._model.folder != wheel / packaged.INT8
        assert read_manifest(emb._model.folder)["model_id"] == emb.model_id
    finally:
        monkeypatch.undo()
        packaged.forget()


def test_a_vectors_file_of_the_other_precision_is_refused(wheel, tmp_path):
    ws = copy_fixtures(tmp_path / "ws")
    int8 = Engine(ws, index_path=tmp_path / "a.sqlite", embed=EmbedSettings(precision="int8"))
    int8.index()
    n = int8.export_vectors(tmp_path / "int8.npz")
    assert n > 0 and int8.models.model_id.endswith("#onnx-int8")
    int8.close()
    fp32 = Engine(ws, index_path=tmp_path / "b.sqlite", embed=EmbedSettings(precision="fp32"))
    fp32.index(embed=False)
    with pytest.raises(VectorsFileError) as err:
        fp32.seed_vectors(tmp_path / "int8.npz")
    assert str(err.value) == (
        f"{tmp_path / 'int8.npz'}: this vectors file holds int8 vectors; this index uses fp32"
    )
    # a file made before files said their precision: its model id tells (fp32 here)
    fp32.index()
    fp32.export_vectors(tmp_path / "fp32.npz")
    with np.load(tmp_path / "fp32.npz") as z:
        old = {k: z[k] for k in z.files if k != "precision"}
    np.savez_compressed(tmp_path / "old.npz", **old)
    other = Engine(ws, index_path=tmp_path / "c.sqlite", embed=EmbedSettings(precision="fp32"))
    other.index(embed=False)
    assert other.seed_vectors(tmp_path / "old.npz").taken == n
    with pytest.raises(VectorsFileError, match="holds fp32 vectors; this index uses int8"):
        Engine(
            ws, index_path=tmp_path / "d.sqlite", embed=EmbedSettings(precision="int8")
        ).seed_vectors(tmp_path / "old.npz")
    fp32.close()
    other.close()


def test_after_slice_one_of_several_every_old_vector_is_still_there(wheel, tmp_path, golden_index):
    """The move (here: the default int8 index asked for fp32) stopped after its
    first slice of several (a kill between slices; the kill-and-resume test
    below stops inside the first): every old vector is still stored, beside
    the slice's new ones, and search by meaning works in this process and in
    the next one, which resumes.

    Mutant caught: the old vectors swept after each completed slice (the final
    switch still right), in ``PrecisionMove.next`` (index/engine/precision_move.py):
    ``self._queue.embed(None, rep, set(take), emb=mover)`` followed by
    ``self._vectors.sweep_vectors(mover.model_id)``."""
    ws = workspace_with_index(tmp_path / "ws", golden_index)
    db = ws / ".mdseek" / "index.sqlite"
    ((int8_id, texts),) = models(db).items()
    assert int8_id.endswith("#onnx-int8")  # the default's
    fp32_id = int8_id.removesuffix("#onnx-int8")
    eng = Engine(ws, embed=EmbedSettings(precision="fp32", threads=1))
    try:
        assert eng.index_path == db and eng.models.mover is not None
        assert eng.index().embedded == 0  # as `mdseek index` does first: fp32 remembered
        left = eng.move_next(32)  # then slice 1
        assert left == texts - 32 and left > 2 * 32  # of several
        assert models(db) == {int8_id: texts, fp32_id: 32}
        resp = eng.search(QUERY, mode="dense", limit=3)
        assert resp.results and "database-failover" in resp.results[0].path
    finally:
        eng.close()
    again = Engine(ws)  # the next process: fp32 remembered, the int8 vectors serving
    try:
        assert again.models.model_id == int8_id and again.models.mover is not None
        assert again.move_pending() == texts - 32
        resp = again.search(QUERY, mode="dense", limit=3)
        assert resp.results and "database-failover" in resp.results[0].path
    finally:
        again.close()
    assert models(db) == {int8_id: texts, fp32_id: 32}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mdseek", *args]


def test_the_move_survives_a_kill_and_resumes(wheel, tmp_path):
    """An fp32 index asked for int8 (`mdseek index --precision int8`) is
    moved; killed (SIGKILL) once some int8 vectors are in, it has lost nothing
    (every fp32 vector, search hybrid), and the next run, asked nothing (the
    index remembers int8), finishes the move: int8 vectors only."""
    ws, db, fp32_id = fp32_index(tmp_path)
    texts = models(db)[fp32_id]
    env = server_env(MDSEEK_THREADS="1")
    proc = subprocess.Popen(
        _cli("index", str(ws), "--db", str(db), "--no-progress", "--precision", "int8"),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(
            lambda: models(db).get(fp32_id + "#onnx-int8", 0),
            lambda n: n >= 64 or proc.poll() is not None,
            timeout=120,
            what="some int8 vectors",
        )
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    got = models(db)
    assert got[fp32_id] == texts and 0 < got[fp32_id + "#onnx-int8"] < texts
    out = subprocess.run(
        _cli("search", str(ws), QUERY, "--db", str(db), "--json", "--limit", "3"),
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert '"mode": "hybrid"' in out.stdout and "database-failover" in out.stdout
    assert models(db) == got  # a search moves nothing
    done = subprocess.run(
        _cli("index", str(ws), "--db", str(db), "--no-progress"),
        env=env, capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    assert (
        f"moving this index's vectors to int8 in the background ({texts - got[fp32_id + '#onnx-int8']} texts)"
        in done.stderr
    )
    assert models(db) == {fp32_id + "#onnx-int8": texts}


def test_an_index_of_the_old_default_moves_in_the_background_searching_throughout(wheel, tmp_path):
    """An fp32 index made before int8 was the default (it remembers no
    precision) is moved to int8 once, asked nothing, by a server that searches
    throughout."""
    from mdseek.index.engine.folder import Folder
    from mdseek.index.engine.opening import EngineOptions

    ws, db, fp32_id = fp32_index(tmp_path)
    con = sqlite3.connect(db)
    with con:  # as the old default left it: fp32 vectors, no precision remembered
        con.execute("DELETE FROM meta WHERE key = 'precision'")
    con.close()
    assert set(models(db)) == {fp32_id}
    f = Folder(ws)
    f.open(EngineOptions(index_path=db))
    try:
        assert f.engine is not None and f.engine.models.mover is not None
        f.reconcile()
        assert f.state == "ready"
        seen = set()

        def probe() -> bool:
            resp = f.search(SearchRequest.make(QUERY, limit=3))
            assert resp.mode == "hybrid" and "database-failover" in resp.results[0].path
            seen.add(f.engine.models.model_id)
            return f.engine.models.mover is None

        wait_for(probe, timeout=180, every=0.2, what="the move's end")
        assert f.engine.models.model_id == fp32_id + "#onnx-int8" and len(seen) >= 1
        assert probe() and set(models(db)) == {f.engine.models.model_id}
    finally:
        f.close()
