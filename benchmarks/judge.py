"""The judge: one pooled benchmark of questions people wrote, with a paired
bootstrap interval for every difference (issue "Retrieval v4").

    python -m benchmarks.judge --variant NAME [--work DIR]     a named variant against the default
    python -m benchmarks.judge --set dense_weight=0.7 [--index blocks]   any Config change
    python -m benchmarks.judge --list                          the named variants
    python -m benchmarks.judge --product OUT.json              per-query nDCG@10 of Engine.search
    python -m benchmarks.judge --compare A.json B.json         B minus A, from two --product files

*Pool*: E-Manual (the people's questions, and the same after a scenario
paragraph), SciFact's claims (document level) and COVID-QA (questions experts
wrote on scientific articles, :mod:`benchmarks.make_covidqa`), each split dev/test as :func:`data.split_qids`
does (E-Manual and COVID-QA by judged section). The pooled figure of a half is
the mean of the pool corpora's means (each corpus weighs the same, whatever
its number of questions), and its interval a stratified paired bootstrap: per
query the variant's nDCG@10 minus the default's, queries resampled with
replacement inside each corpus, :data:`DRAWS` draws, seeded. The product
docs (questions a language model wrote), the fixture paraphrases and the long
form of COVID-QA are reported beside the pool, never in it.

A variant is replayed from cached candidate lists (``replay.Replay``: the
engine's own functions, checked equal to ``Engine.search``), so it costs
seconds; a variant of the index (per-block passages, int8 vectors) is a copy
of the default index brought up to date with that setting (only what differs
is embedded) and kept in the work folder. Query vectors are cached there too.

Data: ``$MDSEEK_BENCH_DATA`` (folders joined with ``os.pathsep``: the shared
data and, e.g., ``/work/data`` where ``make_covidqa`` wrote COVID-QA).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from . import data as D
from .pooled import (
    BESIDE,
    DRAWS,
    EVERY,
    LONG,
    POOL,
    SEED,
    SPLITS,
    Interval,
    Scores,
    compare,
    halves,
    paired_interval,
    quality_section,
    render,
    render_section,
)
from .quality import (
    DEFAULT,
    Config,
    Corpus,
    Replay,
    check_replay,
    per_query,
)

# The judge's statistics live in benchmarks/pooled.py; ``judge.X`` keeps working.
__all__ = [
    "BESIDE", "DRAWS", "EVERY", "INDEXES", "LONG", "POOL", "SEED", "SPLITS", "VARIANTS",
    "Interval", "Judge", "Scores", "TextVectors", "compare", "corpora", "halves", "main",
    "on_base", "paired_interval", "parse_set", "quality_section", "query_vectors", "render",
    "render_section",
]  # fmt: skip

Log = Callable[[str], None]


# Index variants: Engine keyword arguments of a copy of the default index.
INDEXES: dict[str, dict] = {
    "default": {},  # the engine's own passages, whatever they are
    "v3": {"passage_words": 30, "passage_split": 0},  # retrieval v3: runs of >= 30 words
    "blocks": {"passage_words": 1, "passage_split": 0},  # every block its own passage
    # every block its own passage, a block of over 60 words cut into sentence runs of >= 30
    "sentences": {"passage_words": 1, "passage_split": 60},
    "sentences-40": {"passage_words": 1, "passage_split": 40},
    "sentences-100": {"passage_words": 1, "passage_split": 100},
    "split-60": {"passage_words": 30, "passage_split": 60},  # 30-word runs, long blocks cut first
    "int8": {"precision": "int8"},
    "sentences-int8": {"passage_words": 1, "passage_split": 60, "precision": "int8"},
}


def log_err(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- the corpora and their indexes ------------------------------------------------


def _engine(root: Path, index: str, log: Log):
    """The corpus' engine for an index variant (:data:`INDEXES`), its index file
    beside the default one; a variant starts as a copy of the default index."""
    from mdseek.index.engine.engine import Engine
    from mdseek.index.model.embed import EmbedSettings

    from .quality import _copy_index

    kw = dict(INDEXES[index])
    path = root.parent / ("index.sqlite" if index == "default" else f"index-{index}.sqlite")
    # a variant starts from the index of its precision (its vectors are reused)
    start = root.parent / ("index-int8.sqlite" if "precision" in kw else "index.sqlite")
    if index != "default" and not path.exists() and start != path and start.exists():
        _copy_index(start, path)
    precision = kw.pop("precision", None)
    # the variables of the settings table (MDSEEK_THREADS: the same threads as the default index)
    embed = EmbedSettings.from_env(precision=precision) if precision else None
    eng = Engine(root, index_path=path, **({"embed": embed} if embed else {}), **kw)
    t0 = time.perf_counter()
    rep = eng.index()
    if rep.lexical_only_reason:
        raise RuntimeError(rep.lexical_only_reason)
    log(f"  {root.parent.name} [{index}]: {rep.chunks} chunks, {rep.embedded} embedded"
        f" in {time.perf_counter() - t0:.0f} s")  # fmt: skip
    return eng


class TextVectors:
    """Query texts' vectors (``encode_query``), cached on disk per model id."""

    def __init__(self, eng, folder: Path):
        self.eng = eng
        tag = hashlib.sha1(eng.models.model_id.encode()).hexdigest()[:10]
        self.file = folder / f"query-texts-{tag}.npz"
        self.have: dict[str, np.ndarray] = {}
        if self.file.exists():
            with np.load(self.file) as z:
                self.have = {k: z[k] for k in z.files}
        self.dirty = False

    def __call__(self, text: str) -> np.ndarray:
        key = hashlib.sha1(text.encode()).hexdigest()
        if key not in self.have:
            self.have[key] = self.eng.models.embedder.encode_query(text)
            self.dirty = True
        return self.have[key]

    def save(self) -> None:
        if self.dirty:
            np.savez(self.file, **self.have)
            self.dirty = False


