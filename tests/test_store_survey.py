"""store/survey.py: the whole-index reads the benchmarks use instead of SQL."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mdseek.index.engine.engine import Engine
from mdseek.index.store import survey

from conftest import write_tree

BODY = "The kestrel hovers over the field before it drops onto a vole in the grass."
NOTES = {
    "a.md": f"# Alpha\n\n{BODY}\n\n## Beta\n\n{BODY} Beta.\n",
    "sub/b.md": f"# Gamma\n\n{BODY} Gamma.\n",
    "empty.md": "",
}


@pytest.fixture
def index(tmp_path: Path) -> Path:
    ws = write_tree(tmp_path / "ws", NOTES)
    path = tmp_path / "i.sqlite"
    eng = Engine(ws, index_path=path, passage_words=0)
    eng.index(embed=False)
    eng.close()
    return path


def test_the_reads_see_the_chunks_and_sections(index: Path):
    assert survey.chunks_per_document(index) == [("a.md", 2), ("empty.md", 0), ("sub/b.md", 1)]
    texts = survey.embedding_texts(index)
    assert len(texts) == 3 and texts == sorted(texts)
    assert any(t.startswith("Alpha > Beta") for t in texts)
    assert len(survey.embedding_texts(index, distinct=False)) == 3
    assert len(survey.text_hashes(index)) == 3
    spans = survey.section_spans(index)
    by_path = sorted((p, a, b) for p, a, b in spans.values())
    assert by_path == [("a.md", 0, 4), ("a.md", 4, 7), ("sub/b.md", 0, 3)]
    for doc, first, last in survey.chunk_sections(index).values():
        assert (doc, first) in spans and (doc, last) in spans


def test_vectors_are_counted_and_read_per_model(index: Path):
    assert survey.vector_count(index) == 0
    assert survey.waiting(index) == 3
    assert survey.waiting(index, paths=["a.md"]) == 2
    assert survey.waiting(index, paths=["a.md", "not-yet.md"]) is None  # not indexed yet
    assert survey.waiting(index.with_name("absent.sqlite")) is None
    hashes = survey.text_hashes(index)
    from mdseek.index.store.store import Store

    store = Store(index)
    store.vectors.put_vectors("m1", hashes[:2], np.eye(2, 4, dtype=np.float32))
    store.close()
    assert survey.models(index) == ["m1"]
    assert survey.vector_count(index) == 2
    assert survey.waiting(index, "m1") == 1 and survey.waiting(index, "m2") == 3
    assert survey.chunks_with_vectors(index) == 2
    got = survey.vectors_by_hash(index, "m1")
    assert sorted(got) == hashes[:2]
    assert got[hashes[1]].tolist() == [0.0, 1.0, 0.0, 0.0]


def test_a_copy_is_the_same_index_with_or_without_vectors(index: Path, tmp_path: Path):
    from mdseek.index.store.store import Store

    store = Store(index)
    store.vectors.put_vectors("m1", survey.text_hashes(index)[:1], np.ones((1, 4), np.float32))
    store.close()
    dest = tmp_path / "copies" / "c.sqlite"
    dest.parent.mkdir()
    dest.write_bytes(b"old")
    survey.copy(index, dest)
    assert survey.chunks_per_document(dest) == survey.chunks_per_document(index)
    assert survey.vector_count(dest) == 1
    bare = tmp_path / "copies" / "bare.sqlite"
    survey.copy(index, bare, vectors=False)
    assert survey.vector_count(bare) == 0 and survey.embedding_texts(bare)
    survey.settle(bare)
    assert not Path(str(bare) + "-wal").exists() or Path(str(bare) + "-wal").stat().st_size == 0
