"""The optional reranker: a tiny cross-encoder built here re-orders the best
fused sections by its own scores (plumbing; nothing downloaded)."""

from __future__ import annotations

import pytest
from sandbox import run

from mdseek.index.engine.engine import Engine
from mdseek.index.model.model import ModelUnavailable
from mdseek.index.model.rerank import Reranker
from tests.tiny_models import build_cross_encoder

DOC = """# Handbook

## Payroll

Salaries are paid monthly on the 25th.

## Expenses

Taxis and hotels are paid back within 30 days.

## Leave

Holidays are paid; sick leave is paid too.

## Security

Badges are paid for by the company.
"""
# What the cross-encoder reads of each section: breadcrumb, blank line, chunk text.
PASSAGES = {
    "Payroll": "Handbook > Payroll\n\n## Payroll\n\nSalaries are paid monthly on the 25th.\n\n",
    "Expenses": "Handbook > Expenses\n\n## Expenses\n\nTaxis and hotels are paid back within 30 days.\n\n",
    "Leave": "Handbook > Leave\n\n## Leave\n\nHolidays are paid; sick leave is paid too.\n\n",
    "Security": "Handbook > Security\n\n## Security\n\nBadges are paid for by the company.\n",
}


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory):
    return build_cross_encoder(tmp_path_factory.mktemp("tiny-ce") / "ce", seed=3)


@pytest.fixture
def engine(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "handbook.md").write_text(DOC)
    eng = Engine(ws, index_path=tmp_path / "index.sqlite")
    eng.index(embed=False)
    yield eng
    eng.close()


def _own_scores(path, query: str) -> dict[str, float]:
    from sentence_transformers import CrossEncoder

    ce = CrossEncoder(str(path), device="cpu")
    names = list(PASSAGES)
    scores = ce.predict([(query, PASSAGES[n]) for n in names])
    return dict(zip(names, (float(s) for s in scores), strict=True))


def test_reranked_order_follows_the_cross_encoders_scores(engine, cross_encoder):
    fused = [r.heading for r in engine.search("paid", mode="lexical").results]
    assert sorted(fused) == sorted(PASSAGES)
    own = _own_scores(cross_encoder, "paid")
    want = sorted(PASSAGES, key=lambda n: -own[n])
    assert want != fused  # the reranker has something to do

    engine.searcher.reranker = Reranker(str(cross_encoder))
    resp = engine.search("paid", mode="lexical", explain=True)
    assert [r.heading for r in resp.results] == want
    for r in resp.results:
        assert r.explain["rerank"]["score"] == pytest.approx(own[r.heading], abs=1e-5)
        assert r.explain["rerank"]["ms"] > 0
    st = engine.status().reranker
    assert st["calls"] == 1 and st["top_n"] == 10 and st["last_ms"] > 0


def test_only_the_top_n_are_reordered(engine, cross_encoder):
    fused = [r.heading for r in engine.search("paid", mode="lexical").results]
    own = _own_scores(cross_encoder, "paid")
    engine.searcher.reranker = Reranker(str(cross_encoder), top_n=2)
    got = [r.heading for r in engine.search("paid", mode="lexical").results]
    assert got == sorted(fused[:2], key=lambda n: -own[n]) + fused[2:]


def test_a_reranker_that_cannot_load_leaves_the_fused_order(engine, tmp_path):
    fused = [r.heading for r in engine.search("paid", mode="lexical").results]
    engine.searcher.reranker = Reranker(str(tmp_path / "no-such-model"))
    assert [r.heading for r in engine.search("paid", mode="lexical").results] == fused
    assert "no-such-model" in engine.status().reranker["error"]
    with pytest.raises(ModelUnavailable):
        engine.searcher.reranker.load()


def test_top_n_is_bounded():
    with pytest.raises(ValueError, match="1..100"):
        Reranker("x", top_n=0)


def test_cli_rerank_explains_and_fails_in_one_line(tmp_path, cross_encoder):
    import json
    import sys

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "handbook.md").write_text(DOC)
    cmd = [sys.executable, "-m", "mdseek", "search", str(ws), "paid", "--mode", "lexical",
           "--db", str(tmp_path / "i.sqlite"), "--no-progress"]  # fmt: skip
    out = run([*cmd, "--json", "--explain", "--rerank", str(cross_encoder)], timeout=300)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["results"]
    own = _own_scores(cross_encoder, "paid")
    assert [r["heading"] for r in rows] == sorted(PASSAGES, key=lambda n: -own[n])
    assert all(r["explain"]["rerank"]["ms"] > 0 for r in rows)
    bad = run([*cmd, "--rerank", str(tmp_path / "missing")], timeout=300)
    assert bad.returncode == 1
    assert bad.stderr.startswith("mdseek: error: cannot load reranker")
    assert bad.stderr.count("\n") == 1