def query_vectors(eng, c: Corpus, texts: TextVectors) -> dict[str, np.ndarray]:
    """Each query's vector as ``Engine.search`` makes it (``Searcher.query_vector``:
    a long query's ask joined to its whole text), from cached text vectors."""
    from mdseek.index.engine.dense_side import join_ask

    out = {}
    for qid, text in c.qrels.queries.items():
        query = eng.parse_query(text)
        whole = texts(query.text)
        if query.ask and eng.searcher.ranking.ask != "off":
            out[qid] = join_ask(whole, texts(query.ask), eng.searcher.ranking)
        else:
            out[qid] = whole
    texts.save()
    return out


def corpora(work: Path, names: Sequence[str], log: Log, quick: bool = False) -> list[Corpus]:
    """The named corpora's workspaces under ``work`` (made once, then reused)."""
    from .quality import human_corpora

    out: list[Corpus] = []
    want = set(names)
    data = D.data_dir()
    if data is not None and want & {"rhdh", "rhdh-long"}:
        try:
            root, qrels = D.rhdh_workspace(D.data_home("rhdh") or data, work, quick)
        except D.DataMissing as exc:
            log(f"skipped: {exc}")
        else:
            if "rhdh" in want:
                out.append(Corpus("rhdh", "product docs (generated questions)", root, qrels, True))
            if "rhdh-long" in want:
                out.append(Corpus("rhdh-long", "product docs, long form", root,
                                  D.long_queries(qrels), True))  # fmt: skip
    if data is not None and "scifact" in want:
        try:
            root = work / "scifact" / "docs"
            if root.is_dir() and not quick:
                _, qrels = D.load_scifact(D.data_home("scifact") or data)
            else:
                root, qrels = D.scifact_workspace(D.data_home("scifact") or data, work, quick)
            out.append(Corpus("scifact", "SciFact claims (document)", root, qrels, False))
        except D.DataMissing as exc:
            log(f"skipped: {exc}")
    if want & {"fixtures", "fixtures-long"}:
        root, fx, fx_long = D.fixtures_workspace(work, quick)
        if "fixtures" in want:
            out.append(Corpus("fixtures", "fixture paraphrases", root, fx, True))
        if "fixtures-long" in want:
            out.append(Corpus("fixtures-long", "fixture paraphrases, long form", root, fx_long,
                              True))  # fmt: skip
    out += human_corpora(data, work, want, quick, log)
    order = {n: i for i, n in enumerate(EVERY)}
    return sorted(out, key=lambda c: order.get(c.name, len(order)))


