"""Searches read on read-only connections of their own (store/file.py,
``IndexFile.reading``): a search never waits for the writer's lock or its
transaction, sees the last committed state (never a write in progress), and
sees a write made just before it; this process's writes leave the change
counter alone (the dense matrix and the postings are not reloaded for them);
and closing the engine closes every connection. Real SQLite file, real
engine, real model."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from mdseek.index.engine.engine import Engine
from mdseek.index.search.requests import SearchRequest

from conftest import workspace_with_index

DEADLINE = 20.0  # seconds: a search of the handbook takes well under one
FAILOVER = "handbook/runbooks/database-failover.md"


def opened(tmp_path: Path, golden_index: Path, warm: bool = True) -> Engine:
    """An engine over a copy of the indexed handbook, its model loaded (its
    load is not what is timed); ``warm``: a first search made (the vector
    matrix loaded)."""
    ws = workspace_with_index(tmp_path / "handbook", golden_index)
    e = Engine(ws)
    rep = e.index()
    assert rep.embedded == 0 and rep.pending == 0
    e.models.embedder.load()
    if warm:
        e.search("warm up the model and the matrix")
    return e


@pytest.fixture
def eng(tmp_path, golden_index):
    e = opened(tmp_path, golden_index)
    yield e
    e.close()


class Rollback(Exception):
    """Leaves a transaction rolled back."""


def in_thread(fn, *args) -> tuple[threading.Thread, list]:
    """``fn(*args)`` started on a thread of its own; its result (or exception) lands in the list."""
    out: list = []

    def run() -> None:
        try:
            out.append(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - shown by the test
            out.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


@pytest.mark.parametrize("case", ["fts5", "memory", "first search"])
def test_a_search_does_not_wait_for_a_write_in_progress(tmp_path, golden_index, case):
    """A writer job holds the engine's write lock and the store's open write
    transaction; a search on another thread answers meanwhile, from the
    committed state -- with BM25 from FTS5 or from memory, and as the first
    search (the vector matrix loaded then)."""
    eng = opened(tmp_path, golden_index, warm=case != "first search")
    try:
        search_beside_a_writer(eng, case)
    finally:
        eng.close()


def search_beside_a_writer(eng: Engine, case: str) -> None:
    if case == "memory":
        eng.lexical_side.in_memory, eng.lexical_side.in_memory_min = True, 0
        eng.build_lexical()
    holding, release = threading.Event(), threading.Event()

    def write() -> None:
        # As a writer job: the engine's write lock, then an open transaction
        # (the failover runbook's chunks deleted, not committed).
        with eng.reconciler._write, eng.store.transaction() as db:
            db.execute(
                "DELETE FROM chunks WHERE doc_id = (SELECT id FROM documents WHERE path = ?)",
                (FAILOVER,),
            )
            holding.set()
            assert release.wait(DEADLINE * 3)
            raise Rollback  # the index is left as it was

    writer, _ = in_thread(write)
    try:
        assert holding.wait(DEADLINE)
        searcher, got = in_thread(eng.search, "promote the replica during a database failover")
        searcher.join(DEADLINE)
        assert not searcher.is_alive(), "the search waited for the writer"
        assert not isinstance(got[0], BaseException), got[0]
        assert got[0].mode == "hybrid"
        # the committed state, not the transaction's: the runbook is still there
        assert got[0].results[0].path == FAILOVER
    finally:
        release.set()
        writer.join(DEADLINE)
    assert not writer.is_alive()
    assert eng.search("promote the replica").results[0].path == FAILOVER


@pytest.mark.parametrize("lexical", ["fts5", "memory"])
def test_a_search_after_a_write_sees_it(eng, lexical):
    """A save on the writer thread, then a search on another thread (the
    language server's reader): the saved words are found, by keyword and by
    meaning."""
    if lexical == "memory":
        eng.lexical_side.in_memory, eng.lexical_side.in_memory_min = True, 0
        eng.build_lexical()
    note = eng.root / "handbook" / "notes" / "pelican.md"
    note.write_text("# Pelican census\n\nThe quokka pelican census runs along the quay.\n")
    writer, _ = in_thread(eng.index_file, note)
    writer.join(DEADLINE)
    assert not writer.is_alive()
    for mode in ("lexical", "hybrid"):
        searcher, got = in_thread(eng.search, SearchRequest.make("quokka pelican census", 5, mode))
        searcher.join(DEADLINE)
        assert got and not isinstance(got[0], BaseException), got
        assert got[0].results[0].path == "handbook/notes/pelican.md", mode


def test_rows_written_reach_the_postings_once_committed(eng):
    """The in-memory BM25 patches the chunks_fts rows a write touched, read on a
    reader connection: a search while the write is not yet committed must not
    take them (it would read the old rows and never look again)."""
    eng.lexical_side.in_memory, eng.lexical_side.in_memory_min = True, 0
    eng.build_lexical()
    note = eng.root / "handbook" / "notes" / "wombat.md"
    note.write_text("# Wombat burrows\n\nWombatry is the study of burrows.\n")
    at_commit, go = threading.Event(), threading.Event()

    def trace(sql: str) -> None:  # on the writer, before its COMMIT runs
        if sql.strip().upper() == "COMMIT":
            at_commit.set()
            go.wait(DEADLINE * 3)

    eng.store.db.set_trace_callback(trace)
    writer, _ = in_thread(eng.index_file, note, False)
    try:
        assert at_commit.wait(DEADLINE)
        q = eng.parse_query("wombatry")
        assert eng.lexical_side.hits(q, 10)[1] == []  # not committed: not seen yet
    finally:
        go.set()
        writer.join(DEADLINE)
        eng.store.db.set_trace_callback(None)
    assert eng.lexical_side.current()  # patched, not rebuilt: FTS5 would hide a miss
    hits = eng.lexical_side.hits(eng.parse_query("wombatry"), 10)[1]
    assert [eng.store.chunks.spans([c])[c][1] for c, _ in hits] == ["handbook/notes/wombat.md"]


def test_the_change_counter_moves_for_other_writers_only(eng):
    """``data_version``: unchanged by this process's writes (the dense matrix and
    the postings take those in directly), changed by another connection's."""
    before = eng.store.data_version()
    note = eng.root / "handbook" / "notes" / "heron.md"
    note.write_text("# Heron\n\nHerons wade.\n")
    eng.index_file(note)
    assert eng.store.data_version() == before
    other = sqlite3.connect(eng.index_path)
    with other:
        other.execute("INSERT INTO meta(key, value) VALUES ('probe', '1')")
    other.close()
    assert eng.store.data_version() != before


