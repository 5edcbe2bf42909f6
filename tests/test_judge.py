"""The judge's paired bootstrap (benchmarks/pooled.py) on inputs whose interval
is known by hand, and the COVID-QA converter on a tiny hand-written article."""

from __future__ import annotations

import json

import pytest

from benchmarks import data as D
from benchmarks import judge as J
from benchmarks import make_covidqa as M


def test_identical_scores_give_a_zero_interval():
    a = [0.0, 0.5, 1.0, 0.3]
    iv = J.paired_interval(a, list(a))
    assert (iv.diff, iv.lo, iv.hi, iv.n) == (0.0, 0.0, 0.0, 4)


def test_a_constant_shift_is_its_own_interval():
    a = [0.1, 0.2, 0.3, 0.4, 0.5]
    iv = J.paired_interval(a, [x + 0.1 for x in a])
    assert iv.diff == pytest.approx(0.1)
    assert iv.lo == pytest.approx(0.1)
    assert iv.hi == pytest.approx(0.1)


def test_one_win_in_two_queries_spans_zero_to_one():
    # differences (0, 1): a resample of two is (0,0), (0,1), (1,0) or (1,1), so
    # its mean is 0, 0.5 or 1 with chances 1/4, 1/2, 1/4: the 95% interval is [0, 1].
    iv = J.paired_interval([0.0, 0.0], [0.0, 1.0], draws=4000)
    assert iv.diff == 0.5
    assert (iv.lo, iv.hi) == (0.0, 1.0)


def test_strata_weigh_each_corpus_the_same():
    # corpus x: 3 queries each +0.3; corpus y: 1 query -0.1. Pooled by query the
    # mean would be +0.2; by corpus it is (0.3 - 0.1) / 2 = 0.1, and with every
    # difference constant inside its stratum the interval is that point.
    a = [0.0, 0.0, 0.0, 0.5]
    b = [0.3, 0.3, 0.3, 0.4]
    iv = J.paired_interval(a, b, strata=["x", "x", "x", "y"])
    assert iv.diff == pytest.approx(0.1)
    assert (iv.lo, iv.hi) == (pytest.approx(0.1), pytest.approx(0.1))


def test_seeded_and_paired():
    a = [0.2, 0.9, 0.4, 0.0, 0.7, 0.1]
    b = [0.3, 0.8, 0.6, 0.2, 0.7, 0.0]
    assert J.paired_interval(a, b) == J.paired_interval(a, b)
    with pytest.raises(ValueError):
        J.paired_interval(a, b[:-1])


def test_parse_set_values():
    assert J.parse_set(["dense_weight=0.7", "dense_weight_matched=none", "candidates=50",
                        "dense_norm=minmax", "passages=false"]) == {  # fmt: skip
        "dense_weight": 0.7, "dense_weight_matched": None, "candidates": 50,
        "dense_norm": "minmax", "passages": False,
    }  # fmt: skip


CONTEXT = (
    "A Study of Things\n\nhttps://example.org/x\n\nAuthors: A, B\nDate: 2020\n\n"
    "Abstract: Things matter.\n\n"
    "Text: "
    + " ".join(["alpha"] * 260)
    + "\n\n"
    + " ".join(["beta"] * 40)
    + "\n\n"
    + "The answer is gamma."
    + " delta" * 300
)


def test_covidqa_article_parts_and_judged_sections(tmp_path):
    start = CONTEXT.index("The answer is gamma")
    src = {"data": [{"paragraphs": [{"context": CONTEXT, "qas": [
        {"question": "What is the answer?", "id": 7,
         "answers": [{"text": "The answer is gamma.", "answer_start": start}]},
        {"question": "what is the  ANSWER?", "id": 8,
         "answers": [{"text": "The answer is gamma.", "answer_start": start}]},
        {"question": "Do things matter?", "id": 9,
         "answers": [{"text": "Things matter.", "answer_start": CONTEXT.index("Things matter")}]},
    ]}]}]}  # fmt: skip
    repo = tmp_path / "repo"
    (repo / M.SOURCE).parent.mkdir(parents=True)
    (repo / M.SOURCE).write_text(json.dumps(src), encoding="utf-8")
    st = M.build(repo, tmp_path / "covidqa")
    assert (st["kept"], st["queries"], st["duplicates"]) == (1, 2, 1)
    md = (tmp_path / "covidqa" / "docs" / "000-a-study-of-things.md").read_text()
    # 260 alphas close part 1; 40 betas start part 2, which the 301-word paragraph closes
    assert md.split("\n\n")[:4] == ["# A Study of Things", "## Abstract", "Things matter.",
                                    "## Part 1"]  # fmt: skip
    assert [ln for ln in md.split("\n") if ln.startswith("#")] == [
        "# A Study of Things", "## Abstract", "## Part 1", "## Part 2"]  # fmt: skip
    docs, qrels = D.load_covidqa(tmp_path)
    got = {qrels.queries[q]: qrels.sections[q] for q in qrels.queries}
    part2 = md.split("\n").index("## Part 2") + 1
    assert got == {
        "What is the answer?": [("000-a-study-of-things", part2)],
        "Do things matter?": [("000-a-study-of-things", 3)],
    }


