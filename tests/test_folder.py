"""index/engine/folder.py (opened by opening.py, several at once by folders.py): the
one folder model under the language server, the MCP server and the command line.
Where the two servers used to behave differently, the behaviour kept is tested
here, once:

- a model that cannot be used: the bundled default takes over (servers);
- an index that cannot be opened: one line, state ``error`` (and ``error``
  overall when no folder opened);
- while indexing: keywords until every file is chunked and the model is loaded;
- several folders: one mode (or ``lexical``), every folder's note;
- other models' vectors are swept only once this one has loaded.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from mdseek.index.engine.engine import Engine
from mdseek.index.engine.folder import Folder
from mdseek.index.engine.folders import overall_state, search_folders, summary
from mdseek.index.engine.opening import EngineOptions, OpenError, open_engine
from mdseek.index.model.model import default_model_path
from mdseek.index.search.requests import SearchRequest
from mdseek.index.search.retrieve import NO_GOOD_MATCH

from conftest import workspace_with_index

INDEXING = (
    "lexical results only: indexing in progress (semantic results once the vectors are ready)"
)


@pytest.fixture
def ws(tmp_path: Path, golden_index: Path) -> Path:
    return workspace_with_index(tmp_path / "handbook", golden_index)


@pytest.fixture
def folders():
    made: list[Folder] = []
    yield made
    for f in made:
        f.close()


def _open(folders: list[Folder], path: Path, options: EngineOptions | None = None) -> Folder:
    f = Folder(path)
    folders.append(f)
    f.open(options or EngineOptions())
    return f


def test_a_model_that_cannot_be_used_gives_way_to_the_default(tmp_path: Path, ws: Path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    eng, notes = open_engine(ws, EngineOptions(model=str(broken)))
    try:
        assert eng.models.embedder.resolved == str(default_model_path())
        assert len(notes) == 1
        assert notes[0].startswith(f"model {str(broken)!r} cannot be used (")
        assert notes[0].endswith("; using the bundled default model")
    finally:
        eng.close()
    # the command line asks for no fallback: the engine keeps the model it was given
    eng, notes = open_engine(ws, EngineOptions(model=str(broken), fallback=False))
    try:
        assert eng.models.embedder.resolved != str(default_model_path()) and notes == []
    finally:
        eng.close()


def test_an_index_that_cannot_be_opened_is_one_line_and_an_error(
    tmp_path: Path, ws: Path, folders: list[Folder]
):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database, just some bytes " * 100)
    junk.chmod(0o600)
    with pytest.raises(OpenError) as exc:
        open_engine(ws, EngineOptions(index_path=junk))
    said = str(exc.value)
    assert "\n" not in said and str(junk) in said and "Traceback" not in said

    f = _open(folders, ws, EngineOptions(index_path=junk))
    assert f.engine is None and f.state == "error" and f.message == said
    st = f.status()
    assert (st.state, st.message, st.files, st.chunks) == ("error", said, 0, 0)
    # nothing will come from this folder: the answer says why, and is final
    answer = search_folders(SearchRequest.make("database failover", 5), [f])
    assert answer.hits == [] and answer.complete and answer.note == said
    # overall: "error" only when no folder answers at all
    assert summary([st]).state == "error"
    assert overall_state(["error", "error"]) == "error"
    assert overall_state(["error", "ready"]) == "lexical-only"
    assert overall_state(["ready", "indexing"]) == "indexing"
    assert overall_state(["ready", "ready"]) == overall_state([]) == "ready"


def test_keywords_until_the_folder_can_rank_by_meaning(ws: Path, folders: list[Folder]):
    f = _open(folders, ws)
    assert f.state == "starting" and not f.chunked
    resp = f.search(SearchRequest.make("what to do when the primary database fails", 5, "dense"))
    assert resp.mode == "lexical" and resp.note == INDEXING
    asked_lexical = f.search(SearchRequest.make("database failover", 5, "lexical"))
    assert asked_lexical.mode == "lexical" and asked_lexical.note is None
    done = f.completeness("hybrid")
    assert not done.complete
    assert done.note == "partial results: the folder is still being read (results may miss files)"

    assert f.reconcile() is not None and f.state == "ready"
    for mode in ("hybrid", "dense", "lexical"):
        resp = f.search(SearchRequest.make("what to do when the primary database fails", 5, mode))
        assert resp.mode == mode and resp.note is None and resp.results
    assert f.completeness("hybrid").complete


def test_several_folders_say_no_good_match_once_and_only_when_none_matches(
    tmp_path: Path, ws: Path, folders: list[Folder]
):
    other = tmp_path / "garden"
    other.mkdir()
    (other / "garden.md").write_text(
        "# Garden\n\n## Compost\n\nTurn the database compost weekly.\n\n"
        "## Tomatoes\n\nStake the tomatoes before the first truss sets.\n"
    )
    a, b = _open(folders, ws), _open(folders, other)
    a.reconcile()
    b.reconcile()
    assert (a.state, b.state) == ("ready", "ready")
    nowhere = search_folders(SearchRequest.make("quokka island marsupial", 10, "hybrid"), [a, b])
    assert nowhere.notes[0] == NO_GOOD_MATCH and nowhere.note
    assert nowhere.note.count("no section matches well") == 1
    # the garden holds every word: the handbook's weak match is not the answer's
    garden = search_folders(SearchRequest.make("database compost", 10, "hybrid"), [a, b])
    assert garden.hits and garden.hits[0].result.heading == "Compost"
    assert "no section matches well" not in (garden.note or "")


def test_several_folders_one_mode_and_every_note(tmp_path: Path, ws: Path, folders: list[Folder]):
    other = tmp_path / "notes"
    other.mkdir()
    (other / "garden.md").write_text(
        "# Garden\n\n## Compost\n\nTurn the database compost weekly.\n"
    )
    before = Engine(other)  # an index from an earlier run, chunks only
    before.index(embed=False)
    before.close()
    third = tmp_path / "third"
    third.mkdir()
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database " * 100)
    junk.chmod(0o600)
    a = _open(folders, ws)
    b = _open(folders, other)
    c = _open(folders, third, EngineOptions(index_path=junk))
    a.reconcile()
    assert (a.state, b.state, c.state) == ("ready", "starting", "error")

    answer = search_folders(SearchRequest.make("database compost", 20, "hybrid"), [a, b, c])
    # a ranked by meaning, b (still starting) by keywords: the answer says lexical,
    # with what every folder has to say (not the first folder's note only)
    assert answer.mode == "lexical" and not answer.complete
    assert answer.notes == [
        INDEXING,
        "partial results: the folder is still being read (results may miss files);"
        " 2 of 2 texts still wait for their vector (semantic ranking will change as they arrive)",
        c.message,
    ]
    assert c.message and str(junk) in c.message
    scores = [r.score for _, r in answer.hits]
    assert scores == sorted(scores, reverse=True)
    assert {f.name for f, _ in answer.hits} == {"handbook", "notes"}
    assert ("notes", "garden.md") in {(f.name, r.path) for f, r in answer.hits}

    b.reconcile()
    answer = search_folders(
        SearchRequest.make("database compost", 3, "dense"), [a, b], paths={b: ("*.md",)}
    )
    assert answer.mode == "dense" and answer.complete and answer.note is None
    assert len(answer.hits) == 3


def _vectors(index: Path) -> dict[str, int]:
    db = sqlite3.connect(index)
    try:
        return dict(db.execute("SELECT model, count(*) FROM vectors GROUP BY model").fetchall())
    finally:
        db.close()


def _add_other_model(index: Path, model: str) -> None:
    db = sqlite3.connect(index)
    try:
        db.execute(
            "INSERT INTO vectors (model, text_hash, dim, vec) VALUES (?, 'h', 1, x'00000000')",
            (model,),
        )
        db.commit()
    finally:
        db.close()
    from mdseek.index.store.adopt import remember

    remember(index)  # as an older mdseek left it: its own write, vouched for


def test_other_models_vectors_go_only_once_this_model_has_loaded(
    tmp_path: Path, ws: Path, golden_index: Path, folders: list[Folder], monkeypatch
):
    index = ws / ".mdseek" / "index.sqlite"
    _add_other_model(index, "some-older-model")
    ours = {m: n for m, n in _vectors(index).items() if m != "some-older-model"}
    # nothing to embed at this start, and no model loaded yet (without the
    # background load, which may or may not have finished): reconcile loads it,
    # then sweeps
    monkeypatch.setattr(Folder, "_preload", lambda self: None)
    f = _open(folders, ws)
    assert f.engine is not None and not f.engine.models.embedder.loaded
    rep = f.reconcile()
    assert rep is not None and rep.embedded == 0 and f.state == "ready"
    assert _vectors(index) == ours

    # a model that cannot load sweeps nothing: the vectors stay for when it is fixed
    copy = workspace_with_index(tmp_path / "second", golden_index)
    _add_other_model(copy / ".mdseek" / "index.sqlite", "some-older-model")
    before = _vectors(copy / ".mdseek" / "index.sqlite")
    g = _open(folders, copy, EngineOptions(model=str(tmp_path / "no-model"), fallback=False))
    g.reconcile()
    assert g.state == "lexical-only" and "no-model" in (g.message or "")
    assert _vectors(copy / ".mdseek" / "index.sqlite") == before


def test_changes_are_chunked_at_once_and_embedded_in_the_background(
    ws: Path, folders: list[Folder]
):
    f = _open(folders, ws)
    f.reconcile()
    embedded = threading.Event()
    f.on_embedded = embedded.set
    (ws / "okapi.md").write_text("# Okapi\n\n## Allowance\n\nThe quillwhistle stipend.\n")
    assert f.changed()  # the scan sees the new file and chunks it before answering
    resp = f.search(SearchRequest.make("quillwhistle", 3, "lexical"))
    assert [r.path for r in resp.results] == ["okapi.md"]
    assert embedded.wait(60), "the background vectors never came"
    assert f.status().pending_embeds == 0 and f.pending == 0
    resp = f.search(SearchRequest.make("a stipend for the okapi", 3, "dense"))
    assert resp.results[0].path == "okapi.md"