class Judge:
    """Every corpus's replays, one per index variant, and per-query scores."""

    def __init__(self, cs: list[Corpus], log: Log = log_err):
        self.corpora = cs
        self.log = log
        self.replays: dict[tuple[str, str], Replay] = {}
        self.engines: dict[tuple[Path, str], object] = {}
        self._baseline: Scores | None = None

    @classmethod
    def open(cls, work: Path, names: Sequence[str] = EVERY, log: Log = log_err,
             quick: bool = False) -> Judge:  # fmt: skip
        return cls(corpora(work, names, log, quick), log)

    def engine(self, c: Corpus, index: str = "default"):
        key = (c.root, index)
        if key not in self.engines:
            self.engines[key] = _engine(c.root, index, self.log)
            if index == "default":
                c.engine = self.engines[key]  # type: ignore[assignment]
        return self.engines[key]

    def replay(self, c: Corpus, index: str = "default") -> Replay:
        key = (c.name, index)
        if key not in self.replays:
            eng = self.engine(c, index)
            texts = TextVectors(eng, c.root.parent)
            qv = query_vectors(eng, c, texts)
            self.replays[key] = Replay(eng, c.qrels, qv, texts)  # type: ignore[arg-type]
        return self.replays[key]

    def scores(self, cfg: Config = DEFAULT, index: str = "default", mode: str = "hybrid") -> Scores:
        """Per-query nDCG@10 of a configuration replayed on an index variant."""
        out = {}
        for c in self.corpora:
            runs = self.replay(c, index).run(cfg, mode)
            out[c.name] = per_query(c, runs)
        return out

    def product(self, mode: str = "hybrid") -> Scores:
        """Per-query nDCG@10 through ``Engine.search`` (the product path as built)."""
        from .quality import run_engine

        out = {}
        for c in self.corpora:
            runs, _ = run_engine(self.engine(c), c.qrels, mode)  # type: ignore[arg-type]
            out[c.name] = per_query(c, runs)
        return out

    def baseline(self, index: str = "default") -> Scores:
        """The plain baseline (benchmarks/baseline.py), hybrid, per query (its
        model and query vectors taken from ``index``'s engine; the same model)."""
        if self._baseline is None:
            from mdseek.index.search.query import question_of

            from .baseline import PlainBaseline

            out = {}
            for c in self.corpora:
                eng = self.engine(c, index)
                rp = self.replay(c, index)
                bl = PlainBaseline(c.root, eng.models.embedder.encode,  # type: ignore[attr-defined]
                                   c.root.parent / "baseline-vectors.npz")  # fmt: skip
                runs = {}
                for q, t in c.qrels.queries.items():
                    # the whole query's vector (mdseek's own adds a long query's ask)
                    v = rp.qvecs[q] if question_of(t) is None else rp.encode(t)
                    runs[q] = bl.search(t, v, "hybrid")
                bl.close()
                out[c.name] = per_query(c, runs)
            self._baseline = out
        return self._baseline

    def counts(self, index: str = "default") -> dict[str, dict]:
        """Each corpus folder's chunks, passages and vectors per chunk on an index variant."""
        out: dict[str, dict] = {}
        for c in self.corpora:
            folder = c.root.parent.name
            if folder in out:
                continue
            n = self.engine(c, index).store.counts()  # type: ignore[attr-defined]
            out[folder] = {"chunks": n["chunks"], "passages": n["passages"],
                           "per_chunk": round((n["chunks"] + n["passages"]) / max(1, n["chunks"]), 3)}  # fmt: skip
        return out

    def check(self) -> dict[str, dict[str, str]]:
        """The replay ranks exactly as ``Engine.search`` (first 25 queries)."""
        return {c.name: check_replay(self.replay(c), self.engine(c)) for c in self.corpora}  # type: ignore[arg-type]

    def close(self) -> None:
        for rp in self.replays.values():
            if isinstance(rp.embed, TextVectors):
                rp.embed.save()
        for e in self.engines.values():
            e.close()  # type: ignore[attr-defined]


# -- named variants -----------------------------------------------------------------

# name -> (index variant, Config changes): each one change from the default.
VARIANTS: dict[str, tuple[str, dict]] = {
    "default": ("default", {}),
    "blocks": ("blocks", {}),
    "blocks-flat": ("blocks", {"dense_weight_matched": None}),
    **{v: (v, {}) for v in ("v3", "sentences", "sentences-40", "sentences-100", "split-60")},
    "flat": ("default", {"dense_weight_matched": None}),
    **{
        f"matched={w:g}": ("default", {"dense_weight_matched": w})
        for w in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7)
    },
    "dense-minmax": ("default", {"dense_norm": "minmax"}),
    **{f"discount={d:g}": ("default", {"passage_discount": d}) for d in (0.0, 0.01, 0.02, 0.04)},
    "no-passages": ("default", {"passages": False}),
    "ask=off": ("default", {"ask": "off"}),
    "ask=max": ("default", {"ask": "max"}),
    **{f"ask-weight={w:g}": ("default", {"ask_weight": w}) for w in (0.3, 0.7, 0.85)},
    "int8": ("int8", {}),
    "sentences-int8": ("sentences-int8", {}),
    # the defaults of each retrieval version, whatever the engine's are now
    "retrieval-v3": ("v3", {"dense_weight_matched": 0.4, "passage_discount": 0.02}),
    "retrieval-v4": ("sentences", {"dense_weight_matched": 0.15, "passage_discount": 0.0}),
    "retrieval-v4-int8": (
        "sentences-int8",
        {"dense_weight_matched": 0.15, "passage_discount": 0.0},
    ),
}