def _corpus(name: str, n: int) -> tuple:
    """A corpus of ``n`` document-level queries, query i judged on document i."""
    from benchmarks.quality import Corpus

    qs = {f"{name}{i}": f"question {i}" for i in range(n)}
    qrels = D.QrelSet(qs, {q: {f"d{i}": 1} for i, q in enumerate(qs)})
    return Corpus(name, name, D.FIXTURES, qrels, False), list(qs)


def test_the_quality_run_reports_the_pool_and_every_knob_with_intervals():
    """quality_section on two hand-made corpora: the default finds every judged
    document first, the baseline second (nDCG@10 1/log2(3) = 0.6309), a knob
    finds none: differences by hand, pooled with each corpus weighing the same."""
    from benchmarks.quality import DEFAULT, KNOBS

    em, em_q = _corpus("emanual", 6)
    cq, cq_q = _corpus("covidqa", 2)
    first = {q: [(f"d{i}", 0, 1)] for i, q in enumerate(em_q)}
    first.update({q: [(f"d{i}", 0, 1)] for i, q in enumerate(cq_q)})
    second = {q: [("x", 0, 1), *hits] for q, hits in first.items()}
    em.baseline_runs = {q: second[q] for q in em_q}
    cq.baseline_runs = {q: second[q] for q in cq_q}
    knob = DEFAULT.but(**KNOBS[0][1][0][1])  # the first knob's first value

    class Bench:
        per_query = {
            (DEFAULT, "hybrid"): {c.name: {q: 1.0 for q in c.qrels.queries} for c in (em, cq)},
            (knob, "hybrid"): {c.name: {q: 0.0 for q in c.qrels.queries} for c in (em, cq)},
        }

        def score(self, cfg):  # every other knob equals the default here
            self.per_query[(cfg, "hybrid")] = self.per_query[(DEFAULT, "hybrid")]

    out = J.quality_section([em, cq], {}, Bench(), lambda m: None)
    assert out["pool"] == ["emanual", "covidqa"]
    for half in ("dev", "test"):
        if not out["baseline"]["pooled"].get(half):
            continue
        b = out["baseline"]["pooled"][half]
        assert (b["a"], b["b"]) == (pytest.approx(0.6309, abs=1e-4), 1.0)
        assert b["interval"]["lo"] == b["interval"]["hi"] == pytest.approx(1 - 0.63093, abs=1e-4)
    row = next(r for r in out["knobs"] if r["knob"] == KNOBS[0][0])
    assert row["pooled"]["dev"]["interval"]["diff"] == -1.0
    text = "\n".join(J.render_section(out))
    assert "| **pooled human questions** |" in text and f"| {KNOBS[0][0]} |" in text


def test_the_scifact_sample_keeps_every_judged_abstract_and_seeded_distractors():
    from benchmarks.make_scifact import sample

    corpus = [{"_id": str(i)} for i in range(20)]
    got = sample(corpus, {"3", "17"}, 4, seed=39)
    ids = [d["_id"] for d in got]
    assert {"3", "17"} <= set(ids) and len(ids) == 6
    assert ids == sorted(ids, key=int)  # corpus order
    assert got == sample(corpus, {"3", "17"}, 4, seed=39)
    assert sample(corpus, {"3"}, 100, seed=1) == corpus  # more asked than there are: all
