"""Where a first index's memory goes, stage by stage.

    python -m benchmarks.memory_stages --work DIR [--files 2000] [--configs new,old]
    python -m benchmarks.memory_stages --work DIR --matrix 90000   the vector matrix alone
    python -m benchmarks.memory_stages --work DIR --files 10000 --load   the matrix's load
    python -m benchmarks.memory_stages --work DIR --files 10000 --served   a server over it
    python -m benchmarks.memory_stages --work DIR --sessions 160   the two bulk sessions alone

A folder of the big-vault mix (``benchmarks.bigvault.make_vault``) is indexed
from empty by a :class:`Folder` (what the servers run), each configuration in
its own process (see ``benchmarks.first_index``'s ``CONFIGS``), while a thread
reads the process's resident set (``VmRSS``) every 50 ms. Reported per stage
(the progress stage the folder last told: ``open``, ``parse``, ``embed``,
``ready`` once ``reconcile`` returned, ``bm25`` after the in-memory keyword
index is built by a search): the peak RSS seen in it, the RSS at its end, and
``VmHWM`` (the kernel's peak) at its end; then the sizes of what the engine
holds at the end (the vector matrix, the in-memory BM25), and with ``--trace``
the Python allocations that grew most over the embedding pass
(``tracemalloc``: slow, and only Python's own, not ONNX Runtime's or SQLite's).
``--matrix ROWS`` grows the vector matrix alone, 64 rows at a time, under
``tracemalloc``; ``--load`` loads the matrix of the vault's index as a
search does (the vault read without the model, its texts given random unit
vectors). ``MEM_PROBE`` (see :func:`_knobs`) undoes a fix to measure it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from .output import emit


def _status(key: str) -> float:
    """A ``/proc/self/status`` size in MB (0 where there is none)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


class Sampler:
    """The RSS every ``every`` seconds, its peak per stage."""

    def __init__(self, every: float = 0.05):
        self.every = every
        self.stage = "open"
        self.stages: dict[str, dict] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._t0 = time.perf_counter()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Sampler:
        self._enter("open")
        self._thread.start()
        return self

    def _enter(self, stage: str) -> None:
        self.stages[stage] = {"start_s": round(time.perf_counter() - self._t0, 1), "peak_mb": 0.0}

    def to(self, stage: str) -> None:
        with self._lock:
            if stage == self.stage:
                return
            self._end()
            self.stage = stage
            self._enter(stage)

    def _end(self) -> None:
        s = self.stages[self.stage]
        rss = _status("VmRSS")
        s["peak_mb"] = max(s["peak_mb"], rss)
        s["end_mb"] = rss
        s["hwm_mb"] = _status("VmHWM")

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            with self._lock:
                s = self.stages[self.stage]
                s["peak_mb"] = max(s["peak_mb"], _status("VmRSS"))

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        with self._lock:
            self._end()
        return self.stages


