"""The benchmark suite's --quick smoke run, so that the benchmark code cannot rot.

It runs ``python -m benchmarks --quick`` on tiny subsets in temporary folders
(never benchmarks/results/ nor benchmarks/README.md) and checks the shape of
what it wrote, not its timings. With the benchmark data absent (no
../shared/data, no $MDSEEK_BENCH_DATA) the quality part is skipped and the rest
runs on fixtures/.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sandbox import server_env

REPO = Path(__file__).resolve().parent.parent


def _snapshot(folder: Path) -> dict[str, int]:
    if not folder.exists():
        return {}
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}


def test_quick_benchmark_run(tmp_path: Path) -> None:
    results = REPO / "benchmarks" / "results"
    readme = REPO / "benchmarks" / "README.md"
    before = _snapshot(results)
    readme_before = readme.read_text(encoding="utf-8")
    out, work = tmp_path / "out", tmp_path / "work"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(out), "--work", str(work),
         "--no-readme", "--no-install"],
        cwd=REPO, capture_output=True, text=True, timeout=1800, env=server_env()
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]

    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    meta = res["meta"]
    assert meta["quick"] is True
    assert meta["machine"]["cores"] >= 1 and meta["machine"]["cpu"]
    assert meta["config"]["window"] > 0

    # Coverage always runs on fixtures/: mdseek's chunker keeps every body token in a window.
    assert res["coverage"]["fixtures"]["mdseek"]["coverage"] == 1.0
    assert res["coverage"]["fixtures"]["whole_document"]["coverage"] < 1.0

    tp = res["speed"]["throughput"]
    assert tp["chunks"] > 0 and tp["overhead_ratio"] > 0
    inc = res["speed"]["incremental"]
    assert 0 < inc["chunks_embedded"] < inc["document_chunks"] or inc["document_chunks"] == 1
    (lat,) = res["speed"]["latency"]
    # distinct vectors: texts (chunks' and passages') with the same embedded text share one
    texts = lat["chunks"] + lat["passages"]
    assert lat["chunks"] > 0 and 0 < lat["synthetic_vectors"] + lat["real_vectors"] <= texts
    for key in ("hybrid", "dense", "lexical", "brute_force"):
        assert lat[key]["median_ms"] > 0
    assert (out / "latency.png").stat().st_size > 1000

    q = res["quality"]
    data_missing = any("data not found" in s for s in res["skipped"])
    # The fixture corpora always run; SciFact and the product docs only with the data.
    names = (
        ("fixtures", "fixtures-long")
        if data_missing
        else ("scifact", "rhdh", "rhdh-long", "fixtures", "fixtures-long")
    )
    corpora = q["corpora"]
    assert set(names) <= set(corpora), sorted(corpora)
    for corpus in names:
        for who in ("modes", "baseline"):
            for mode in ("hybrid", "lexical", "dense"):
                assert 0.0 <= corpora[corpus][who][mode]["all"]["doc"]["ndcg@10"] <= 1.0
        assert {"dev", "test"} <= set(corpora[corpus]["modes"]["hybrid"])
    if not data_missing:
        assert "section" in corpora["rhdh"]["modes"]["hybrid"]["all"]
    for checks in q["replay_check"].values():
        for got in checks.values():
            n, total = got.split("/")
            assert n == total, q["replay_check"]
    assert q["ablations"]["chain"] and q["ablations"]["knobs"]

    for server in ("mdseek", "vscode"):
        r = res["lsp"][server]
        assert "skipped" in r or r["start_to_first_workspace_symbol_seconds"] > 0
    m = res["lsp"]["mdseek"]
    assert "skipped" not in m, m  # mdseek's own server always runs
    assert (
        m["starts"] == 2 and 0 < m["initialize_seconds_median"] < m["first_hybrid_seconds_median"]
    )
    assert (
        m["search_after_ready"]["n"] >= 1
        and m["search_after_ready"]["max_ms"] >= m["search_after_ready"]["median_ms"] > 0
    )
    assert res["lsp"]["bytecode"].startswith("compiled")
    sv = m.get("save") or res["lsp"]["save"]
    assert sv["edits"] == 3 and 0 < sv["server_total_ms"]["p50"] <= sv["searchable_ms"]["p95"]

    md = (out / "results.md").read_text(encoding="utf-8")
    assert "### Coverage" in md and "### Query latency" in md

    # Nothing written into the repository's results or README.
    assert _snapshot(results) == before
    assert readme.read_text(encoding="utf-8") == readme_before


def test_rename_speed_benchmark_runs() -> None:
    # It broke when the rename engine started reading the folder's aliases.
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.rename_speed", "--notes", "60", "--repeat", "1"],
        cwd=REPO, capture_output=True, text=True, timeout=120, env=server_env()
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("60 notes: heading rename "), proc.stdout
    assert " s (" in proc.stdout and "file move " in proc.stdout, proc.stdout
