"""The first reading pass runs in slices (issue 23: a 10,000-note folder read
as one job made a save wait ~20 min): the files open in an editor are read
first, a save between two slices is searchable at once, and the files a save
already indexed are not written twice. Engine level, real SQLite, no model."""

from __future__ import annotations

import os

from mdseek.index.engine.engine import Engine, IndexReport
from mdseek.index.search.requests import SearchRequest


def _note(path, title: str, word: str) -> None:
    path.write_text(f"# {title}\n\nThis note mentions {word} once.\n", encoding="utf-8")


def test_open_files_first_and_a_save_between_slices(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, word in [("a", "anemone"), ("b", "bramble"), ("c", "cormorant"), ("d", "dunlin")]:
        _note(ws / f"{name}.md", name.upper(), word)
    eng = Engine(ws, index_path=tmp_path / "index.sqlite")
    rep = IndexReport()

    reading = eng.start_reading(rep, first=["c.md"])
    assert rep.files == 4
    assert eng.read_next(reading, 1, rep) == 3
    assert sorted(eng.store.documents.all()) == ["c.md"]  # the open file, not scan order's a.md
    assert eng.search("cormorant", limit=3, mode="lexical").results[0].path == "c.md"

    # A save of a file not read yet, between two slices: searchable at once.
    _note(ws / "d.md", "D", "sanderling")
    st = os.stat(ws / "d.md")
    os.utime(ws / "d.md", ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    eng.index_file(ws / "d.md", embed=False)
    hits = eng.search("sanderling", limit=3, mode="lexical").results
    assert [h.path for h in hits] == ["d.md"]

    assert eng.read_next(reading, 2, rep) == 1
    assert eng.read_next(reading, None, rep) == 0
    eng.finish_reading(rep)
    assert sorted(eng.store.documents.all()) == ["a.md", "b.md", "c.md", "d.md"]
    assert (rep.indexed, rep.unchanged) == (3, 1)  # d.md, saved meanwhile, was not written again
    assert [h.path for h in eng.search("bramble", limit=3, mode="lexical").results] == ["b.md"]
    assert eng.search("dunlin", limit=3, mode="lexical").results == []


def test_index_reads_every_file_in_one_call(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, word in [("a", "anemone"), ("b", "bramble")]:
        _note(ws / f"{name}.md", name.upper(), word)
    eng = Engine(ws, index_path=tmp_path / "index.sqlite")
    rep = eng.index(embed=False)
    assert (rep.files, rep.indexed, rep.unchanged) == (2, 2, 0)
    (ws / "a.md").unlink()
    rep = eng.index(embed=False)
    assert (rep.files, rep.indexed, rep.unchanged, rep.removed) == (1, 0, 1, 1)
    assert sorted(eng.store.documents.all()) == ["b.md"]


def test_open_files_are_searchable_by_meaning_while_the_rest_is_read(tmp_path, monkeypatch):
    """A folder read in slices of 5 files with the model loaded: after the first
    slice, the note open in the editor has its vectors and a search by meaning
    finds it by meaning alone (partial, said so) although most files are not read yet."""
    from mdseek.index.engine import folder as folder_mod
    from mdseek.index.engine.folder import Folder
    from mdseek.index.engine.opening import EngineOptions

    from conftest import copy_fixtures

    ws = copy_fixtures(tmp_path / "ws")
    opened = "handbook/runbooks/database-failover.md"
    monkeypatch.setattr(folder_mod, "READ_SLICE", 5)
    f = Folder(ws)
    try:
        f.open(EngineOptions(index_path=tmp_path / "index.sqlite"))
        f.first_files = lambda: [opened]
        assert (
            f.engine is not None and f.engine.models.embedder.available()
        )  # as the preload makes it
        seen = []
        real = Folder._embed_open

        def after_first_slice(self, rep):
            real(self, rep)
            if not seen:
                eng = self.engine
                # its chunks' texts (the passages, which only refine, may take a second slice)
                hashes = eng.store.chunks.document_hashes(opened, passages=False)
                seen.append(
                    (
                        len(eng.store.documents.all()),
                        len(hashes),
                        eng.store.vectors.pending_for(eng.models.model_id, hashes),
                        self.search(
                            SearchRequest.make(
                                "what do I do when the main database machine dies", 3, "dense"
                            )
                        ),
                        self.completeness("dense"),
                    )
                )

        monkeypatch.setattr(Folder, "_embed_open", after_first_slice)
        assert f.reconcile() is not None and f.state == "ready"
        docs, chunks, pending, resp, done = seen[0]
        assert (docs, pending) == (
            5,
            [],
        ) and chunks > 0  # 5 of 24 files read, the open one embedded
        assert resp.mode == "dense" and resp.results and {r.path for r in resp.results} == {opened}
        assert not done.complete
        assert done.note.startswith(
            "partial results: the folder is still being read (results may miss files); "
        )
        assert "texts still wait for their vector" in done.note
    finally:
        f.close()
