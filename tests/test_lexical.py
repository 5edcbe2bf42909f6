"""The in-memory BM25 (index/search/lexical.py) against FTS5's own bm25() on a real
index: the same candidates with the same scores, after a build, after this
process's edits (patched in place) and after another process's (rebuilt)."""

from __future__ import annotations

import pytest

from mdseek.index.engine.engine import Engine
from mdseek.index.search.lexical import LexicalIndex, Phrase
from mdseek.index.search.requests import SearchRequest

from conftest import grown_workspace


def both(eng: Engine, query: str, prefix: bool = False):
    """(in memory, FTS5): each (query terms, hits) for one query."""
    assert eng.lexical_side.current()
    q = eng.parse_query(query, prefix)
    mem = eng.lexical_side.hits(q, eng.searcher.ranking.candidates)
    eng.lexical_side.in_memory = False
    try:
        sql = eng.lexical_side.hits(q, eng.searcher.ranking.candidates)
    finally:
        eng.lexical_side.in_memory = True
    return mem, sql


def assert_same(mem, sql, query: str) -> None:
    (tm, hm), (ts, hs) = mem, sql
    assert tm.words == ts.words and tm.dropped == ts.dropped and tm.prefix == ts.prefix, query
    assert len(hm) == len(hs), query
    for (_, a), (_, b) in zip(hm, hs, strict=True):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12), query
    if hs:
        # The same rows, but for rows tied at the cut-off score.
        cut = hs[-1][1]
        ms, ss = dict(hm), dict(hs)
        for cid in set(ms) ^ set(ss):
            assert ms.get(cid, ss.get(cid)) == pytest.approx(cut, rel=1e-9), query


