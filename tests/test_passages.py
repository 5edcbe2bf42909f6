"""Passages: runs of a chunk's blocks with vectors of their own (index/text/passages.py),
scoring their chunk through its best row (index/search/dense.py), stored beside the
chunks (a schema-3 table) and kept in step with edits and deletions; and the
keyword weight that grows with the match (index/search/retrieve.py). Expected values
are written by hand from the documents below."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mdseek.index.engine.engine import Engine
from mdseek.index.search import retrieve
from mdseek.index.text.chunk import Chunker
from mdseek.index.text.parse import parse_text

KITCHEN = """# Office kitchen

## Using the kitchen

Label everything you put in the fridge with your name and the date. On Friday afternoon the facilities team throws away anything without a label, and anything older than a week, so take home what you want to keep.

The dishwasher runs every evening at six. Load your own mugs and plates before you leave, rinse off food first, and unload the clean dishes in the morning if you are the first one in the office.

Descale the coffee machine when its orange light comes on. The descaling tablets are in the cupboard above the sink, and the steps are printed on the side of the machine; it takes about twenty minutes.

If the fire alarm sounds while you are cooking, switch off the hob, leave the food and the hot pans where they are, and walk straight out to the assembly point in the car park by the north gate.
"""

SAFETY = """# Building safety

## Visitors

Visitors sign in at reception, wear a visitor badge at all times, and stay with the colleague who invited them. Reception keeps the visitor list, which the building manager checks every evening against the badges returned at the desk.
"""

TRAVEL = """# Travel

## Booking trains

