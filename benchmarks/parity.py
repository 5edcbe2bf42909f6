"""Ranking parity for refactors: the top 10 of every benchmark query, with exact scores.

    python -m benchmarks.parity OUT.json [--kept DIR]

Searches the fixture handbook (every question of tests/fixture_queries.json,
and the long forms) and the product docs (501 questions) in hybrid, lexical
and dense mode, with the lexical side from FTS5 and from memory, as typed
(prefix), for related sections and for odd inputs; writes each result's
path, line, score, ranks, snippet and explain, and the fused scores in full
precision (``float.hex``). Run it before and after a change that must not
change ranking, then compare the two files (``cmp a.json b.json``).

``--kept DIR``: start from indexes a benchmark run kept (``--work DIR
--keep-work``: ``DIR/fixtures-quality`` and ``DIR/rhdh``, each with ``docs/``
and ``index.sqlite``), copied first and never written; else each corpus is
indexed (and embedded) from scratch in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from mdseek.index.engine.engine import Engine
from mdseek.index.search import retrieve

from . import data

ODD = ["", "   ", "the and of", "what is it?", '"AND" NEAR( foo_bar* -x:y', "\x00\ud800x"]


class Fused:
    """Every ranking ``retrieve.rank_sections`` makes, kept (its scores in full)."""

    def __init__(self) -> None:
        self.last: list[retrieve.Scored] = []
        self._rank = retrieve.rank_sections

    def __enter__(self) -> Fused:
        def keep(*a, **kw):
            self.last = self._rank(*a, **kw)
            return self.last

        retrieve.rank_sections = keep
        return self

    def __exit__(self, *exc) -> None:
        retrieve.rank_sections = self._rank


def run(eng: Engine, fused: Fused, query: str, **kw) -> dict:
    fused.last = []
    resp = eng.search(query, limit=10, explain=True, **kw)
    results = []
    for r in resp.results:
        ex = dict(r.explain or {})
        ex.pop("rerank", None)
        results.append([r.path, r.start_line, r.score, r.lexical_rank, r.dense_rank, r.snippet, ex])
    return {
        "mode": resp.mode,
        "note": resp.note,
        "results": results,
        "exact": [[list(s.key), s.score.hex(), s.section.hex()] for s in fused.last[:10]],
    }


def corpus(name: str, docs: Path, index: Path, queries: dict[str, str], out: dict) -> None:
    eng = Engine(docs, index_path=index)
    rep = eng.index()
    print(f"{name}: {rep.indexed} files indexed, {rep.embedded} texts embedded", file=sys.stderr)
    qs = sorted(queries.items())
    long = [(qid, q) for qid, q in qs if len(q.split()) >= 20][:40]
    with Fused() as fused:
        for lexical in ("fts", "mem"):
            eng.lexical_side.in_memory = lexical == "mem"
            eng.lexical_side.in_memory_min = 0
            if eng.lexical_side.in_memory:
                eng.build_lexical()
            for mode in ("hybrid", "lexical", "dense")[: 2 if lexical == "mem" else 3]:
                out[f"{name}/{mode}/{lexical}"] = {q: run(eng, fused, t, mode=mode) for q, t in qs}
            out[f"{name}/prefix/{lexical}"] = {
                q: run(eng, fused, " ".join(t.split()[:2]), prefix_last=True) for q, t in qs[:60]
            }
            out[f"{name}/prefix-long/{lexical}"] = {
                q: run(eng, fused, t, prefix_last=True) for q, t in long
            }
        related = {}
        for path in sorted(eng.store.documents.all())[:8]:
            for ordinal in (0, 1, 2):
                fused.last = []
                resp = eng.related(path, ordinal, limit=5)
                related[f"{path}#{ordinal}"] = [
                    resp.mode,
                    resp.note,
                    [[r.path, r.start_line, r.score] for r in resp.results],
                    [[list(s.key), s.score.hex()] for s in fused.last[:5]],
                ]
        out[f"{name}/related"] = related
        out[f"{name}/odd"] = {q: run(eng, fused, q) for q in ODD}
    eng.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--kept", type=Path, help="a benchmark run's kept work folder")
    args = ap.parse_args()
    where = data.data_dir()
    if where is None:
        raise SystemExit(f"benchmark data not found in {data.where_data_should_be()}")
    _, rhdh = data.load_rhdh(where)
    _, fixed = data.load_fixture_queries(("paraphrase", "keyword", "tail"))
    _, long = data.load_fixture_queries(("paraphrase",), long=True)
    handbook = dict(fixed.queries) | {q + "-long": t for q, t in long.queries.items()}
    out: dict = {}
    with tempfile.TemporaryDirectory(prefix="mdseek-parity-") as tmp:
        work = Path(tmp)
        for name, kept, docs, queries in (
            ("fx", "fixtures-quality", data.FIXTURES, handbook),
            ("rhdh", "rhdh", data.rhdh_dir(where) / "docs", rhdh.queries),
        ):
            if args.kept is not None:
                shutil.copytree(args.kept / kept / "docs", work / name / "docs", symlinks=True)
                shutil.copy2(args.kept / kept / "index.sqlite", work / name / "index.sqlite")
            else:
                shutil.copytree(docs, work / name / "docs", symlinks=True)
            corpus(name, work / name / "docs", work / name / "index.sqlite", queries, out)
    args.out.write_text(json.dumps(out, indent=0, sort_keys=True))
    print(f"{args.out}: {sum(len(v) for v in out.values())} rankings", file=sys.stderr)


if __name__ == "__main__":
    main()
