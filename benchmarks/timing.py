"""Timings as the speed studies report them: a percentile and median / p95 in ms."""

from __future__ import annotations

import statistics


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    s = sorted(xs)
    i = min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))
    return s[i]


def ms_stats(xs: list[float]) -> dict:
    return {
        "n": len(xs),
        "median_ms": round(statistics.median(xs) * 1000, 2) if xs else None,
        "p95_ms": round(pct(xs, 95) * 1000, 2) if xs else None,
    }
