"""Threads by demand: bulk embedding on every core while nobody waits, one
thread while a request is in flight; a query during a first index is answered
while the embedding goes on."""

from __future__ import annotations

import os

import pytest
from waiting import wait_for

from mdseek.index.engine.folder import Folder
from mdseek.index.engine.opening import EngineOptions
from mdseek.index.model.demand import Demand, all_cores
from mdseek.index.model.embed import EmbedSettings
from mdseek.index.search.requests import SearchRequest

from conftest import grown_workspace


def test_demand_policy():
    d = Demand(quiet=0.3)
    assert d.bulk_threads(4) == 4  # idle: every core
    with d.request():
        assert d.busy() and d.bulk_threads(4) == 1
        with d.request():  # two at once
            pass
        assert d.bulk_threads(4) == 1  # one still in flight
    assert d.bulk_threads(4) == 1  # just ended: still quiet time
    wait_for(lambda: d.bulk_threads(4), lambda n: n == 4, timeout=5, what="every core again")
    d.touch()  # a save handed to the writer
    assert d.bulk_threads(4) == 1


@pytest.mark.skipif(all_cores() < 2, reason="one core: nothing to share")
def test_a_query_during_the_first_index_is_answered_while_embedding_goes_on(tmp_path):
    ws = grown_workspace(tmp_path / "ws", 3)
    f = Folder(ws)
    f.open(EngineOptions(index_path=tmp_path / "index.sqlite", embed=EmbedSettings()))
    eng = f.engine
    assert eng is not None and eng.models.embedder.settings.threads == 0  # by demand
    import threading

    t = threading.Thread(target=f.reconcile, daemon=True)
    t.start()
    try:
        wait_for(lambda: eng.models.embedder.texts_embedded, lambda n: n >= 64, timeout=120,
                 what="the first vectors")  # fmt: skip
        before = eng.models.embedder.texts_embedded

        def ask() -> dict:
            resp = f.search(
                SearchRequest.make("what do I do when the main database machine dies", limit=3)
            )
            assert resp.results and resp.mode == "hybrid"
            return dict(eng.models.embedder.bulk_threads_used)

        # while queries come, bulk batches run on one thread; between them on every core
        used = wait_for(ask, lambda u: u.get(1, 0) >= 1, timeout=60, every=0.1,
                        what="a bulk batch on one thread")  # fmt: skip
        assert used.get(all_cores(), 0) >= 1, used
        assert f.state == "indexing"  # answered during the first index ...
        wait_for(lambda: eng.models.embedder.texts_embedded, lambda n: n > before + 32, timeout=120,
                 what="embedding going on")  # fmt: skip
        assert f.state == "indexing" or f.pending == 0  # ... which went on meanwhile
    finally:
        f.close()
        t.join(60)


def _nice() -> int:
    import os
    import threading

    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="thread priorities are Linux's")
def test_bulk_model_work_runs_below_requests_and_the_caller_keeps_its_priority(monkeypatch):
    """The model's bulk work runs on a thread of nice 10 (requests' threads
    stay at the process's own), and the caller (the index's writer, which holds
    the store's lock between batches) is not lowered."""
    from mdseek.index.model import demand
    from mdseek.index.model.embed import Embedder

    before = _nice()
    assert demand.in_background(_nice) == 10
    seen: list[int] = []
    emb = Embedder(settings=EmbedSettings())  # the default: int8, threads by demand
    m = emb.load()
    real = type(m).encode

    def spy(self, texts, batch_size=None, prompt=""):
        seen.append(_nice())
        return real(self, texts, batch_size, prompt)

    monkeypatch.setattr(type(m), "encode", spy)
    vecs = emb.encode([f"note {i} about certificates" for i in range(20)])
    assert vecs.shape == (20, m.dim)
    assert seen and set(seen) == {10}  # every bulk batch on the low thread
    assert _nice() == before  # the caller's priority unchanged
    emb.encode_query("rotate the TLS certificate")
    assert seen[-1] == before  # a query runs on the caller's thread, at its priority


@pytest.mark.skipif(all_cores() < 2, reason="one core: every session has one thread")
def test_each_bulk_batch_runs_on_a_session_of_the_threads_it_records(monkeypatch):
    """The threads a bulk batch records (``bulk_threads_used``) are the threads
    of the ONNX Runtime session it runs on, read back from the session: one
    while a request is in flight, every core when none is.

    Mutant caught: in ``Embedder.encode`` (index/model/embed.py) the batch run
    on the all-threads session while it records one thread,
    ``in_background(run, n, `` -> ``in_background(run, os.cpu_count() or n, ``."""
    from mdseek.index.model import embed as embed_module
    from mdseek.index.model.demand import BULK_STEP
    from mdseek.index.model.embed import Embedder
    from mdseek.index.model.onnx_encoder import OnnxEncoder

    ran: list[int] = []  # intra-op threads of the session each batch ran on
    real = OnnxEncoder.encode

    def spy(self, texts, *args, **kwargs):
        ran.append(self.session.get_session_options().intra_op_num_threads)
        return real(self, texts, *args, **kwargs)

    monkeypatch.setattr(OnnxEncoder, "encode", spy)
    demand = Demand(quiet=0.0)  # this test's own requests only
    monkeypatch.setattr(embed_module, "DEMAND", demand)
    emb = Embedder(settings=EmbedSettings())  # threads by demand
    assert emb.settings.threads == 0 and emb.load().backend == "onnx"
    texts = [
        f"note {i}: the replica is promoted when the primary dies" for i in range(2 * BULK_STEP)
    ]
    with demand.request():  # a search in flight
        emb.encode(texts)
    assert emb.bulk_threads_used == {1: 2} and ran == [1, 1]
    ran.clear()
    emb.encode(texts)  # nobody waits
    assert emb.bulk_threads_used == {1: 2, all_cores(): 2} and ran == [all_cores()] * 2
