"""Aliases count as titles in search (the real engine, a real SQLite file): a
query naming only a note's alias finds the note lexically, the embedded text
carries the alias in its breadcrumb, and removing the alias takes it out of
the index again. Expected values are written by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdseek.index.engine.engine import Engine

NOTES = {
    "falcon.md": (
        "---\naliases: [Kestrel, Peregrine plan]\n---\n"
        "# Falcon notes\n\nThe migration of the billing database to the new cluster.\n"
        "\n## Rollback\n\nRestore last night's snapshot and replay the queue.\n"
    ),
    "owl.md": "# Owl notes\n\nThe nightly report of every failed login.\n",
    "heron.md": "# Heron notes\n\nHow the support rota is drawn up each month.\n",
}


@pytest.fixture
def eng(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for rel, text in NOTES.items():
        (ws / rel).write_text(text)
    e = Engine(ws, index_path=tmp_path / "i.sqlite")
    yield e
    e.close()


def paths(eng: Engine, query: str) -> list[tuple[str, str]]:
    """The sections found, sorted (BM25 orders them by length, not the point here)."""
    return sorted((r.path, r.heading) for r in eng.search(query, limit=5, mode="lexical").results)


def test_an_alias_only_query_finds_the_note(eng: Engine):
    eng.index(embed=False)
    assert paths(eng, "kestrel") == [("falcon.md", "Falcon notes"), ("falcon.md", "Rollback")]
    assert paths(eng, "peregrine plan") == [
        ("falcon.md", "Falcon notes"),
        ("falcon.md", "Rollback"),
    ]
    texts = [c.embedding_text for c in eng.store.chunks.document_chunks("falcon.md")]
    assert texts[0].startswith(
        "Falcon notes (Kestrel, Peregrine plan)\n\n# Falcon notes\n\nThe migration"
    )
    assert texts[1].startswith("Falcon notes (Kestrel, Peregrine plan) > Rollback\n\n")
    shown = {r.breadcrumb for r in eng.search("kestrel", limit=5, mode="lexical").results}
    assert shown == {"Falcon notes", "Falcon notes > Rollback"}  # shown: the title alone


def test_an_alias_removed_is_no_longer_found(eng: Engine, tmp_path: Path):
    eng.index(embed=False)
    note = tmp_path / "ws" / "falcon.md"
    note.write_text(NOTES["falcon.md"].replace("Kestrel, ", ""))
    eng.index_file(note, embed=False)
    assert paths(eng, "kestrel") == []
    assert [p for p, _ in paths(eng, "peregrine")] == ["falcon.md", "falcon.md"]


def test_an_edit_rewrites_only_its_own_lexical_rows(eng: Engine, tmp_path: Path):
    eng.index(embed=False)
    note = tmp_path / "ws" / "falcon.md"
    note.write_text(NOTES["falcon.md"].replace("replay the queue", "replay the whole queue"))
    ids = {c.heading: c.id for c in eng.store.chunks.document_chunks("falcon.md")}
    eng.store.postings.take_fts_touched()
    eng.index_file(note, embed=False)
    after = {c.heading: c.id for c in eng.store.chunks.document_chunks("falcon.md")}
    assert after["Falcon notes"] == ids["Falcon notes"]  # unchanged: same row
    # only the edited chunk's rows: the old one deleted, the new one inserted
    assert eng.store.postings.take_fts_touched() == {ids["Rollback"], after["Rollback"]}
    assert paths(eng, "whole queue") == [("falcon.md", "Rollback")]
