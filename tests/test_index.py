"""The persistent, incremental index: real SQLite file, real model."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox import server_env

from mdseek.index.engine.engine import Engine
from mdseek.index.store.file import rows_in
from mdseek.index.store.store import SCHEMA_VERSION, IndexFileError, Store
from mdseek.index.text.files import FileFilter
from mdseek.index.text.parse import parse_bytes

from conftest import FIXTURES, copy_fixtures, workspace_with_index


@pytest.fixture()
def ws(tmp_path, golden_index):
    """The 24-document handbook with an up-to-date index (copied, not re-embedded)."""
    return workspace_with_index(tmp_path / "handbook", golden_index)


@pytest.fixture()
def small_ws(tmp_path):
    """Four short handbook documents, not indexed yet."""
    root = tmp_path / "small"
    for rel in ("adr", "policies"):
        (root / rel).mkdir(parents=True)
        for f in sorted((FIXTURES / "handbook" / rel).glob("*.md"))[:2]:
            (root / rel / f.name).write_bytes(f.read_bytes())
    return root


def md_files(root):
    return sorted(p for p in root.rglob("*.md") if ".mdseek" not in p.parts)


def longest_doc(root):
    return max(md_files(root), key=lambda p: p.stat().st_size)


def test_index_is_persistent_and_incremental(tmp_path, golden_index):
    ws = copy_fixtures(tmp_path / "handbook")
    eng = Engine(ws)
    # The index lives in the user's cache, never in the (maybe synced) workspace.
    assert not (ws / ".mdseek").exists()
    assert eng.location.kind == "cache" and eng.index_path.is_relative_to(
        os.environ["XDG_CACHE_HOME"]
    )
    # Pre-seed only the vectors (a cache keyed by text hash + model): every file
    # is chunked and written, nothing is re-embedded.
    src = sqlite3.connect(golden_index)
    rows = src.execute("SELECT model, text_hash, dim, vec FROM vectors").fetchall()
    src.close()
    with eng.store.transaction() as db:
        db.executemany("INSERT INTO vectors VALUES (?, ?, ?, ?)", rows)
    first = eng.index()
    assert first.files >= 20 and first.indexed == first.files
    assert first.pending == 0 and first.embedded == 0 and first.chunks > 100
    eng.close()

    # A restart reconciles with disk instead of rebuilding.
    eng = Engine(ws)
    again = eng.index()
    assert (again.indexed, again.embedded, again.unchanged) == (0, 0, first.files)

    # Touching a file without changing it costs a hash, not a re-chunk.
    f = longest_doc(ws)
    os.utime(f, None)
    touched = eng.index()
    assert touched.indexed == 0 and touched.embedded == 0
    eng.close()


def test_one_section_edit_embeds_only_changed_chunks(ws):
    eng = Engine(ws)
    eng.index()
    f = longest_doc(ws)
    rel = f.relative_to(ws).as_posix()
    before = eng.store.chunks.document_hashes(rel)  # its chunks' texts and their passages'
    lines = f.read_text().split("\n")
    # Append a sentence to a paragraph near the middle of the document.
    doc = parse_bytes(f.read_bytes(), rel)
    para = next(b for b in doc.blocks[len(doc.blocks) // 2 :] if b.kind == "paragraph")
    lines[para.end_line - 1] += " The quarterly zebra audit happens on Tuesdays in room 4B."
    f.write_text("\n".join(lines))
    calls_before = eng.models.embedder.texts_embedded
    rep = eng.index()
    after = eng.store.chunks.document_hashes(rel)
    changed = after - before
    assert rep.indexed == 1
    # the edited chunk (a re-split may shift one neighbour) and the edited passage
    # of each: its other passages' texts are unchanged, so their vectors are kept
    assert 1 <= len(changed) <= 4
    assert rep.embedded == len(changed) == eng.models.embedder.texts_embedded - calls_before
    hits = eng.search("when is the zebra audit", limit=3).results
    assert hits and hits[0].path == rel
    eng.close()


def test_deleted_and_renamed_files_are_swept(ws):
    eng = Engine(ws)
    eng.index()
    files = md_files(ws)
    gone, moved = files[0], files[1]
    gone_rel = gone.relative_to(ws).as_posix()
    moved_rel = moved.relative_to(ws).as_posix()
    gone.unlink()
    target = moved.parent / ("renamed-" + moved.name)
    moved.rename(target)
    rep = eng.index()
    assert rep.removed == 2 and rep.indexed == 1
    paths = set(eng.store.documents.all())
    assert gone_rel not in paths and moved_rel not in paths
    assert target.relative_to(ws).as_posix() in paths
    assert not eng.store.chunks.document_sections(gone_rel)
    # The renamed file's chunks reuse their vectors unless the title (from the name) changed.
    assert rep.embedded <= len(eng.store.chunks.document_chunks(target.relative_to(ws).as_posix()))
    for r in eng.search("handbook", limit=50).results:
        assert r.path not in (gone_rel, moved_rel)
    eng.close()


def test_interrupted_index_resumes_consistently(small_ws, monkeypatch):
    ws = small_ws
    eng = Engine(ws)
    eng.queue.batch = 8
    calls = {"n": 0}
    real = eng.models.embedder.encode

    def flaky(texts, _count=True):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # Ctrl-C during the second embedding batch
        return real(texts, _count)

    monkeypatch.setattr(eng.models.embedder, "encode", flaky)
    with pytest.raises(KeyboardInterrupt):
        eng.index()
    monkeypatch.undo()
    pending = eng.store.vectors.pending_count(eng.models.model_id)
    assert pending > 0  # documents are committed, some vectors are missing
    db = sqlite3.connect(eng.index_path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n_chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    n_fts = db.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
    assert n_chunks == n_fts
    db.close()
    eng.close()
    eng = Engine(ws)
    rep = eng.index()
    assert rep.indexed == 0 and rep.embedded == pending and rep.pending == 0
    eng.close()


def test_model_change_reembeds_everything(small_ws, monkeypatch):
    ws = small_ws
    eng = Engine(ws)
    first = eng.index()
    eng.close()
    eng = Engine(ws)
    monkeypatch.setattr(eng.models.embedder, "model_id", "another-model@0")
    rep = eng.index()
    assert rep.indexed == 0 and rep.embedded == first.embedded
    eng.close()


def test_symlinks_out_of_root_and_big_files_are_skipped(ws, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n\nthe launch codes are 0000\n")
    (ws / "link-out.md").symlink_to(outside)
    (ws / "linked-dir").symlink_to(tmp_path, target_is_directory=True)
    big = ws / "big.md"
    big.write_bytes(b"# Big\n\n" + (b"lorem ipsum dolor sit amet. " * 40 + b"\n\n") * 18_000)
    assert big.stat().st_size > 20_000_000
    eng = Engine(ws)
    rep = eng.index()
    reasons = dict(rep.skipped)
    assert "outside the workspace" in reasons["link-out.md"]
    assert "limit" in reasons["big.md"]
    # a symlinked folder is not descended (this one holds the workspace itself: a cycle)
    assert reasons["linked-dir/"] == "symlinked folder (not followed)"
    docs = eng.store.documents.all()
    assert "link-out.md" not in docs and "big.md" not in docs
    assert not [p for p in docs if p.startswith("linked-dir/")]
    assert len(docs) == 24  # the handbook's own documents, each once
    assert not any("launch codes" in r.snippet for r in eng.search("launch codes", limit=5).results)
    eng.close()


def test_bad_files_never_break_the_index(ws):
    (ws / "bad-utf8.md").write_bytes(b"# Caf\xe9 menu\n\nespresso \xff\xfe prices\n")
    (ws / "empty.md").write_bytes(b"")
    (ws / "crlf.md").write_bytes(b"# Windows\r\n\r\nline endings from notepad\r\n")
    eng = Engine(ws)
    rep = eng.index()
    assert not rep.errors
    docs = eng.store.documents.all()
    assert {"bad-utf8.md", "empty.md", "crlf.md"} <= set(docs)
    hit = eng.search("espresso prices", limit=1, mode="lexical").results[0]
    assert hit.path == "bad-utf8.md"
    assert eng.store.chunks.document_sections("crlf.md")[0].start_line == 0
    eng.close()


def test_schema_is_versioned_and_foreign_files_refused(tmp_path):
    s = Store(tmp_path / "i.sqlite")
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s.close()
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t(x)")
    db.commit()
    db.close()
    with pytest.raises(IndexFileError, match="not an mdseek index"):
        Store(other)
    other_bytes = other.read_bytes()
    with pytest.raises(IndexFileError, match="not an mdseek index"):
        Store(other, recover=False)
    assert other.read_bytes() == other_bytes  # a foreign file is left exactly as it was


def test_a_query_over_a_long_list_runs_in_slices_below_sqlites_bound():
    """rows_in: more values than SQLite binds in one statement (its bound lowered
    here to 600; builds differ) give every row, in order, with the parameters
    before and after the list in their places."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t(k TEXT, n INTEGER)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(k, n) for k in "ab" for n in range(1300)])
    db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 600)
    sql = "SELECT n FROM t WHERE k = ? AND n IN {in} AND n < ? ORDER BY n"
    rows = rows_in(db, sql, list(range(1201)), before=("b",), after=(1100,))
    assert [n for (n,) in rows] == list(range(1100))
    assert rows_in(db, sql, [], before=("b",), after=(1100,)) == []
    db.close()