def on_base(variant: tuple[str, dict], b_index: str, b_change: dict) -> tuple[str, dict]:
    """A variant built on a base variant: its index unless it keeps the default
    one, and the base's changes with its own on top."""
    index, change = variant
    return (b_index if index == "default" else index), {**b_change, **change}


def parse_set(items: Sequence[str]) -> dict:
    """``key=value`` pairs: numbers, ``none``, ``true``/``false``, else text."""
    out: dict = {}
    for item in items:
        k, _, v = item.partition("=")
        val: object = v
        if v.lower() in ("none", "null"):
            val = None
        elif v.lower() in ("true", "false"):
            val = v.lower() == "true"
        else:
            try:
                val = int(v)
            except ValueError:
                try:
                    val = float(v)
                except ValueError:
                    pass
        out[k.strip()] = val
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.judge", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--work", type=Path, default=D.REPO / "benchmarks" / ".work" / "judge",
                    help="scratch folder kept between runs (indexes, query vectors)")  # fmt: skip
    ap.add_argument("--variant", action="append", default=[], help="a named variant (--list)")
    ap.add_argument("--set", action="append", default=[], help="a Config change, key=value")
    ap.add_argument("--index", default="default", choices=sorted(INDEXES), help="with --set")
    ap.add_argument("--base", default="default",
                    help="the named variant every other is compared with (and built on)")  # fmt: skip
    ap.add_argument("--corpora", default=",".join(EVERY), help="comma list")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--product", type=Path, help="write Engine.search's per-query nDCG@10 here")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    ap.add_argument("--check", action="store_true", help="check the replay equals Engine.search")
    ap.add_argument("--json", type=Path, help="write the comparisons here")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the plain baseline (it embeds every section once more)")  # fmt: skip
    args = ap.parse_args(argv)
    if args.list:
        for name, (index, change) in VARIANTS.items():
            print(f"{name}: index {index}, {change or 'the default'}")
        return 0
    names = [n for n in args.corpora.split(",") if n]
    if args.compare:
        a, b = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        cs = corpora(args.work, names, log_err, args.quick)
        cs = [c for c in cs if c.name in a["scores"] and c.name in b["scores"]]
        cmp = compare(cs, a["scores"], b["scores"])
        print(render(cmp, str(args.compare[0].name), str(args.compare[1].name)), end="")
        return 0
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    t0 = time.perf_counter()
    judge = Judge.open(args.work, names, quick=args.quick)
    out: dict = {"command": "python -m benchmarks.judge " + " ".join(argv or sys.argv[1:]),
                 "load_average_start": round(os.getloadavg()[0], 2)}  # fmt: skip
    try:
        if args.product:
            sc = judge.product()
            args.product.write_text(json.dumps({"scores": sc, **out}) + "\n", encoding="utf-8")
            log_err(f"wrote {args.product}")
        if args.check:
            out["replay_check"] = judge.check()
            print(json.dumps(out["replay_check"]))
        b_index, b_change = VARIANTS[args.base]
        base = judge.scores(DEFAULT.but(**b_change), b_index)
        todo = [(v, *on_base(VARIANTS[v], b_index, b_change)) for v in args.variant]
        if args.set:
            todo.append((" ".join(args.set) + f" (index {args.index})",
                         *on_base((args.index, parse_set(args.set)), b_index, b_change)))  # fmt: skip
        bl = None  # the base minus the plain baseline
        if not args.no_baseline:
            bl = compare(judge.corpora, judge.baseline(b_index), base)
            out["baseline"] = bl
        for name, index, change in todo:
            sc = judge.scores(DEFAULT.but(**change), index)
            cmp = compare(judge.corpora, base, sc)
            out.setdefault("variants", {})[name] = cmp
            print(f"\n{name} against {args.base} (nDCG@10; difference = variant - {args.base},"
                  f" paired bootstrap 95%, {DRAWS} draws, seed {SEED})\n")  # fmt: skip
            print(render(cmp, args.base, name, bl), end="")
            counts = {i: judge.counts(i) for i in dict.fromkeys((b_index, index))}
            out["variants"][name + " index"] = counts
            print("\nvectors per chunk: " + "; ".join(
                f"{i}: " + ", ".join(f"{f} {r['per_chunk']:.2f} ({r['chunks']} + {r['passages']})"
                                     for f, r in cs.items()) for i, cs in counts.items()))  # fmt: skip
        if not todo and bl is not None:
            print(render(bl, "plain baseline", "default"), end="")
    finally:
        judge.close()
    out["seconds"] = round(time.perf_counter() - t0, 1)
    out["load_average_end"] = round(os.getloadavg()[0], 2)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
