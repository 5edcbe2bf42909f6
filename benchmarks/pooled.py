"""The judge's statistics: which corpora are pooled, the paired bootstrap
interval of a difference (:func:`paired_interval`), a comparison of two
systems on every corpus and the pools (:func:`compare`), and its tables. The
judge itself (indexes, variants, the command) is :mod:`benchmarks.judge`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from . import data as D
from .quality import (
    Corpus,
    per_query,
)

Log = Callable[[str], None]

DRAWS = 2000
SEED = 39
POOL = ("emanual", "emanual-long", "scifact", "covidqa")
LONG = ("emanual-long", "covidqa-long")  # the long questions (scenario, then the ask)
BESIDE = ("covidqa-long", "rhdh", "rhdh-long", "fixtures", "fixtures-long")
EVERY = POOL + BESIDE
SPLITS = ("dev", "test")


# -- the paired bootstrap ---------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A difference (b minus a) and its bootstrap interval."""

    diff: float
    lo: float
    hi: float
    n: int

    def __str__(self) -> str:
        return f"{self.diff:+.4f} [{self.lo:+.4f}, {self.hi:+.4f}]"

    def to_dict(self) -> dict:
        return {"diff": round(self.diff, 5), "lo": round(self.lo, 5), "hi": round(self.hi, 5),
                "n": self.n}  # fmt: skip


def paired_interval(
    a: Sequence[float],
    b: Sequence[float],
    strata: Sequence[str] | None = None,
    draws: int = DRAWS,
    seed: int = SEED,
    level: float = 0.95,
) -> Interval:
    """``b`` minus ``a`` (two systems' scores on the same queries, in the same
    order) and its percentile bootstrap interval: queries resampled with
    replacement, ``draws`` times, seeded. With ``strata`` (a label per query),
    the statistic is the mean of the strata's mean differences and queries are
    resampled inside their stratum (each corpus weighs the same)."""
    da = np.asarray(a, dtype=np.float64)
    db = np.asarray(b, dtype=np.float64)
    if da.shape != db.shape:
        raise ValueError(f"paired scores differ in length: {len(da)} and {len(db)}")
    if not len(da):
        return Interval(0.0, 0.0, 0.0, 0)
    d = db - da
    labels = np.asarray(strata if strata is not None else ["all"] * len(d))
    rng = np.random.default_rng(seed)
    groups = [d[labels == s] for s in dict.fromkeys(labels.tolist())]
    point = float(np.mean([g.mean() for g in groups]))
    boot = np.zeros(draws)
    for g in groups:
        idx = rng.integers(0, len(g), size=(draws, len(g)))
        boot += g[idx].mean(axis=1)
    boot /= len(groups)
    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(boot, [tail, 100 - tail])
    return Interval(point, float(lo), float(hi), len(d))


# -- per-query scores -----------------------------------------------------------

Scores = dict[str, dict[str, float]]  # corpus -> query id -> nDCG@10 at its level


def halves(c: Corpus) -> dict[str, list[str]]:
    return {s: D.split_qids(list(c.qrels.queries), s, c.qrels.groups) for s in SPLITS}


def compare(corpora: list[Corpus], a: Scores, b: Scores, pool: Sequence[str] = POOL) -> dict:
    """Every corpus's and the pool's halves: mean of ``a``, of ``b``, and the
    interval of b minus a. ``pool`` names the corpora pooled; ``long`` pools :data:`LONG`."""
    out: dict = {"corpora": {}, "pooled": {}, "long": {}}
    for which, names in (("pooled", pool), ("long", LONG)):
        for split in SPLITS:
            xa: list[float] = []
            xb: list[float] = []
            st: list[str] = []
            for c in corpora:
                if c.name not in names or c.name not in a or c.name not in b:
                    continue
                qs = halves(c)[split]
                xa += [a[c.name][q] for q in qs]
                xb += [b[c.name][q] for q in qs]
                st += [c.name] * len(qs)
            if not st:
                continue
            names_in = list(dict.fromkeys(st))
            out[which][split] = {
                "a": round(_strata_mean(xa, st), 4), "b": round(_strata_mean(xb, st), 4),
                "interval": paired_interval(xa, xb, st).to_dict(), "corpora": names_in,
            }  # fmt: skip
    for c in corpora:
        if c.name not in a or c.name not in b:
            continue
        row = out["corpora"][c.name] = {"label": c.label, "pooled": c.name in pool}
        for split, qs in halves(c).items():
            xa = [a[c.name][q] for q in qs]
            xb = [b[c.name][q] for q in qs]
            row[split] = {
                "a": round(float(np.mean(xa)), 4) if qs else None,
                "b": round(float(np.mean(xb)), 4) if qs else None,
                "interval": paired_interval(xa, xb).to_dict(),
            }
    return out


def _strata_mean(x: list[float], strata: list[str]) -> float:
    """The mean of each stratum's mean (each corpus weighs the same)."""
    lab = np.asarray(strata)
    v = np.asarray(x, dtype=np.float64)
    return float(np.mean([v[lab == s].mean() for s in dict.fromkeys(strata)]))


