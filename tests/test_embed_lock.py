"""One embedder per index at a time, across processes; embedding that stops when
asked (issue 13, items 9 and 11). Real processes, real SQLite, the real model."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from raw_lsp import RawServer
from sandbox import server_env
from waiting import wait_for

from mdseek.index.engine.engine import Engine, IndexReport

from conftest import FIXTURES, grown_workspace

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "mdseek"]


def start_cli(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=server_env()
    )


def finish(p: subprocess.Popen, timeout: float = 600) -> tuple[dict, str]:
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err
    return json.loads(out), err


def index_facts(path: Path) -> dict:
    db = sqlite3.connect(path, timeout=60)
    try:
        return {
            "integrity": db.execute("PRAGMA integrity_check").fetchone()[0],
            "hashes": db.execute(
                "SELECT count(DISTINCT text_hash) FROM (SELECT text_hash FROM chunks UNION ALL SELECT text_hash FROM passages)"
            ).fetchone()[0],
            "vectors": db.execute("SELECT count(*) FROM vectors").fetchone()[0],
            "pending": db.execute(
                "SELECT count(DISTINCT c.text_hash) FROM (SELECT text_hash FROM chunks UNION ALL SELECT text_hash FROM passages) c LEFT JOIN vectors v"
                " ON v.text_hash = c.text_hash WHERE v.text_hash IS NULL"
            ).fetchone()[0],
            "documents": db.execute("SELECT count(*) FROM documents").fetchone()[0],
        }
    finally:
        db.close()


def part_of_handbook(root: Path) -> Path:
    """Two folders of the handbook (enough chunks for both processes to want them)."""
    for sub in ("adr", "runbooks"):
        (root / sub).mkdir(parents=True)
        for f in sorted((FIXTURES / "handbook" / sub).glob("*.md")):
            (root / sub / f.name).write_bytes(f.read_bytes())
    return root


def hold_lock(lock_file: str) -> subprocess.Popen:
    """Another process holding an index's embed lock until its stdin closes."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from filelock import FileLock; l = FileLock(sys.argv[1]); l.acquire();"
            " print('held', flush=True); sys.stdin.read()",
            lock_file,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=server_env(),
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_two_cli_processes_embed_each_chunk_once(tmp_path):
    """Both processes meet at the lock for certain: it is held (as by a third
    embedder) until both say they wait; then one embeds everything and the
    other reuses its vectors."""
    ws = part_of_handbook(tmp_path / "ws")
    db = tmp_path / "index.sqlite"
    holder = hold_lock(str(db) + ".lock")
    logs = [tmp_path / "a.err", tmp_path / "b.err"]
    procs = []
    try:
        for log in logs:
            with log.open("w") as err:
                procs.append(
                    subprocess.Popen(
                        [*CLI, "index", str(ws), "--json", "--db", str(db)],
                        stdout=subprocess.PIPE,
                        stderr=err,
                        text=True,
                        env=server_env(),
                    )
                )
        wait_for(
            lambda: [log.read_text() for log in logs],
            lambda errs: all("waiting to reuse its vectors" in e for e in errs),
            timeout=300,
            what="both processes waiting for the embed lock",
        )
    finally:
        holder.communicate("")  # the lock is free
    reports = []
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, logs
        reports.append(json.loads(out))
    ra, rb = reports
    facts = index_facts(db)
    assert (
        facts["integrity"] == "ok" and facts["pending"] == 0 and ra["pending"] == rb["pending"] == 0
    )
    assert ra["lock_wait_seconds"] > 0 and rb["lock_wait_seconds"] > 0
    # every chunk embedded once in all: one process made every vector, the other none
    assert sorted([ra["embedded"], rb["embedded"]]) == [0, facts["hashes"]], (ra, rb, facts)


def test_server_and_cli_on_a_fresh_folder_embed_each_chunk_once(tmp_path):
    ws = part_of_handbook(tmp_path / "ws")
    with RawServer(tmp_path) as server:
        server.initialize(ws)
        cli = start_cli("index", str(ws), "--json")
        rep, _ = finish(cli)
        st = server.wait_state(("ready",), 600, pred=lambda s: s["pending_embeds"] == 0)
        path = Path(st["roots"][0]["index_path"])
        facts = index_facts(path)
        assert facts["integrity"] == "ok" and facts["pending"] == 0
        assert rep["embedded"] + st["embedded_total"] == facts["hashes"], (rep, st, facts)
        assert st["roots"][0]["index_location"] == "cache"