def queries(fixture_queries: dict) -> list[tuple[str, bool]]:
    qs = [q["query"] for q in fixture_queries["queries"]]
    out = [(q, False) for q in qs]
    out += [(q[: len(q) // 2], True) for q in qs]  # as typed: the last word is a prefix
    out += [
        ("promote", False),
        ("configur", True),
        ("the", False),
        ("a an the of", False),
        ("zzzz nothing matches this qqqq", False),
        ("runbook failover " * 3, False),
        ("Éclair café naïve", False),
    ]
    return out


def in_memory_engine(tmp_path, copies: int) -> Engine:
    """The grown workspace chunked (no vectors), BM25 ranked from memory."""
    ws = grown_workspace(tmp_path / "ws", copies=copies)
    eng = Engine(ws, index_path=tmp_path / "index.sqlite")
    eng.index(embed=False)
    eng.lexical_side.in_memory = True
    eng.lexical_side.in_memory_min = 0  # a few hundred chunks: memory too, to compare
    eng.build_lexical()
    return eng


@pytest.fixture
def engine(tmp_path):
    eng = in_memory_engine(tmp_path, copies=3)
    yield eng
    eng.close()


def test_same_ranking_as_fts5(engine, fixture_queries):
    assert len(engine.lexical_side.index) == engine.store.chunks.count() > 300
    used = 0
    for q, prefix in queries(fixture_queries):
        mem, sql = both(engine, q, prefix)
        assert_same(mem, sql, q)
        used += bool(sql[1])
    assert used > 40  # the comparison is over real hits, not empty lists


def test_edits_are_patched_in_place(engine, fixture_queries):
    ws = engine.root
    version = engine.lexical_side._version
    runbook = ws / "handbook" / "runbooks" / "database-failover.md"
    text = runbook.read_text()
    runbook.write_text(
        text.replace("replica", "standby follower", 3)
        + "\n\n## Zebra drill\n\nQuokka zebra drill.\n"
    )
    engine.index_file(runbook, embed=False)
    gone = next((ws / "copy0").rglob("*.md"))
    gone.unlink()
    engine.index_file(gone, embed=False)
    retitled = next((ws / "copy1").rglob("*.md"))
    retitled.write_text("# Entirely new title quokka\n\n" + retitled.read_text())
    engine.index_file(retitled, embed=False)
    for q, prefix in queries(fixture_queries)[:40] + [
        ("quokka zebra", False),
        ("standby follower", False),
    ]:
        mem, sql = both(engine, q, prefix)
        assert_same(mem, sql, q)
    assert engine.lexical_side._version == version  # patched, not rebuilt
    assert dict(
        engine.lexical_side.hits(
            engine.parse_query("quokka zebra"), engine.searcher.ranking.candidates
        )[1]
    )


def test_compaction_keeps_the_ranking(tmp_path, fixture_queries):
    eng = in_memory_engine(tmp_path, copies=1)
    ws = eng.root
    rows = len(eng.lexical_side.index)
    files = sorted(ws.rglob("*.md"))
    for round_ in range(6):  # rewrite every chunk: dead rows pile up, then compaction
        for f in files:
            f.write_text(f.read_text() + f"\n\nround{round_} extra words\n")
            eng.index_file(f, embed=False)
        assert eng.lexical_side.current()
    assert len(eng.lexical_side.index.alive) < rows * 6  # compacted at least once
    for q, prefix in queries(fixture_queries)[:30]:
        assert_same(*both(eng, q, prefix), q)
    eng.close()


def test_another_process_write_rebuilds(engine, fixture_queries):
    other = Engine(engine.root, index_path=engine.index_path)
    note = engine.root / "handbook" / "notes" / "pelican.md"
    note.write_text("# Pelican migration\n\nPelicans migrate along the quay.\n")
    other.index_file(note, embed=False)
    other.close()
    assert not engine.lexical_side.current()  # stale: FTS5 answers, a rebuild starts
    assert engine.lexical_side.hits(
        engine.parse_query("pelican migration"), engine.searcher.ranking.candidates
    )[1]
    engine.lexical_side._thread.join(timeout=60)
    assert engine.lexical_side.current()
    for q, prefix in queries(fixture_queries)[:20] + [("pelican quay", False)]:
        assert_same(*both(engine, q, prefix), q)


def test_split_words_fall_back_to_fts5(engine, monkeypatch):
    # FTS5 reads foo_bar as the phrase "foo bar": not one term, so FTS5 answers.
    calls: list[str] = []
    fts, mem_search = engine.store.postings.fts_search, engine.lexical_side.index.search

    def spy_fts(match, *a):
        calls.append(f"fts5 {match}")
        return fts(match, *a)

    def spy_mem(phrases, *a):
        calls.append("memory")
        return mem_search(phrases, *a)

    monkeypatch.setattr(engine.store.postings, "fts_search", spy_fts)
    monkeypatch.setattr(engine.lexical_side.index, "search", spy_mem)
    mem, sql = both(engine, "replica_lag failover")
    assert calls == ['fts5 "replica_lag" OR "failover"'] * 2  # in memory too, FTS5 answered
    assert_same(mem, sql, "replica_lag")
    calls.clear()
    both(engine, "replica lag failover")  # plain words: from memory
    assert calls == ["memory", 'fts5 "replica" OR "lag" OR "failover"']


def test_lexical_index_unit():
    idx = LexicalIndex()
    # term, then each occurrence's row and column (0 title, 1 headings, 2 body)
    idx.reset([("alpha", "1,1,1,2", "0,2,2,2"), ("beta", "3,2,3", "1,2,2")])
    assert len(idx) == 3 and idx.doc_freq(["alpha", "beta", "gamma"]) == {
        "alpha": 2,
        "beta": 2,
        "gamma": 0,
    }
    hits = idx.search([Phrase("alpha")], 10, (2.0, 4.0, 1.0))
    assert [c for c, _ in hits] == [1, 2]  # row 1 has alpha in its title
    assert [c for c, _ in idx.search([Phrase("al", prefix=True)], 10, (1.0, 1.0, 1.0))] == [
        c for c, _ in hits
    ]
    idx.refresh([1], [])  # row 1 deleted
    assert idx.doc_freq(["alpha"]) == {"alpha": 1}
    assert [c for c, _ in idx.search([Phrase("alpha"), Phrase("beta")], 10, (1.0, 1.0, 1.0))][
        0
    ] == 2
    assert idx.search([Phrase("nothing")], 10, (1.0, 1.0, 1.0)) == []


def test_a_server_folder_ranks_from_memory_once_ready(tmp_path, golden_index):
    """index/engine/folder.py: FTS5 while the folder opens (the postings build would
    compete with the first hybrid answer), memory once it is ready and warmed,
    and only for a folder big enough that FTS5 is slower (LEXICAL_IN_MEMORY_MIN)."""
    from mdseek.index.engine.folder import Folder
    from mdseek.index.engine.opening import EngineOptions

    from conftest import workspace_with_index

    ws = workspace_with_index(tmp_path / "ws", golden_index)
    folder = Folder(ws)
    try:
        assert folder.open(EngineOptions()) == []
        eng = folder.engine
        assert eng is not None and not eng.lexical_side.in_memory
        folder.reconcile()
        assert folder.state == "ready" and eng.lexical_side.in_memory
        assert eng.models.embedder.loaded  # warmed: the model has run once
        # the fixtures are far below the threshold: FTS5 answers, nothing is built
        assert eng.store.chunks.count() < eng.lexical_side.in_memory_min
        resp = folder.read(folder.search, SearchRequest.make("rotate the signing keys", 5)).result()
        assert resp.mode == "hybrid" and resp.results
        assert eng.lexical_side._thread is None and len(eng.lexical_side.index) == 0
        # as big as the threshold: the next search starts the build, then memory answers
        eng.lexical_side.in_memory_min = eng.store.chunks.count()
        again = folder.read(
            folder.search, SearchRequest.make("rotate the signing keys", 5)
        ).result()
        assert [r.path for r in again.results] == [r.path for r in resp.results]
        eng.lexical_side._thread.join(60)
        assert (
            eng.lexical_side.current() and len(eng.lexical_side.index) == eng.store.chunks.count()
        )
        # the folder shrinks below it: FTS5 again, and the postings are freed
        eng.lexical_side.in_memory_min = eng.store.chunks.count() + 1
        assert not eng.lexical_side.current() and len(eng.lexical_side.index) == 0
    finally:
        folder.close()