def test_include_exclude_globs(ws):
    eng = Engine(ws, file_filter=FileFilter(exclude=FileFilter().exclude + ("**/adr/**",)))
    eng.index(embed=False)
    assert eng.store.documents.all() and not any(
        "/adr/" in "/" + p for p in eng.store.documents.all()
    )
    eng.close()


def test_cli_index_then_search_json(ws):
    env = server_env()
    run = subprocess.run(
        [sys.executable, "-m", "mdseek", "index", str(ws), "--no-progress"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    # the summary and where the index is (a rate only when something was embedded)
    assert "files:" in run.stdout and "\nindex: " in run.stdout
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mdseek",
            "search",
            str(ws),
            "rotating TLS certificates",
            "--json",
            "--limit",
            "3",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    import json

    rows = json.loads(out.stdout)["results"]
    assert len(rows) == 3
    for r in rows:
        assert {"path", "heading", "breadcrumb", "start_line", "end_line", "score"} <= set(r)
        assert (ws / r["path"]).is_file() and 1 <= r["start_line"] <= r["end_line"]
    bad = subprocess.run(
        [sys.executable, "-m", "mdseek", "search", str(ws / "nope"), "x"],
        capture_output=True,
        text=True,
        env=server_env(),
    )
    assert bad.returncode == 1 and "no such folder" in bad.stderr


def test_status_aggregates_are_remembered_until_a_write(tmp_path):
    """Store.cached: a status poll does not recount, but any write -- through
    this connection or by another process -- makes the next call recount."""
    path = tmp_path / "i.sqlite"
    store = Store(path)
    calls = []

    def count(db: sqlite3.Connection) -> int:
        calls.append(1)
        return int(db.execute("SELECT count(*) FROM meta").fetchone()[0])

    first = store.cached("n", count)
    assert store.cached("n", count) == first and len(calls) == 1
    store.set_meta("probe", "1")  # a write through this connection
    assert store.cached("n", count) == first + 1 and len(calls) == 2
    other = sqlite3.connect(path)  # a write by another process's connection
    with other:
        other.execute("INSERT INTO meta(key, value) VALUES ('probe2', '2')")
    other.close()
    assert store.cached("n", count) == first + 2 and len(calls) == 3
    assert store.cached("n", count) == first + 2 and len(calls) == 3
    store.close()


def _as_older_index(path: Path, version: int) -> None:
    """Make an index of today look as an older mdseek wrote it: schema 1 had no
    index over the vectors' keys, schemas 1-2 no passages (and chunked with the
    v4 chunker). The passages' vectors stay, as a real older index would not have
    them: the test then sees whether migrating re-embeds what it need not."""
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE documents DROP COLUMN props")
    if version == 3:  # schema 3: only the filters' props are missing
        db.execute(f"PRAGMA user_version={version}")
        db.commit()
        db.close()
        from mdseek.index.store.adopt import remember

        remember(path)
        return
    db.execute("DROP TABLE passages")
    db.execute("UPDATE documents SET chunker = 'v4:' || chunker")
    if version < 2:
        db.execute("DROP INDEX vectors_key")
    db.execute(f"PRAGMA user_version={version}")
    db.commit()
    db.close()
    from mdseek.index.store.adopt import remember

    remember(path)  # as that mdseek left it, vouched for on this machine


@pytest.mark.parametrize("version", [1, 2, 3])
def test_an_older_index_is_migrated_in_place_keeping_its_vectors(tmp_path, golden_index, version):
    """Schema 2 adds an index over the vectors' keys, schema 3 the passages
    table, schema 4 the notes' props (what filters read); an older file gets
    them on open, its chunks keep their vectors, and its documents are read
    again (the chunker changed, or their props are not stored), which writes
    their passages and props: a filter then works."""
    ws = workspace_with_index(tmp_path / "ws", golden_index)
    path = ws / ".mdseek" / "index.sqlite"
    db = sqlite3.connect(path)
    n_vectors = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    n_passages = db.execute("SELECT count(*) FROM passages").fetchone()[0]
    db.close()
    assert n_passages > 50  # the handbook has long sections
    _as_older_index(path, version)
    eng = Engine(ws)
    try:
        assert eng.store.migrated_from == version
        assert f"schema {version} to {SCHEMA_VERSION}" in " ".join(eng.notices)
        names = {
            r[0] for r in eng.store.db.execute("SELECT name FROM sqlite_master WHERE type='index'")
        }
        assert {"vectors_key", "passages_chunk", "passages_hash"} <= names
        rep = eng.index()
        assert rep.indexed == rep.files  # read again: the chunker's signature, or no props
        assert rep.embedded == 0 and eng.store.vectors.pending_count(eng.models.model_id) == 0
        props = eng.store.documents.props()
        assert None not in props.values() and len(props) == rep.files
        assert eng.store.counts()["passages"] == n_passages
        assert eng.store.db.execute("SELECT count(*) FROM vectors").fetchone()[0] == n_vectors
    finally:
        eng.close()