def test_kill_9_while_embedding_frees_the_index_for_the_next_process(tmp_path):
    ws = grown_workspace(tmp_path / "ws", copies=1)
    db = tmp_path / "index.sqlite"
    a = start_cli("index", str(ws), "--json", "--db", str(db))
    deadline = time.monotonic() + 600
    vectors = 0
    while vectors == 0 and time.monotonic() < deadline and a.poll() is None:
        time.sleep(0.2)
        if db.exists():
            try:
                vectors = index_facts(db)["vectors"]
            except sqlite3.OperationalError:
                pass  # tables not created yet
    assert a.poll() is None and vectors > 0, "the first process should be embedding"
    os.kill(a.pid, signal.SIGKILL)
    a.wait()
    mid = index_facts(db)
    assert mid["integrity"] == "ok" and mid["pending"] > 0  # killed mid-way, index sound
    b = start_cli("index", str(ws), "--json", "--db", str(db))
    rep, _ = finish(b)
    assert rep["lock_wait_seconds"] == 0  # the kill released the lock
    assert rep["pending"] == 0 and rep["embedded"] == mid["pending"]  # only what was left
    end = index_facts(db)
    assert end["integrity"] == "ok" and end["pending"] == 0
    assert end["documents"] == len(list(ws.rglob("*.md")))


# -- cancelling ------------------------------------------------------------------------------


@pytest.fixture()
def small_ws(tmp_path) -> Path:
    root = tmp_path / "small"
    root.mkdir()
    for f in sorted((FIXTURES / "handbook" / "runbooks").glob("*.md"))[:3]:
        (root / f.name).write_bytes(f.read_bytes())
    return root


def test_cancel_stops_embedding_after_the_batch_in_flight(small_ws, tmp_path):
    """The model makes the next batch while one is written: a cancel during the
    first batch's write lets the second (already in the model) land, no third."""
    eng = Engine(small_ws, index_path=tmp_path / "i.sqlite")
    eng.queue.batch = 4
    eng.index(embed=False)
    total = eng.store.vectors.pending_count(eng.models.model_id)
    assert total > 12

    def progress(stage: str, done: int, of: int) -> None:
        if stage == "embed" and done:
            eng.cancel()  # e.g. the server's exit, arriving during the first batch

    rep = IndexReport()
    eng.embed_pending(progress, rep)
    assert rep.interrupted and rep.embedded == 8
    assert eng.store.vectors.pending_count(eng.models.model_id) == total - 8
    eng.close()
    eng = Engine(small_ws, index_path=tmp_path / "i.sqlite")
    rep = eng.index()
    assert rep.embedded == total - 8 and rep.pending == 0 and not rep.interrupted
    eng.close()


def test_waiting_for_another_process_is_cancellable(small_ws, tmp_path):
    db = tmp_path / "i.sqlite"
    eng = Engine(small_ws, index_path=db)
    eng.index(embed=False)
    eng.models.embedder.load()
    holder = subprocess.Popen(  # another process holding the index's embed lock
        [
            sys.executable,
            "-c",
            "import sys; from filelock import FileLock; l = FileLock(sys.argv[1]); l.acquire();"
            " print('held', flush=True); sys.stdin.read()",
            str(db) + ".lock",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=server_env(),
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        stages: list[str] = []
        rep = IndexReport()
        waiting = threading.Event()

        def progress(stage: str, done: int, of: int) -> None:
            stages.append(stage)
            if stage == "wait":
                waiting.set()

        t = threading.Thread(target=eng.embed_pending, args=(progress, rep))
        t.start()
        assert waiting.wait(60)
        eng.cancel()
        t.join(30)
        assert not t.is_alive() and rep.interrupted and rep.embedded == 0
        assert stages == ["wait"] and rep.lock_wait_seconds > 0
    finally:
        holder.communicate("")  # the holder exits: the lock is free
    eng.close()
    eng = Engine(small_ws, index_path=db)
    rep = eng.index()
    assert rep.pending == 0 and rep.embedded > 0 and rep.lock_wait_seconds == 0
    eng.close()
