"""A long question read in parts (issue "Retrieval v4", item 3): the ask (its last
sentence(s) ending in ``?``) is embedded beside the whole text and the dense side
reads both; the keyword side reads every word as before."""

from __future__ import annotations

import numpy as np
import pytest

from mdseek.index.engine.dense_side import join_ask
from mdseek.index.engine.engine import Engine
from mdseek.index.search import retrieve
from mdseek.index.search.dense import DenseIndex, cosines
from mdseek.index.search.query import Query, ask_of

from conftest import write_tree

SCENARIO = (
    "We moved into a new flat in another city last month. The removal van was late, the"
    " landlord lost the spare keys, the boxes are still everywhere in the hallway and the"
    " kitchen, and the broadband engineer only comes next week, so the whole household is"
    " living out of cardboard boxes."
)


def test_the_ask_is_the_last_questions():
    assert ask_of(f"{SCENARIO} How do I reset my password?") == "How do I reset my password?"
    # questions right before it belong to the ask; a sentence after it does not
    assert ask_of(f"{SCENARIO} Is it safe? How do I reset it? Thanks.") == (
        "Is it safe? How do I reset it?"
    )


def test_no_ask_without_a_question_mark_or_a_scenario():
    assert ask_of(SCENARIO) is None  # only a scenario: the whole text is read
    assert ask_of("How do I reset my password?") is None  # short: nothing to read apart
    long_q = " ".join(["why"] * 25) + "?"
    assert ask_of(long_q) is None  # one sentence: the ask is the whole text
    assert ask_of(f"Is it safe? {SCENARIO.replace('.', '?')}") is None  # questions only
    assert Query.parse(f"{SCENARIO} How now?", question=False).ask is None  # a section's text


def test_two_query_rows_score_a_row_by_the_closer():
    mat = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    both = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    assert cosines(mat, both).tolist() == pytest.approx([1.0, 1.0, 0.8])
    idx = DenseIndex(passage_discount=0.0)
    idx.reset(np.array([1, 2, 3]), mat, np.zeros(0, dtype=np.int64),
              np.zeros(0, dtype=np.int64), np.zeros((0, 2), dtype=np.float32))  # fmt: skip
    assert [c for c, _ in idx.search(both, 3)][:2] == [1, 2]
    assert idx.scores(both, [3]) == {3: pytest.approx(0.8)}


def test_join_ask_mean_and_max():
    whole = np.array([1.0, 0.0], dtype=np.float32)
    ask = np.array([0.0, 1.0], dtype=np.float32)
    mean = join_ask(whole, ask, retrieve.Ranking(ask="mean", ask_weight=0.5))
    assert mean.tolist() == pytest.approx([2**-0.5, 2**-0.5])
    lean = join_ask(whole, ask, retrieve.Ranking(ask="mean", ask_weight=0.75))
    assert lean.tolist() == pytest.approx([1 / 10**0.5, 3 / 10**0.5])
    assert join_ask(whole, ask, retrieve.Ranking(ask="max")).tolist() == [[1, 0], [0, 1]]


NOTES = {
    "home/moving.md": "# Moving house\n\n## Settling into the new flat\n\n"
    "A checklist for the move to a new flat in another city: book the removal van, get the"
    " landlord to hand over every key including the spare keys, label the cardboard boxes"
    " by room, unpack the kitchen boxes first and clear the hallway, and book the broadband"
    " engineer before the move so the household is online on day one.\n",
    "it/accounts.md": "# Accounts\n\n## Forgotten sign-in secret\n\n"
    "Open the sign-in page, choose forgotten secret and follow the emailed link to choose a"
    " new one; the old one stops working at once.\n",
}
ASK = "How do I get back into my account after forgetting my login credentials?"


@pytest.fixture(scope="module")
def notes_engine(tmp_path_factory):
    root = write_tree(tmp_path_factory.mktemp("ask-notes"), NOTES)
    eng = Engine(root, index_path=root.parent / "ask-index.sqlite")
    eng.index()
    yield eng
    eng.close()


def first(eng: Engine, text: str, mode: str = "hybrid") -> str:
    return eng.search(text, limit=2, mode=mode).results[0].heading


def test_a_scenario_then_an_ask_finds_the_asks_section(notes_engine):
    """The scenario shares many words and all its meaning with the moving notes;
    the ask shares no word with the accounts section. Read whole (ask off), the
    moving notes come first; read in parts (the default), the ask's section."""
    eng = notes_engine
    query = f"{SCENARIO} {ASK}"
    assert Query.parse(query).ask == ASK
    assert first(eng, ASK) == "Forgotten sign-in secret"
    eng.searcher.ranking = retrieve.Ranking(ask="off")
    try:
        assert first(eng, query) == "Settling into the new flat"  # the whole text alone
    finally:
        eng.searcher.ranking = retrieve.DEFAULT
    assert first(eng, query) == "Forgotten sign-in secret"


def test_a_scenario_alone_and_empty_parts_embed_the_whole_text_once(notes_engine, monkeypatch):
    eng = notes_engine
    seen: list[str] = []
    real = eng.models.embedder.encode_query
    monkeypatch.setattr(eng.models.embedder, "encode_query", lambda t: seen.append(t) or real(t))
    eng.search(SCENARIO, limit=2)
    assert seen == [SCENARIO]  # no "?": no ask, the whole text alone
    seen.clear()
    eng.search(f"{SCENARIO}   {ASK}  ", limit=2)
    assert len(seen) == 2 and seen[1] == ASK  # the whole text, then the ask
    assert all(t.strip() for t in seen)  # never an empty part
