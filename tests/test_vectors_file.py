"""Vectors computed once per team: an index's vectors exported to a file seed
another index of the same text, so it embeds nothing; a file of another model,
of the wrong size or not an mdseek vectors file costs nothing and shows no text."""

from __future__ import annotations

import io
import shutil
import sqlite3
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from sandbox import run, server_env

from mdseek.index.engine.engine import Engine
from mdseek.index.store.vectors_file import FORMAT, VectorsFileError, read_vectors

from conftest import copy_fixtures


@pytest.fixture(scope="module")
def exported(tmp_path_factory, golden_index) -> Path:
    ws = copy_fixtures(tmp_path_factory.mktemp("team") / "ws")
    index = ws.parent / "idx" / "index.sqlite"
    index.parent.mkdir()
    shutil.copy(golden_index, index)
    eng = Engine(ws, index_path=index)
    try:
        assert eng.index().embedded == 0
        out = ws.parent / "vectors.npz"
        n = eng.export_vectors(out)
    finally:
        eng.close()
    with sqlite3.connect(golden_index) as db:  # every distinct text of the handbook has one
        distinct = db.execute(
            "SELECT count(DISTINCT text_hash) FROM"
            " (SELECT text_hash FROM chunks UNION ALL SELECT text_hash FROM passages)"
        ).fetchone()[0]
    assert n == distinct > 200
    return out


def _fresh(tmp_path: Path) -> Engine:
    ws = copy_fixtures(tmp_path / "member")
    eng = Engine(ws, index_path=tmp_path / "member-idx" / "index.sqlite")
    eng.index(embed=False)
    return eng


def test_a_seeded_index_embeds_nothing(tmp_path, exported):
    eng = _fresh(tmp_path)
    try:
        waiting = eng.store.vectors.pending_count(eng.models.model_id)
        rep = eng.seed_vectors(exported)
        assert rep.taken == waiting and rep.rejected == 0
        again = eng.index()
        assert again.embedded == 0 and again.pending == 0
        res = eng.search("what do I do when the main database machine dies", limit=3)
        assert res.mode == "hybrid"
        assert any(r.path == "handbook/runbooks/database-failover.md" for r in res.results)
    finally:
        eng.close()


def _write(path: Path, model: str, hashes: list[str], vecs: np.ndarray, fmt: str = FORMAT) -> Path:
    np.savez(
        path,
        format=np.array(fmt),
        model=np.array(model),
        hashes=np.array(hashes, dtype="S64"),
        vectors=vecs,
    )
    return path


def test_vectors_of_the_wrong_size_or_length_or_model_are_never_taken(tmp_path, exported):
    eng = _fresh(tmp_path)
    try:
        hashes = [h for h, _ in eng.store.vectors.pending_chunks(eng.models.model_id)][:4]
        wrong_dim = (np.ones((4, 7)) / np.sqrt(7)).astype(np.float32)
        rep = eng.seed_vectors(_write(tmp_path / "dim.npz", eng.models.model_id, hashes, wrong_dim))
        assert (rep.taken, rep.rejected) == (0, 4)
        not_unit = np.full((4, 384), 3.0, dtype=np.float32)
        rep = eng.seed_vectors(_write(tmp_path / "len.npz", eng.models.model_id, hashes, not_unit))
        assert (rep.taken, rep.rejected) == (0, 4)
        nan = np.full((4, 384), np.nan, dtype=np.float32)
        assert (
            eng.seed_vectors(_write(tmp_path / "nan.npz", eng.models.model_id, hashes, nan)).taken
            == 0
        )
        unit = np.zeros((4, 384), dtype=np.float32)
        unit[:, 0] = 1.0
        other = eng.seed_vectors(_write(tmp_path / "other.npz", "someone/else@1", hashes, unit))
        assert other.taken == 0 and other.model_in_file == "someone/else@1"
        assert eng.store.vectors.pending_count(eng.models.model_id) == len(
            eng.store.vectors.pending_chunks(eng.models.model_id)
        )
        with sqlite3.connect(eng.index_path) as db:
            assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0
    finally:
        eng.close()