# -- in the quality run (python -m benchmarks --only quality) --------------------------


def quality_section(corpora: list[Corpus], replays: dict, bench, log: Log) -> dict:
    """The judge over the quality run's corpora: the default and the plain
    baseline per corpus and pooled, and every knob of the ablations (already
    replayed: ``bench.per_query``) against the default, with intervals."""
    from .quality import DEFAULT as QD
    from .quality import KNOBS

    if (QD, "hybrid") not in bench.per_query:
        bench.score(QD)
    default = bench.per_query[(QD, "hybrid")]
    base = {c.name: per_query(c, c.baseline_runs) for c in corpora if c.baseline_runs}
    out: dict = {"pool": [n for n in POOL if any(c.name == n for c in corpora)],
                 "draws": DRAWS, "seed": SEED}  # fmt: skip
    out["baseline"] = compare(corpora, base, default)  # the default minus the baseline
    rows = []
    for knob, values in KNOBS:
        for label, change in values:
            cfg = QD.but(**change)
            if cfg == QD:
                continue
            pq = bench.per_query.get((cfg, "hybrid"))
            if pq is None:
                bench.score(cfg)
                pq = bench.per_query[(cfg, "hybrid")]
            cmp = compare(corpora, default, pq)
            rows.append({"knob": knob, "label": label, "pooled": cmp["pooled"],
                         "long": cmp["long"]})  # fmt: skip
    out["knobs"] = rows
    p = out["baseline"]["pooled"].get("test")
    if p:
        log(f"  pooled test: default {p['b']:.4f}, plain baseline {p['a']:.4f}")
    return out


def render_section(j: dict) -> list[str]:
    """The quality report's judge tables (benchmarks/report.py)."""
    if not j or not j.get("baseline", {}).get("pooled"):
        return []
    L = [
        "### The judge: pooled human questions (benchmarks/judge.py)",
        "",
        f"Pool: {', '.join(j['pool'])}; each corpus weighs the same in the pooled mean. Every"
        f" difference has a paired bootstrap 95% interval (per query, queries resampled inside"
        f" their corpus, {j['draws']} draws, seed {j['seed']}). Questions generated by a language"
        " model (product docs) and the fixture paraphrases are reported outside the pool.",
        "",
    ]
    L += render(j["baseline"], "plain baseline", "default", None).splitlines()
    L += ["", "Each knob against the default (pooled nDCG@10 difference, knob minus default):", ""]
    L += ["| knob | value | pooled dev [95%] | pooled test [95%] | long dev [95%] | long test [95%] |",
          "|---|---|---|---|---|---|"]  # fmt: skip
    for r in j["knobs"]:
        cells = [_iv(r[w].get(h)) for w in ("pooled", "long") for h in SPLITS]
        L.append(f"| {r['knob']} | {r['label']} | " + " | ".join(cells) + " |")
    L.append("")
    return L


# -- report ---------------------------------------------------------------------------


def render(cmp: dict, a_label: str, b_label: str, base: dict | None = None) -> str:
    """A markdown table: each corpus and the pools, dev and test: a, b, b - a [95%]."""
    L = [
        f"| corpus (questions) | {a_label} dev / test | {b_label} dev / test "
        f"| difference, dev [95%] | difference, test [95%] |"
        + (f" plain baseline dev / test | {a_label} - baseline, test [95%] |" if base else ""),
        "|---|---|---|---|---|" + ("---|---|" if base else ""),
    ]

    def row(label: str, r: dict, br: dict | None) -> str:
        d, t = r.get("dev"), r.get("test")
        cells = [
            label,
            f"{_v(d, 'a')} / {_v(t, 'a')}",
            f"{_v(d, 'b')} / {_v(t, 'b')}",
            _iv(d), _iv(t),
        ]  # fmt: skip
        if base is not None:
            cells += [f"{_v(br and br.get('dev'), 'a')} / {_v(br and br.get('test'), 'a')}",
                      _iv(br and br.get("test"))]  # fmt: skip
        return "| " + " | ".join(cells) + " |"

    for which, label in (
        ("pooled", "**pooled human questions**"),
        ("long", "long questions (pool)"),
    ):
        if cmp[which]:
            L.append(row(label, cmp[which], base[which] if base else None))
    for name, r in cmp["corpora"].items():
        tag = "" if r["pooled"] else " (outside the pool)"
        L.append(row(f"{r['label']}{tag}", r, base["corpora"].get(name) if base else None))
    return "\n".join(L) + "\n"


def _v(r: dict | None, k: str) -> str:
    return "-" if not r or r.get(k) is None else f"{r[k]:.4f}"


def _iv(r: dict | None) -> str:
    """The difference of a half and its interval."""
    if not r:
        return "-"
    i = r["interval"]
    return f"{i['diff']:+.4f} [{i['lo']:+.4f}, {i['hi']:+.4f}]"