def test_closing_the_engine_closes_every_connection(eng):
    """Searches on several threads open readers; closing the engine closes
    them all before the writer, whose close (the last) checkpoints the WAL
    and removes it: nothing is left holding the file."""
    threads = [in_thread(eng.search, f"database failover {i}") for i in range(4)]
    for t, got in threads:
        t.join(DEADLINE)
        assert got and not isinstance(got[0], BaseException), got
    assert eng.store.file.readers() >= 1
    index = Path(eng.index_path)
    eng.close()
    assert eng.store.file.readers() == 0
    assert not Path(str(index) + "-wal").exists()
    with pytest.raises(sqlite3.ProgrammingError):
        eng.store.chunks.count()


def test_reads_inside_a_transaction_see_its_rows_others_do_not(tmp_path):
    """The thread in a transaction reads on the writer (its uncommitted rows);
    another thread reads the committed state meanwhile, without waiting."""
    from mdseek.index.store.store import Store

    store = Store(tmp_path / "i.sqlite")
    inside, release = threading.Event(), threading.Event()
    seen: list = []

    def write() -> None:
        with store.transaction() as db:
            db.execute("INSERT INTO meta(key, value) VALUES ('probe', 'uncommitted')")
            seen.append(store.get_meta("probe"))
            inside.set()
            assert release.wait(DEADLINE * 3)

    writer, _ = in_thread(write)
    try:
        assert inside.wait(DEADLINE)
        reader, got = in_thread(store.get_meta, "probe")
        reader.join(DEADLINE)
        assert not reader.is_alive() and got == [None]
    finally:
        release.set()
        writer.join(DEADLINE)
    assert seen == ["uncommitted"]
    assert store.get_meta("probe") == "uncommitted"  # committed now
    store.close()