def test_a_file_that_is_not_one_is_a_one_line_error(tmp_path):
    eng = _fresh(tmp_path)
    try:
        junk = tmp_path / "junk.npz"
        junk.write_bytes(b"not a zip at all")
        with pytest.raises(VectorsFileError, match="not an mdseek vectors file"):
            eng.seed_vectors(junk)
        pickled = tmp_path / "pickled.npz"  # object arrays need pickle: never loaded
        np.savez(pickled, format=np.array(FORMAT), model=np.array(eng.models.model_id),
                 hashes=np.array([object()], dtype=object), vectors=np.zeros((1, 384), np.float32))  # fmt: skip
        with pytest.raises(VectorsFileError):
            eng.seed_vectors(pickled)
        with pytest.raises(VectorsFileError, match="cannot be read"):
            eng.seed_vectors(tmp_path / "missing.npz")
    finally:
        eng.close()


@pytest.mark.slow
def test_cli_index_with_vectors(tmp_path, exported):
    ws = copy_fixtures(tmp_path / "cli")
    db = tmp_path / "cli-idx" / "index.sqlite"
    cmd = [sys.executable, "-m", "mdseek", "index", str(ws), "--db", str(db), "--no-progress"]
    out = run([*cmd, "--vectors", str(exported)], timeout=600)
    assert out.returncode == 0, out.stderr
    assert "0 vectors made" in out.stdout and "took" in out.stderr, (out.stdout, out.stderr)
    bad = run([*cmd, "--vectors", str(tmp_path / "nope.npz")], timeout=600)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "cannot be read" in bad.stderr


# -- crafted files: checked before anything is loaded --------------------------------


def _npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def _zip(path: Path, members: dict[str, tuple[bytes, int, int, int]]) -> Path:
    """A zip written by hand: name -> (deflated bytes, crc, unpacked size, method)
    as given, so a member may declare any size its stream really unpacks to."""
    out, central = bytearray(), bytearray()
    for name, (data, crc, size, method) in members.items():
        n = name.encode()
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0x21,
                               crc, len(data), size, len(n), 0, 0, 0, 0, 0, len(out)) + n  # fmt: skip
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0x21,
                           crc, len(data), size, len(n), 0) + n + data  # fmt: skip
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                      len(central), len(out), 0)  # fmt: skip
    path.write_bytes(bytes(out + central + end))
    return path


def _stored(raw: bytes) -> tuple[bytes, int, int, int]:
    return raw, zlib.crc32(raw), len(raw), 0


def _team_members(model: str, hashes: np.ndarray, vectors: bytes | None = None) -> dict:
    members = {
        "format.npy": _stored(_npy(np.array(FORMAT))),
        "model.npy": _stored(_npy(np.array(model))),
        "hashes.npy": _stored(_npy(hashes)),
    }
    if vectors is not None:
        members["vectors.npy"] = _stored(vectors)
    return members


def _zeros_bomb(rows: int, dim: int = 384) -> tuple[bytes, int, int, int]:
    """A float32 (rows, dim) member of zeros, deflated: 2.3 GB in about 2 MB."""
    head = _npy_header("<f4", (rows, dim))
    size = len(head) + rows * dim * 4
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = bytes(1 << 24)
    # After a full flush the compressor starts afresh: every block deflates alike.
    first = co.compress(head) + co.flush(zlib.Z_FULL_FLUSH)
    piece = co.compress(block) + co.flush(zlib.Z_FULL_FLUSH)
    blocks, rest = divmod(rows * dim * 4, len(block))
    data = first + piece * blocks + co.compress(bytes(rest)) + co.flush()
    crc = zlib.crc32(head)
    for _ in range(blocks):
        crc = zlib.crc32(block, crc)
    return data, zlib.crc32(bytes(rest), crc), size, 8