Book train tickets through the travel portal at least a week ahead. Choose standard class unless the journey is over four hours, and keep the receipt for your expense claim.
"""

FIRE = "where do we gather when the fire alarm rings?"


def words(n: int, w: str = "word") -> str:
    return " ".join(f"{w}{i}" for i in range(n))


@pytest.fixture(scope="module")
def chunker():
    from mdseek.index.model.model import resolve_model
    from mdseek.index.model.tokenizer import load_tokenizer

    return Chunker(load_tokenizer(resolve_model(None)))


def test_each_paragraph_of_a_long_section_is_a_passage(chunker):
    chunks = chunker.chunk(parse_text(KITCHEN, "kitchen.md"))
    (section,) = [c for c in chunks if c.heading == "Using the kitchen"]
    texts = [p.embedding_text for p in section.passages]
    crumb = "Office kitchen > Using the kitchen\n\n"
    assert [t[len(crumb) :].split(".")[0] for t in texts] == [
        "Label everything you put in the fridge with your name and the date",
        "The dishwasher runs every evening at six",
        "Descale the coffee machine when its orange light comes on",
        "If the fire alarm sounds while you are cooking, switch off the hob, leave the food"
        " and the hot pans where they are, and walk straight out to the assembly point in"
        " the car park by the north gate",
    ]
    assert all(t.startswith(crumb) for t in texts)
    # offsets point into the chunk's own text
    last = section.passages[-1]
    assert section.text[last.start : last.end].startswith("If the fire alarm sounds")
    # a section of one paragraph has no passage: its chunk's vector is the same text
    assert [c.passages for c in chunker.chunk(parse_text(SAFETY, "s.md"))] == [(), ()]


def test_short_blocks_are_packed_and_list_items_read_one_by_one(chunker):
    doc = "\n\n".join(
        [
            "# Notes",
            words(10, "a") + ".",
            words(10, "b") + ".",
            words(10, "c") + ".",
            words(40, "d") + ".",
            "\n".join(f"- {words(12, w)}" for w in ("e", "f", "g")),
            words(5, "h") + ".",
        ]
    )
    packed = Chunker(chunker.tok, passage_words=30, passage_split=0)  # retrieval v3's
    (chunk,) = packed.chunk(parse_text(doc, "n.md"))
    firsts = [p.embedding_text.split("\n\n", 1)[1].split()[0] for p in chunk.passages]
    lasts = [p.embedding_text.split()[-1] for p in chunk.passages]
    # a+b+c reach 30 words; d alone; e+f+g (36 words) then h (5 words) joins them
    assert list(zip(firsts, lasts, strict=True)) == [
        ("a0", "c9."),
        ("d0", "d39."),
        ("-", "h4."),
    ]
    # the default: every block its own passage, list items one by one (d, 40 words, whole)
    (chunk,) = chunker.chunk(parse_text(doc, "n.md"))
    firsts = [p.embedding_text.split("\n\n", 1)[1].split()[0] for p in chunk.passages]
    assert firsts == ["a0", "b0", "c0", "d0", "-", "-", "-", "h0"]
    off = Chunker(chunker.tok, passage_words=0)
    assert off.chunk(parse_text(doc, "n.md"))[0].passages == ()
    assert off.signature != chunker.signature  # another chunking: documents are read again


def _index(tmp_path: Path, passage_words: int | None = None) -> Engine:
    ws = tmp_path / "ws"
    ws.mkdir(parents=True)
    (ws / "kitchen.md").write_text(KITCHEN)
    (ws / "safety.md").write_text(SAFETY)
    (ws / "travel.md").write_text(TRAVEL)
    eng = Engine(ws, index_path=tmp_path / "index.sqlite", passage_words=passage_words)
    rep = eng.index()
    assert rep.pending == 0
    return eng


def test_a_question_answered_by_one_paragraph_finds_its_section(tmp_path):
    """By meaning alone, the kitchen section's whole text is about the kitchen;
    its last paragraph answers the question. The visitors' section is nearer as
    a whole, so without passages it ranks first."""
    eng = _index(tmp_path / "on")
    plain = _index(tmp_path / "off", passage_words=0)
    try:
        assert eng.store.counts()["passages"] == 4
        assert plain.store.counts()["passages"] == 0
        top = eng.search(FIRE, limit=2, mode="dense", explain=True).results
        assert [(r.path, r.heading) for r in top] == [
            ("kitchen.md", "Using the kitchen"),
            ("safety.md", "Visitors"),
        ]
        # explain names the passage (1-based lines of the file) and the snippet is from it
        assert top[0].explain["dense_passage"]["lines"] == [11, 11]
        assert top[0].snippet.startswith("If the fire alarm sounds")
        without = [(r.path, r.heading) for r in plain.search(FIRE, limit=4, mode="dense").results]
        assert without[0] == ("safety.md", "Visitors")
        assert ("kitchen.md", "Using the kitchen") in without[1:]
    finally:
        eng.close()
        plain.close()


def test_an_edit_embeds_only_the_passage_that_changed_and_deletion_drops_them(tmp_path):
    eng = _index(tmp_path)
    try:
        f = eng.root / "kitchen.md"
        f.write_text(KITCHEN.replace("about twenty minutes", "about half an hour"))
        rep = eng.index_file(f)
        # the chunk's text and the descaling paragraph's: the other three passages kept
        assert rep.embedded == 2
        top = eng.search("how long does descaling take", limit=1, mode="dense").results
        assert "half an hour" in top[0].snippet  # from the new passage
        db = sqlite3.connect(eng.index_path)
        assert db.execute("SELECT count(*) FROM passages").fetchone()[0] == 4
        assert (
            db.execute("SELECT count(*) FROM vectors").fetchone()[0]
            == (
                db.execute(
                    "SELECT count(DISTINCT text_hash) FROM"
                    " (SELECT text_hash FROM chunks UNION ALL SELECT text_hash FROM passages)"
                ).fetchone()[0]
            )
        )  # the old passage's vector went with it
        f.unlink()
        eng.index_file(f)
        eng.index_file(eng.root / "travel.md")  # a later write drops the orphaned vectors
        assert db.execute("SELECT count(*) FROM passages").fetchone()[0] == 0
        n_vec = db.execute("SELECT count(*) FROM vectors").fetchone()[0]
        n_chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        db.close()
        assert n_vec == n_chunks == 4  # safety (2 sections) and travel (2)
        assert eng.search(FIRE, limit=1, mode="dense").results[0].path == "safety.md"
    finally:
        eng.close()


def test_a_first_index_embeds_every_chunk_before_any_passage(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kitchen.md").write_text(KITCHEN)
    eng = Engine(ws, index_path=tmp_path / "index.sqlite")
    try:
        eng.index(embed=False)
        pending = eng.store.vectors.pending_texts(eng.models.model_id)
        assert [k for _, _, k in pending] == [0, 0, 1, 1, 1, 1]  # 2 chunks, then 4 passages
        assert eng.embed_next(2) == 4  # a slice of two: the chunks
        assert {h for h, _, _ in eng.store.vectors.pending_texts(eng.models.model_id)} == {
            p.text_hash
            for c in eng.models.chunker.chunk(parse_text(KITCHEN, "kitchen.md"))
            for p in c.passages
        }
    finally:
        eng.close()


@pytest.mark.parametrize(
    ("best", "bound", "dense"),
    [
        (None, None, 0.8),  # no keyword candidate: the plain weight
        (0.0, 10.0, 0.8),
        (5.0, 10.0, 0.725),  # half the words' worth: 0.8 - 0.3 * 0.5 ** 2
        (10.0, 10.0, 0.5),  # a row matches every word
        (12.0, 10.0, 0.5),  # never past the matched weight
    ],
)
def test_the_keyword_weight_grows_with_the_match(best, bound, dense):
    rk = retrieve.Ranking(dense_weight=0.8, dense_weight_matched=0.5, match_power=2.0)
    w = retrieve.convex_weights(rk, best, bound)
    assert w["dense"] == pytest.approx(dense) and w["lexical"] == pytest.approx(1 - dense)
    off = retrieve.Ranking(dense_weight=0.8, dense_weight_matched=None)
    assert retrieve.convex_weights(off, best, bound)["dense"] == pytest.approx(0.8)


def test_shared_folder_copy_keeps_passages(tmp_path):
    """An index copied with its folder (same texts) re-embeds nothing, passages included."""
    eng = _index(tmp_path / "a")
    eng.close()
    dest = tmp_path / "b"
    shutil.copytree(tmp_path / "a" / "ws", dest / "ws")
    shutil.copy(tmp_path / "a" / "index.sqlite", dest / "index.sqlite")
    again = Engine(dest / "ws", index_path=dest / "index.sqlite")
    try:
        rep = again.index()
        assert rep.embedded == 0 and again.store.counts()["passages"] == 4
    finally:
        again.close()


def _at(cos: float) -> np.ndarray:
    """A unit vector at cosine ``cos`` with the query (the first axis)."""
    return np.array([cos, np.sqrt(1.0 - cos * cos), 0.0], dtype=np.float32)


def test_a_passage_row_scores_its_chunk_at_its_cosine_less_the_discount():
    """A chunk takes its best row, a passage row at its cosine minus the
    passage discount (0.02 here; the default is 0 since retrieval v4): a passage beats its chunk's own vector only by
    more than that. Written by hand: chunk 1's own row 0.50 against its passage
    at 0.51 (0.49 after the discount: the own row wins); chunk 2's own 0.40
    against its passage at 0.60 (0.58 wins); chunk 3, no passage, 0.55.

    Mutants caught: the discount's sign, in index/search/dense.py's
    ``best_rows`` (``sims = sims - self.passage_discount`` -> ``+``) and
    ``search`` (``scores = scores - self.passage_discount`` -> ``+``)."""
    from mdseek.index.search.dense import PASSAGE_DISCOUNT, DenseIndex

    assert PASSAGE_DISCOUNT == 0.0  # retrieval v4's default: a plain max
    q = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    d = DenseIndex(passage_discount=0.02)
    d.reset(
        np.array([1, 2, 3]),
        np.stack([_at(0.50), _at(0.40), _at(0.55)]),
        passage_ids=np.array([7, 8]),
        owners=np.array([1, 2]),
        passage_mat=np.stack([_at(0.51), _at(0.60)]),
    )
    best = d.best_rows(q, [1, 2, 3])
    assert best[1] == (pytest.approx(0.50, abs=1e-6), 1)  # its own row (the chunk id)
    assert best[2] == (pytest.approx(0.58, abs=1e-6), -8)  # the passage row (minus its id)
    assert best[3] == (pytest.approx(0.55, abs=1e-6), 3)
    assert d.scores(q, [1, 2]) == {
        1: pytest.approx(0.50, abs=1e-6),
        2: pytest.approx(0.58, abs=1e-6),
    }
    top = d.search(q, 3)
    assert [i for i, _ in top] == [2, 3, 1]
    assert [s for _, s in top] == pytest.approx([0.58, 0.55, 0.50], abs=1e-6)
    plain = DenseIndex(passage_discount=0.0)  # 0: a plain max, the passage at its cosine
    plain.reset(np.array([1]), _at(0.50)[None], np.array([7]), np.array([1]), _at(0.51)[None])
    assert plain.best_rows(q, [1])[1] == (pytest.approx(0.51, abs=1e-6), -7)


def test_a_long_paragraph_is_cut_into_sentence_runs_when_asked(chunker):
    """``passage_split``: a block of more words is cut at its sentence ends into
    runs of at least half as many; shorter blocks stay whole. By hand: the
    kitchen's paragraphs hold sentences of 13 + 26, 7 + 30, 10 + 26 and 39 words."""
    doc = parse_text(KITCHEN, "kitchen.md")

    def passages(**kw):
        chunks = Chunker(chunker.tok, **kw).chunk(doc)
        (section,) = [c for c in chunks if c.heading == "Using the kitchen"]
        return [p.embedding_text.split("\n\n", 1)[1] for p in section.passages]

    assert len(passages(passage_words=1)) == 4  # one passage per paragraph
    cut = passages(passage_words=1, passage_split=20)  # runs of >= 10 words
    assert [len(t.split()) for t in cut] == [13, 26, 37, 10, 26, 39]  # 7 words join the 30
    assert cut[0] == "Label everything you put in the fridge with your name and the date."
    assert passages(passage_words=1, passage_split=40) == passages(passage_words=1)
    assert Chunker(chunker.tok, passage_split=20).signature != chunker.signature
