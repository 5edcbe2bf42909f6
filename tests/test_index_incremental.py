"""Incremental re-indexing of saved files: unchanged chunk rows are kept, only
what changed is written, orphaned vectors go at once, and the result always
equals a fresh index (real SQLite files, real tokenizer and model)."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from pathlib import Path

from mdseek.index.engine.engine import Engine

from conftest import workspace_with_index


def rows(db_path: Path, rel: str) -> dict:
    """Everything the index holds about one document, ids left out."""
    db = sqlite3.connect(db_path)
    doc = db.execute(
        "SELECT id, size, hash, title, chunker FROM documents WHERE path=?", (rel,)
    ).fetchone()
    out = {
        "doc": doc[1:],
        "sections": db.execute(
            "SELECT * FROM sections WHERE doc_id=? ORDER BY ordinal", (doc[0],)
        ).fetchall(),
        "chunks": [
            r[2:]
            for r in db.execute(
                "SELECT * FROM chunks WHERE doc_id=? ORDER BY ordinal", (doc[0],)
            ).fetchall()
        ],
        "fts": db.execute(
            "SELECT f.title, f.headings, f.body FROM chunks c JOIN chunks_fts f ON f.rowid = c.id"
            " WHERE c.doc_id=? ORDER BY c.ordinal",
            (doc[0],),
        ).fetchall(),
    }
    db.close()
    return out


def integrity(db_path: Path) -> None:
    db = sqlite3.connect(db_path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n_chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert db.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == n_chunks
    stale = db.execute(
        "SELECT count(*) FROM chunks c JOIN chunks_fts f ON f.rowid = c.id WHERE f.body != c.text"
    ).fetchone()[0]
    assert stale == 0
    db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES('integrity-check')")
    db.close()


def big_doc(n_sections: int = 40) -> str:
    rng = random.Random(3)
    words = (
        "replica failover queue backlog certificate rotation pager deploy rollback schema".split()
    )
    parts = ["# Operations guide\n"]
    for i in range(n_sections):
        parts.append(f"## Part {i}\n")
        for _ in range(rng.randint(1, 4)):
            parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(20, 140))) + ".\n")
        if i % 7 == 3:
            parts.append(
                "```bash\n"
                + "\n".join(f"run step {j}" for j in range(rng.randint(3, 60)))
                + "\n```\n"
            )
    return "\n".join(parts)


def test_one_line_edit_keeps_unchanged_rows_and_drops_orphan_vectors(tmp_path, golden_index):
    ws = workspace_with_index(tmp_path / "handbook", golden_index)
    (ws / "ops.md").write_text(big_doc())
    eng = Engine(ws)
    eng.index()
    rel = "ops.md"
    before = {c.text_hash: c.id for c in eng.store.chunks.document_chunks(rel)}
    assert len(before) > 30
    texts_before = eng.store.chunks.document_hashes(rel)  # chunks' and passages'
    lines = (ws / rel).read_text().split("\n")
    target = next(i for i, ln in enumerate(lines) if ln.startswith("## Part 20")) + 1
    lines[target] += " The zebracrossing audit is on Tuesdays."
    (ws / rel).write_text("\n".join(lines))
    rep = eng.index_file(ws / rel)
    after = eng.store.chunks.document_chunks(rel)
    kept = [c for c in after if before.get(c.text_hash) == c.id]
    assert rep.indexed == 1 and 1 <= rep.chunks_written <= 2
    assert len(kept) >= len(after) - 2  # unchanged chunks keep their rows (and ids)
    # the new chunks' texts and their new passages' (unchanged passages keep their vectors)
    assert rep.embedded == len(eng.store.chunks.document_hashes(rel) - texts_before)
    assert rep.chunks_written <= rep.embedded <= 3 * rep.chunks_written
    assert eng.search("zebracrossing audit", limit=1, mode="lexical").results[0].path == rel
    # The old version's vector is gone without a reconcile: one vector per used text.
    db = sqlite3.connect(eng.index_path)
    n_vec = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
    n_used = db.execute(
        "SELECT count(DISTINCT text_hash) FROM (SELECT text_hash FROM chunks UNION ALL SELECT text_hash FROM passages)"
    ).fetchone()[0]
    db.close()
    assert n_vec == n_used
    integrity(eng.index_path)
    eng.close()


def test_edits_in_place_equal_a_fresh_index(tmp_path, tokenizer):
    """Random edits (insert, delete, change lines; add and remove sections; a
    heading renamed so breadcrumbs change) applied one by one through
    index_file leave exactly the rows a fresh index of the final text has."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "doc.md").write_text(big_doc(25))
    eng = Engine(ws)
    eng.index(embed=False)
    rng = random.Random(11)
    for step in range(25):
        lines = (ws / "doc.md").read_text().split("\n")
        i = rng.randrange(len(lines))
        op = rng.choice(["insert", "delete", "change", "section", "heading", "title"])
        if op == "insert":
            lines.insert(i, f"inserted line {step} about the failover queue.")
        elif op == "delete" and len(lines) > 5:
            del lines[i]
        elif op == "change":
            lines[i] = lines[i] + f" changed{step}"
        elif op == "section":
            lines.insert(i, f"\n## New part {step}\n\nfresh words {step}.\n")
        elif op == "heading":
            j = next((k for k, ln in enumerate(lines) if ln.startswith("## ")), 0)
            lines[j] = f"## Renamed {step}"
        else:
            lines[0] = f"# Operations guide v{step}"
        (ws / "doc.md").write_text("\n".join(lines))
        eng.index_file(ws / "doc.md", embed=False)
        fresh_dir = tmp_path / f"fresh{step}"
        fresh_dir.mkdir()
        (fresh_dir / "doc.md").write_text((ws / "doc.md").read_text())
        fresh = Engine(fresh_dir)
        fresh.index(embed=False)
        assert rows(eng.index_path, "doc.md") == rows(fresh.index_path, "doc.md"), (
            f"step {step} ({op})"
        )
        fresh.close()
    integrity(eng.index_path)
    eng.close()


def test_deleted_file_vectors_wait_for_a_rename_then_go(tmp_path, golden_index):
    ws = workspace_with_index(tmp_path / "handbook", golden_index)
    eng = Engine(ws)
    eng.index()
    src = ws / "handbook" / "policies" / "expenses.md"  # its title is in its front matter
    dst = src.with_name("expenses-renamed.md")

    def n_vec() -> int:
        with closing(sqlite3.connect(eng.index_path)) as db:
            return db.execute("SELECT count(*) FROM vectors").fetchone()[0]

    vec0 = n_vec()
    src.rename(dst)
    # An editor reports a rename as a delete then a create: the second finds the vectors.
    eng.index_file(src)
    rep = eng.index_file(dst)
    assert rep.indexed == 1 and rep.removed == 0
    assert rep.embedded == 0 and rep.chunks_written > 3  # the vectors were reused
    # A plain delete: its vectors go at the next write.
    gone = ws / "handbook" / "policies" / "leave.md"
    n_gone = len(eng.store.chunks.document_chunks(eng.rel(gone)))
    gone.unlink()
    eng.index_file(gone)
    eng.index_file(dst)  # any later write sweeps
    db = sqlite3.connect(eng.index_path)
    assert (
        db.execute("SELECT count(*) FROM vectors").fetchone()[0]
        == db.execute(
            "SELECT count(DISTINCT text_hash) FROM (SELECT text_hash FROM chunks UNION ALL SELECT text_hash FROM passages)"
        ).fetchone()[0]
    )
    db.close()
    assert n_vec() < vec0 and n_gone > 0
    eng.close()