def test_a_vectors_file_that_unpacks_huge_is_refused_before_it_is_read(tmp_path):
    # 2.3 GB of float32 zeros in a 2 MB file: it used to be unpacked into memory.
    rows = 1_500_000
    bomb = _zip(tmp_path / "bomb.npz", {
        **_team_members("m@1", np.array(["0" * 40] * 2, dtype="S64")),
        "vectors.npy": _zeros_bomb(rows),
    })  # fmt: skip
    assert bomb.stat().st_size < 5_000_000
    probe = (  # VmHWM: this process's peak memory (ru_maxrss counts the parent's too)
        "import re\n"
        "from mdseek.index.store.vectors_file import read_vectors, VectorsFileError\n"
        "try:\n"
        f"    read_vectors({str(bomb)!r})\n"
        "    print('read')\n"
        "except VectorsFileError as exc:\n"
        "    print(exc)\n"
        "status = open('/proc/self/status').read()\n"
        "print(int(re.search(r'VmHWM:\\s*(\\d+) kB', status).group(1)) // 1024)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=server_env()
    )
    assert run.returncode == 0, run.stderr[-2000:]
    message, peak_mb = run.stdout.splitlines()
    unpacked = len(_npy_header("<f4", (rows, 384))) + rows * 384 * 4 + 3 * 200
    assert message.startswith(f"{bomb}: unpacks to 2,3"), message
    assert "bytes, over the 2,147,483,648 a vectors file may hold" in message, message
    assert unpacked > 2**31
    assert int(peak_mb) < 400, f"peak {peak_mb} MB"


@pytest.mark.parametrize(
    ("case", "says"),
    [
        (
            "huge_shape",
            "vectors.npy declares 384,000,000,000,000 values of 4 bytes, more than it holds",
        ),
        ("int_hashes", "hashes.npy holds int64, not a list of text hashes"),
        ("text_hashes", "hashes.npy holds <U64, not a list of text hashes"),
        ("float64_vectors", "vectors.npy holds float64, not a matrix of float32 vectors"),
        ("model_list", "model.npy is not one model id"),
    ],
)
def test_a_crafted_vectors_file_is_a_one_line_error_never_a_traceback(tmp_path, case, says):
    hashes = np.array(["0" * 40] * 3, dtype="S64")
    unit = np.zeros((3, 384), dtype=np.float32)
    unit[:, 0] = 1.0
    members = {
        "huge_shape": _team_members("m@1", hashes, _npy_header("<f4", (10**12, 384))),
        "int_hashes": _team_members("m@1", np.arange(3), _npy(unit)),
        "text_hashes": _team_members("m@1", hashes.astype("U64"), _npy(unit)),
        "float64_vectors": _team_members("m@1", hashes, _npy(unit.astype(np.float64))),
        "model_list": {
            **_team_members("m@1", hashes, _npy(unit)),
            "model.npy": _stored(_npy(np.array(["m@1", "x"]))),
        },
    }[case]
    path = _zip(tmp_path / f"{case}.npz", members)
    with pytest.raises(VectorsFileError) as err:
        read_vectors(path)
    assert str(err.value) == f"{path}: {says}", str(err.value)


@pytest.mark.slow
def test_cli_refuses_a_crafted_vectors_file_in_one_line(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.md").write_text("# A\n\nalpha\n")
    crafted = _zip(
        tmp_path / "huge.npz",
        _team_members("m@1", np.arange(3), _npy_header("<f4", (10**12, 384))),
    )
    db = tmp_path / "idx" / "index.sqlite"
    run = subprocess.run(
        [sys.executable, "-m", "mdseek", "index", str(ws), "--db", str(db), "--no-progress",
         "--vectors", str(crafted)],
        capture_output=True, text=True, timeout=600, env=server_env()
    )  # fmt: skip
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr
    assert "huge.npz: hashes.npy holds int64, not a list of text hashes" in run.stderr, run.stderr