def _knobs() -> None:
    """Experiments named in ``MEM_PROBE`` (comma list), each undoing a fix to
    measure it apart: ``noarena``, ONNX Runtime's CPU arena off; ``ownarena``,
    an arena per session (before the shared one); ``concat``, the vector
    matrix grown by a concatenation per batch (before it grew in place);
    ``loadcopy``, the matrix loaded as before (joined bytes copied, chunk and
    passage rows concatenated)."""
    knobs = set(os.environ.get("MEM_PROBE", "").split(","))
    if "ownarena" in knobs:
        from mdseek.index.model import onnx_encoder

        onnx_encoder.shared_arena = lambda: False  # type: ignore[assignment]
    if "concat" in knobs:
        import numpy as np

        from mdseek.index.search.dense import DenseIndex

        def append(self, keys, own, mat):  # type: ignore[no-untyped-def]
            if len(self.keys):
                keys = np.concatenate([self.keys, keys])
                own = np.concatenate([self.owners, own])
                mat = np.concatenate([self.mat, mat])
            self._own(keys, own, mat, True)  # (the first index removes no row)

        DenseIndex._append = append  # type: ignore[method-assign]
    if "loadcopy" in knobs:  # the matrix loaded by join and copy, then concatenation
        import numpy as np

        from mdseek.index.search.dense import DenseIndex
        from mdseek.index.store import vectors

        def columns(rows, n_ids=1):  # type: ignore[no-untyped-def]
            ids = [np.fromiter((r[k] for r in rows), np.int64, len(rows)) for k in range(n_ids)]
            if not rows:
                return ids, np.zeros((0, 0), dtype=np.float32)
            mat = np.frombuffer(b"".join(r[n_ids] for r in rows), dtype=np.float32)
            return ids, mat.reshape(len(rows), -1).copy()

        plain_reset = DenseIndex.reset

        def reset(self, ids, mat, pids=None, owners=None, pmat=None, adopt=False):  # type: ignore[no-untyped-def]
            if pids is not None and pmat is not None and len(pids):
                mat = np.concatenate([mat, pmat]) if len(mat) else pmat
                ids = np.concatenate([ids, -pids])
                own = np.concatenate([ids[: len(ids) - len(pids)], owners])
                plain_reset(self, ids, mat, adopt=True)  # (reset adopted its concatenation)
                self._obuf[:] = own
                self._reindex()
                self._recount()
            else:
                plain_reset(self, ids, mat, adopt=True)

        vectors._columns = columns  # type: ignore[attr-defined]
        DenseIndex.reset = reset  # type: ignore[method-assign]
    if "noarena" in knobs:
        from mdseek.index.model import onnx_encoder

        plain = onnx_encoder.session_options

        def session_options(threads: int, fused: bool = False):  # type: ignore[no-untyped-def]
            so = plain(threads, fused)
            so.enable_cpu_mem_arena = False
            return so

        onnx_encoder.session_options = session_options  # type: ignore[assignment]


