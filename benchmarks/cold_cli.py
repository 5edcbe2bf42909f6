"""The cold command line: ``mdseek search`` on an existing index as a fresh
process each time, beside ``python -c pass`` and an index open and count, runs
interleaved. Run alone with ``python -m benchmarks.speed cold-cli``."""

from __future__ import annotations

import importlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

Log = Callable[[str], None]

# -- the cold command line ----------------------------------------------------


def byte_compile() -> str:
    """Write mdseek's bytecode (``__pycache__``) as ``pip install`` does for a
    package; an editable checkout under ``PYTHONDONTWRITEBYTECODE=1`` would
    otherwise recompile every module at each start (about 0.09 s here)."""
    import compileall

    import mdseek

    dirs = {
        Path(p)
        for mod in ("mdseek.index", "mdseek.lsp")
        for p in importlib.import_module(mod).__path__
    }
    ok = all(
        compileall.compile_dir(str(d), quiet=1)
        for d in sorted(dirs | {Path(mdseek.__file__).parent})
    )
    return "compiled beforehand, as pip does on install" if ok else "compileall failed"


def cold_cli(root: Path, index: Path, query: str, log: Log, n: int = 7) -> dict:
    """Wall time of fresh processes, interleaved: ``python -c pass``, an index
    open and count (``store.survey``), and ``mdseek search`` (lexical, hybrid)
    on the existing index."""
    py = sys.executable
    sql = f"from mdseek.index.store import survey; survey.vector_count({str(index)!r})"
    search = [py, "-m", "mdseek", "search", str(root), query, "--db", str(index), "--limit", "10"]
    cmds = {
        "python -c pass": [py, "-c", "pass"],
        "python + SQLite open": [py, "-c", sql],
        "mdseek search --mode lexical": search + ["--mode", "lexical"],
        "mdseek search (hybrid)": search,
    }
    times: dict[str, list[float]] = {k: [] for k in cmds}
    bytecode = byte_compile()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        search, capture_output=True, env=env, timeout=600, check=True
    )  # warm caches, export
    for _ in range(n):
        for name, cmd in cmds.items():
            t0 = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, env=env, timeout=600)
            times[name].append(time.perf_counter() - t0)
            if r.returncode != 0:
                raise RuntimeError(f"{name} failed: {r.stderr.decode()[-2000:]}")
    med = {k: statistics.median(v) for k, v in times.items()}
    out = {k: {"median_s": round(v, 3), "min_s": round(min(times[k]), 3)} for k, v in med.items()}
    base = med["python + SQLite open"]
    out["hybrid_vs_python_sqlite"] = round(med["mdseek search (hybrid)"] / base, 1)
    out["lexical_vs_python_sqlite"] = round(med["mdseek search --mode lexical"] / base, 1)
    out["runs"] = n
    out["bytecode"] = bytecode
    log(
        f"  cold CLI (median of {n}): "
        + ", ".join(f"{k} {v['median_s']:.2f}s" for k, v in out.items() if isinstance(v, dict))
        + f"; hybrid = {out['hybrid_vs_python_sqlite']}x python+SQLite"
    )
    return out
