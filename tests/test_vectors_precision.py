"""A team's vectors file of the other precision than the model's default (an
fp32 file made before int8 was the default) decides the precision of an index
that was asked none and holds no vectors: its vectors are taken, nothing is
re-embedded, and the index remembers that precision. Asked for another
precision, or holding vectors already, the file is refused in one line."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from sandbox import run

from mdseek.index.engine.engine import Engine
from mdseek.index.model import packaged
from mdseek.index.model.embed import EmbedSettings
from mdseek.index.store.vectors_file import VectorsFileError

from conftest import copy_fixtures

QUERY = "what do I do when the main database machine dies"


@pytest.fixture(scope="module")
def fp32_file(tmp_path_factory) -> tuple[Path, int, str]:
    """The fixtures' vectors at fp32 (asked for) in a team's file: (file, how
    many, the fp32 model id)."""
    folder, why = packaged.installed()
    if folder is None:
        pytest.skip(f"no model wheel installed (bash .ci/setup installs it): {why}")
    base = tmp_path_factory.mktemp("team")
    ws = copy_fixtures(base / "ws")
    eng = Engine(ws, index_path=base / "fp32.sqlite", embed=EmbedSettings(precision="fp32"))
    try:
        assert eng.index().pending == 0
        n = eng.export_vectors(base / "team.npz")
        fp32_id = eng.models.model_id
    finally:
        eng.close()
    assert n > 200 and not fp32_id.endswith("#onnx-int8")
    return base / "team.npz", n, fp32_id


def _stored(db: Path) -> tuple[dict[str, int], str | None]:
    """(vectors per model id, the precision the index remembers)."""
    con = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        per = dict(con.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall())
        row = con.execute("SELECT value FROM meta WHERE key = 'precision'").fetchone()
    finally:
        con.close()
    return per, row[0] if row else None


def test_a_fresh_index_takes_an_fp32_file_and_keeps_fp32(tmp_path, fp32_file):
    team, n, fp32_id = fp32_file
    shutil.copy(team, tmp_path / "team.npz")
    ws = copy_fixtures(tmp_path / "ws")
    db = tmp_path / "idx" / "index.sqlite"
    cmd = [sys.executable, "-m", "mdseek", "index", str(ws), "--db", str(db), "--no-progress"]
    out = run([*cmd, "--json", "--vectors", "team.npz"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    assert rep["embedded"] == 0 and rep["vectors_taken"] == n and rep["pending"] == 0
    assert out.stderr.splitlines() == [
        "mdseek: this index keeps fp32 vectors, the precision of team.npz"
        " (--precision int8 to re-embed instead)"
    ]
    assert _stored(db) == ({fp32_id: n}, "fp32")
    again = Engine(ws, index_path=db)  # nothing asked: fp32 remembered, no move back to int8
    try:
        assert again.models.model_id == fp32_id and again.models.mover is None
        resp = again.search(QUERY, limit=3)
        assert resp.mode == "hybrid" and "database-failover" in resp.results[0].path
        assert again.index().embedded == 0 and again.models.mover is None
    finally:
        again.close()
    assert _stored(db) == ({fp32_id: n}, "fp32")


def test_asked_for_int8_the_fp32_file_is_refused_in_one_line(tmp_path, fp32_file):
    team, _, _ = fp32_file
    ws = copy_fixtures(tmp_path / "ws")
    db = tmp_path / "idx" / "index.sqlite"
    cmd = [sys.executable, "-m", "mdseek", "index", str(ws), "--db", str(db), "--no-progress"]
    out = run([*cmd, "--precision", "int8", "--vectors", str(team)], cwd=tmp_path)
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        f"mdseek: error: {team}: this vectors file holds fp32 vectors; this index uses int8"
    ]
    fresh = [*cmd[:-2], str(tmp_path / "env" / "index.sqlite"), "--no-progress"]
    by_env = run([*fresh, "--vectors", str(team)], cwd=tmp_path, env={"MDSEEK_PRECISION": "int8"})
    assert by_env.returncode == 1 and by_env.stderr == out.stderr
    # asked for in the settings, before anything is read or remembered: the same
    eng = Engine(ws, index_path=tmp_path / "b.sqlite", embed=EmbedSettings(precision="int8"))
    try:
        with pytest.raises(VectorsFileError, match="holds fp32 vectors; this index uses int8"):
            eng.seed_vectors(team)
        assert eng.models.model_id.endswith("#onnx-int8")
    finally:
        eng.close()
    assert _stored(tmp_path / "b.sqlite") == ({}, None)


def test_an_index_holding_int8_vectors_refuses_the_fp32_file(tmp_path, fp32_file, golden_index):
    team, _, _ = fp32_file
    ws = copy_fixtures(tmp_path / "ws")
    db = tmp_path / "index.sqlite"
    shutil.copy(golden_index, db)  # the default's (int8) vectors, no precision asked
    eng = Engine(ws, index_path=db)
    try:
        assert eng.models.model_id.endswith("#onnx-int8")
        with pytest.raises(VectorsFileError) as err:
            eng.index(vectors=team)
        said = f"{team}: this vectors file holds fp32 vectors; this index uses int8"
        assert str(err.value) == said
        assert eng.models.model_id.endswith("#onnx-int8")
    finally:
        eng.close()
    per, remembered = _stored(db)
    assert remembered is None and all(m.endswith("#onnx-int8") for m in per)


def test_a_refused_run_leaves_no_trace_its_rerun_without_the_flag_takes_the_file(
    tmp_path, fp32_file
):
    """Refused for the asked int8, the run wrote nothing the rerun reads: no
    chunk, no remembered precision. Without the flag, the same index then does
    what a fresh one does: fp32 from the file, every vector taken, none made."""
    team, n, fp32_id = fp32_file
    shutil.copy(team, tmp_path / "team.npz")
    ws = copy_fixtures(tmp_path / "ws")
    db = tmp_path / "idx" / "index.sqlite"
    cmd = [sys.executable, "-m", "mdseek", "index", str(ws), "--db", str(db), "--no-progress"]
    out = run([*cmd, "--precision", "int8", "--vectors", "team.npz"], cwd=tmp_path)
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "mdseek: error: team.npz: this vectors file holds fp32 vectors; this index uses int8"
    ]
    if db.exists():  # nothing remembered, no chunk written
        assert _stored(db) == ({}, None)
        con = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
        try:
            assert con.execute("SELECT count(*) FROM chunks").fetchone() == (0,)
        finally:
            con.close()
    again = run([*cmd, "--json", "--vectors", "team.npz"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    rep = json.loads(again.stdout)
    assert rep["embedded"] == 0 and rep["vectors_taken"] == n and rep["pending"] == 0
    assert rep["precision_from_vectors"] == "fp32"
    assert again.stderr.splitlines() == [
        "mdseek: this index keeps fp32 vectors, the precision of team.npz"
        " (--precision int8 to re-embed instead)"
    ]
    assert _stored(db) == ({fp32_id: n}, "fp32")