def one(vault: Path, index: Path, trace: bool) -> dict:
    """(In this process.) One first index of ``vault`` into an empty ``index``."""
    from mdseek.index.engine.folder import Folder
    from mdseek.index.engine.opening import EngineOptions
    from mdseek.index.search.requests import SearchRequest

    for p in index.parent.glob(index.name + "*"):
        p.unlink()
    _knobs()
    sampler = Sampler().start()
    t0 = time.perf_counter()
    f = Folder(vault)
    f.open(EngineOptions(index_path=index))
    eng = f.engine
    assert eng is not None
    snap: list = []

    deciles: dict[str, float] = {}

    def progress(stage: str, done: int, n: int) -> None:
        if stage == "embed" and n and str(10 * done // n) not in deciles:
            deciles[str(10 * done // n)] = _status("VmRSS")
        if stage == "embed" and trace and not snap:
            import tracemalloc

            snap.append(tracemalloc.take_snapshot())
        sampler.to(stage)

    if trace:
        import tracemalloc

        tracemalloc.start(8)
    rep = f.reconcile(progress)
    sampler.to("ready")
    top: list[str] = []
    if trace:
        import tracemalloc

        after = tracemalloc.take_snapshot()
        base = snap[0] if snap else after
        for d in after.compare_to(base, "traceback")[:8]:
            top.append(f"{d.size_diff / 1e6:+.1f} MB {d.count_diff:+d} blocks: " + " <- ".join(
                f"{fr.filename.rsplit('/', 2)[-1]}:{fr.lineno}" for fr in d.traceback[:4]))  # fmt: skip
        tracemalloc.stop()
    total = time.perf_counter() - t0
    f.search(SearchRequest.make("does vitamin D reduce fracture risk", limit=10))
    sampler.to("bm25")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not eng.lexical_side.current():
        f.search(SearchRequest.make("rotate the TLS certificate", limit=10))
        time.sleep(0.2)
    f.search(SearchRequest.make("install on OpenShift with a Helm chart", limit=10))
    stages = sampler.stop()
    m = eng.dense_side.matrix
    st = f.status()
    out = {
        "model": st.model,
        "chunks": st.chunks,
        "pending": st.pending_embeds,
        "embedded": rep.embedded if rep else None,
        "all_vectors_s": round(total, 1),
        "stages": stages,
        "peak_rss_mb": _status("VmHWM"),
        "matrix_mb": round((m.mat.nbytes + m.keys.nbytes + m.owners.nbytes) / 2**20, 1),
        "matrix_rows": int(m.mat.shape[0]),
        "embed_rss_by_tenth": deciles,
        "top_python_growth": top,
    }
    f.close()
    return out


def matrix_growth(rows: int, batch: int = 64, dim: int = 384) -> dict:
    """(In this process.) The vector matrix alone grown to ``rows`` rows,
    ``batch`` at a time, as the first index adds them: its size, the peak of
    Python's traced memory (numpy's arrays included) and the seconds."""
    import tracemalloc

    import numpy as np

    from mdseek.index.search.dense import DenseIndex

    _knobs()
    vecs = np.random.default_rng(0).standard_normal((batch, dim)).astype(np.float32)
    idx = DenseIndex()
    tracemalloc.start()
    t0 = time.perf_counter()
    for i in range(0, rows, batch):
        idx.add(np.arange(i, i + batch) + 1, vecs)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "rows": rows,
        "matrix_mb": round(idx.mat.nbytes / 2**20, 1),
        "peak_traced_mb": round(peak / 2**20, 1),
        "seconds": round(seconds, 1),
        "knobs": os.environ.get("MEM_PROBE", ""),
    }


def matrix_load(vault: Path, index: Path) -> dict:
    """(In this process.) ``vault`` read into ``index`` without the model (once;
    its texts given random unit vectors: the load's memory is the same), then
    the vector matrix loaded from it as a search does: RSS before, after and at
    the peak."""
    import numpy as np

    from mdseek.index import Engine

    _knobs()
    eng = Engine(vault, index_path=index)
    model = eng.models.model_id
    vectors = eng.store.vectors
    texts = vectors.pending_texts(model)
    if texts:  # (a fresh index: filled in this process, then measured in a new one)
        eng.index(embed=False)
        texts = vectors.pending_texts(model)
        rng = np.random.default_rng(0)
        for i in range(0, len(texts), 2000):
            part = texts[i : i + 2000]
            m = rng.standard_normal((len(part), 384)).astype(np.float32)
            vectors.put_vectors(
                model, [h for h, _, _ in part], m / np.linalg.norm(m, axis=1)[:, None]
            )
        eng.close()
        return {"filled": len(texts)}
    before = _status("VmRSS")
    t0 = time.perf_counter()
    eng.dense_side.sync()
    out = {
        "rows": eng.dense_side.matrix.rows,
        "matrix_mb": round(eng.dense_side.matrix.mat.nbytes / 2**20, 1),
        "rss_before_mb": before,
        "rss_after_mb": _status("VmRSS"),
        "peak_rss_mb": _status("VmHWM"),
        "seconds": round(time.perf_counter() - t0, 2),
    }
    eng.close()
    return out


def served(vault: Path, index: Path) -> dict:
    """(In this process.) A server's memory over the complete index of ``vault``
    (:func:`matrix_load`'s): the folder opened and reconciled, the vector
    matrix and the in-memory BM25 loaded by searches, then both bulk sessions
    (two threads, and one: threads by demand) each given calls of 8 texts of
    the model's whole window, as a first index's longest texts are."""
    from mdseek.index.engine.folder import Folder
    from mdseek.index.engine.opening import EngineOptions
    from mdseek.index.model.embed import _onnx_encoder
    from mdseek.index.search.requests import SearchRequest

    from .batch_memory import _texts

    _knobs()
    stages: dict[str, float] = {}
    f = Folder(vault)
    f.open(EngineOptions(index_path=index))
    eng = f.engine
    assert eng is not None
    f.reconcile()
    stages["reconciled"] = _status("VmHWM")
    deadline = time.monotonic() + 300
    f.search(SearchRequest.make("does vitamin D reduce fracture risk", limit=10))
    while time.monotonic() < deadline and not eng.lexical_side.current():
        time.sleep(0.2)
    f.search(SearchRequest.make("rotate the TLS certificate", limit=10))
    stages["matrix_and_bm25"] = _status("VmHWM")
    m = eng.models.embedder.load()
    texts = _texts(64)
    for threads in (2, 1):
        _onnx_encoder(m.folder, threads).encode(texts, 8)
        stages[f"session_{threads}_threads"] = _status("VmHWM")
    out = {
        "rows": eng.dense_side.matrix.rows,
        "peak_rss_mb_after": stages,
        "rss_mb": _status("VmRSS"),
        "knobs": os.environ.get("MEM_PROBE", ""),
    }
    f.close()
    return out


def sessions(n: int) -> dict:
    """(In this process.) The int8 copy's two bulk sessions (two threads and
    one) given ``n`` window-long texts in calls of 8, two calls on two threads
    for one on one (as threads by demand alternates them): texts/s, RSS after
    loading both, peak RSS."""
    import resource

    from mdseek.index.model.onnx_encoder import OnnxEncoder
    from mdseek.index.model.packaged import installed

    from .batch_memory import _texts

    _knobs()
    folder = installed()[0]
    if folder is None:
        raise SystemExit("the model wheel is not installed (bash .ci/setup installs it)")
    two, one = OnnxEncoder(folder / "int8", 2), OnnxEncoder(folder / "int8", 1)
    texts = _texts(n)
    loaded = _status("VmRSS")
    t0 = time.perf_counter()
    for i in range(0, n, 8):
        (two if (i // 8) % 3 else one).encode(texts[i : i + 8], 8)
    return {
        "texts_per_s": round(n / (time.perf_counter() - t0), 1),
        "after_load_mb": loaded,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "knobs": os.environ.get("MEM_PROBE", ""),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.memory_stages", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--work", required=True, type=Path, help="folder for the vault and indexes")
    ap.add_argument("--files", type=int, default=2000, help="notes in the vault")
    ap.add_argument("--configs", default="new", help="old, new, fp32, int8 (comma list)")
    ap.add_argument("--trace", action="store_true", help="tracemalloc over the embedding pass")
    ap.add_argument("--matrix", type=int, help="only the vector matrix grown to this many rows")
    ap.add_argument("--load", action="store_true", help="only the vector matrix's load")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: one config in this process
    ap.add_argument("--sessions", type=int, help="only the two bulk sessions, this many texts")
    ap.add_argument("--served", action="store_true", help="a server over --load's index")
    ap.add_argument("--one-load", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--one-served", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.matrix:
        return emit(matrix_growth(args.matrix), args.json)
    if args.sessions:
        return emit(sessions(args.sessions), args.json)
    work = args.work.resolve()
    vault = work / f"vault-{args.files}"
    if args.load:
        from .bigvault import make_vault
        from .data import data_dir

        data = data_dir()
        if data is None:
            raise SystemExit("benchmark data not found")
        make_vault(data, vault, args.files)
        cmd = [sys.executable, "-m", "benchmarks.memory_stages", "--work", str(work),
               "--files", str(args.files), "--one-load"]  # fmt: skip
        for _ in range(2):  # the first fills a fresh index, the second measures
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            if "filled" not in res:
                break
        return emit(
            {"files": args.files, **res, "knobs": os.environ.get("MEM_PROBE", "")}, args.json
        )
    if args.served:
        cmd = [sys.executable, "-m", "benchmarks.memory_stages", "--work", str(work),
               "--files", str(args.files), "--one-served"]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        return emit(json.loads(out.stdout.strip().splitlines()[-1]), args.json)
    if args.one_served:
        print(json.dumps(served(vault, work / f"load-{args.files}.sqlite")))
        return 0
    if args.one_load:
        print(json.dumps(matrix_load(vault, work / f"load-{args.files}.sqlite")))
        return 0
    from .first_index import BATCH, CONFIGS

    if args.one:
        if args.one in BATCH:
            from mdseek.index.model.onnx_encoder import OnnxEncoder

            OnnxEncoder.batch_size = BATCH[args.one]
        res = one(vault, work / f"mem-{args.one}.sqlite", args.trace)
        print(json.dumps(res))
        return 0
    from .bigvault import make_vault
    from .data import data_dir

    data = data_dir()
    if data is None:
        raise SystemExit("benchmark data not found")
    meta = make_vault(data, vault, args.files)
    results: dict[str, dict] = {}
    for c in args.configs.split(","):
        env = {**os.environ, **CONFIGS[c]}
        for k in ("MDSEEK_PRECISION", "MDSEEK_THREADS"):
            if k not in CONFIGS[c]:
                env.pop(k, None)
        cmd = [sys.executable, "-m", "benchmarks.memory_stages", "--work", str(work),
               "--files", str(args.files), "--one", c] + (["--trace"] if args.trace else [])  # fmt: skip
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        results[c] = json.loads(out.stdout.strip().splitlines()[-1])
        results[c]["load"] = round(os.getloadavg()[0], 1)
        print(f"{c}: {json.dumps(results[c])}", file=sys.stderr)
    return emit({"vault": meta, "runs": results}, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
