"""Speed and scale: index throughput, incremental reindex, query latency and memory.

Every figure is measured in the same run on the same machine and reported as
a ratio against a baseline run beside it:

* index throughput vs the bare ``SentenceTransformer.encode`` of the same
  embedded texts (the compute limit the model sets);
* a one-line edit reindexed vs re-embedding the whole document (what a
  per-document indexer does);
* query latency vs a brute-force search that re-reads every vector from
  SQLite per query, at about 1k, 10k and 100k chunks. The scale corpora are
  generated from the product docs; their real chunks keep their real vectors,
  the generated chunks get synthetic random unit vectors (the cost of a
  matrix product, a top-k and the memory do not depend on which unit vectors
  are in the matrix). The output says how many of each.

``python -m benchmarks.speed worker ...`` is the latency worker: one process
per corpus size, so that its resident memory is that corpus's alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mdseek.index import retrieve
from mdseek.index.engine import Engine

from .data import REPO, make_scale_docs

Log = Callable[[str], None]


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


def backup(src: Path, dest: Path) -> None:
    """Copy an SQLite index consistently (WAL included)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    for f in dest.parent.glob(dest.name + "*"):
        f.unlink()
    s = sqlite3.connect(str(src))
    d = sqlite3.connect(str(dest))
    with d:
        s.backup(d)
    s.close()
    d.close()


# -- index throughput ---------------------------------------------------------


def throughput(root: Path, index: Path, log: Log) -> tuple[dict, Engine]:
    """Full index of ``root`` (model already loaded) vs bare encode of the same texts."""
    eng = Engine(root, index_path=index)
    st = eng.embedder.load()
    st.encode(["warm up the model"] * 8, batch_size=8)  # both runs below start warm
    rep = eng.index()
    if rep.lexical_only_reason:
        raise RuntimeError(rep.lexical_only_reason)
    texts = [
        r[0]
        for r in eng.store.db.execute("SELECT min(embedding_text) FROM chunks GROUP BY text_hash")
    ]
    t0 = time.perf_counter()
    st.encode(texts, batch_size=eng.embedder.batch_size, normalize_embeddings=True, convert_to_numpy=True)
    bare = time.perf_counter() - t0
    out = {
        "corpus_files": rep.files,
        "chunks": rep.chunks,
        "embedded": rep.embedded,
        "index_seconds": round(rep.seconds, 2),
        "embed_seconds": round(rep.embed_seconds, 2),
        "parse_chunk_store_seconds": round(rep.seconds - rep.embed_seconds, 2),
        "chunks_per_s": round(rep.chunks / rep.seconds, 2),
        "bare_encode_seconds": round(bare, 2),
        "bare_chunks_per_s": round(len(texts) / bare, 2),
        "overhead_ratio": round(rep.seconds / bare, 3),
        "batch_size": eng.embedder.batch_size,
    }
    log(
        f"  throughput: {rep.chunks} chunks in {rep.seconds:.1f}s ({out['chunks_per_s']:.1f}/s);"
        f" bare encode {bare:.1f}s ({out['bare_chunks_per_s']:.1f}/s): ratio {out['overhead_ratio']:.2f}"
    )
    return out, eng


# -- incremental --------------------------------------------------------------


def _editable_line(lines: list[str], start: int, end: int) -> int | None:
    """A prose line in [start, end): not a heading, fence, table, list marker or blank."""
    fence = False
    cands = []
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s.startswith("```") or s.startswith("~~~"):
            fence = not fence
            continue
        if start <= i < end and not fence and len(s) > 40 and s[0].isalpha():
            cands.append(i)
    return cands[len(cands) // 2] if cands else None


def incremental(src_root: Path, src_index: Path, work: Path, log: Log) -> dict:
    root = work / "docs"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for f in src_root.rglob("*.md"):
        dest = root / f.relative_to(src_root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest)
    index = work / "index.sqlite"
    backup(src_index, index)
    eng = Engine(root, index_path=index)
    try:
        eng.embedder.load()
        rep0 = eng.index()  # nothing changed: the reconcile cost at startup
        docs = eng.store.db.execute(
            "SELECT d.path, count(*) n FROM chunks c JOIN documents d ON d.id = c.doc_id"
            " GROUP BY d.id ORDER BY n DESC, d.path LIMIT 1"
        ).fetchone()
        rel, n_chunks = docs[0], int(docs[1])
        chunks = eng.store.document_chunks(rel)
        mid = chunks[len(chunks) // 2]
        path = root / rel
        lines = path.read_text(encoding="utf-8").split("\n")
        line = _editable_line(lines, mid.start_line, mid.end_line)
        if line is None:
            line = _editable_line(lines, 0, len(lines))
        if line is None:
            raise RuntimeError(f"no prose line to edit in {rel}")
        lines[line] = lines[line].rstrip() + " This sentence was added by the benchmark."
        path.write_text("\n".join(lines), encoding="utf-8")
        rep = eng.index_file(path)
        # What a per-document indexer does: embed every chunk of the document again.
        texts = [c.embedding_text for c in eng.store.document_chunks(rel)]
        st = eng.embedder.load()
        t0 = time.perf_counter()
        st.encode(texts, batch_size=eng.embedder.batch_size, normalize_embeddings=True)
        whole = time.perf_counter() - t0
        out = {
            "document": rel,
            "document_chunks": n_chunks,
            "edited_line": line + 1,
            "chunks_embedded": rep.embedded,
            "chunks_rewritten": rep.chunks_written,
            "reindex_seconds": round(rep.seconds, 3),
            "embed_seconds": round(rep.embed_seconds, 3),
            "whole_document_embed_seconds": round(whole, 3),
            "speedup": round(whole / rep.seconds, 1) if rep.seconds else None,
            "unchanged_reconcile_seconds": round(rep0.seconds, 3),
            "unchanged_reconcile_files": rep0.files,
        }
        log(
            f"  incremental: {rel} ({n_chunks} chunks) one-line edit: {rep.embedded} embedded in"
            f" {rep.seconds:.2f}s vs {whole:.2f}s to re-embed the document ({out['speedup']}x);"
            f" no-change reconcile of {rep0.files} files {rep0.seconds:.2f}s"
        )
        return out
    finally:
        eng.close()


# -- scale corpora ------------------------------------------------------------


def _link(src: Path, dest: Path) -> None:
    try:
        os.link(src, dest)
    except OSError:
        shutil.copy2(src, dest)


def build_tiers(
    real_root: Path,
    real_index: Path,
    work: Path,
    sizes: list[int],
    log: Log,
    seed: int = 7,
) -> list[dict]:
    """Index folders of about ``sizes`` chunks: real docs first (with their real vectors),
    then generated docs (synthetic unit vectors). Each tier contains the previous one."""
    work.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(str(real_index))
    model = src.execute("SELECT model FROM vectors LIMIT 1").fetchone()[0]
    real_vecs = {h: v for h, v in src.execute("SELECT text_hash, vec FROM vectors WHERE model=?", (model,))}
    per_doc = src.execute(
        "SELECT d.path, count(*) FROM chunks c JOIN documents d ON d.id = c.doc_id GROUP BY d.id ORDER BY d.path"
    ).fetchall()
    src.close()
    rng = np.random.default_rng(seed)
    gen = work / "generated"
    shutil.rmtree(gen, ignore_errors=True)
    made = 0  # generated sections so far (files gen-00000.md ... in `gen`)
    tiers: list[dict] = []
    prev_index: Path | None = None
    prev_root: Path | None = None
    for n, size in enumerate(sizes):
        t0 = time.perf_counter()
        root = work / f"tier-{size}"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        total = 0
        for rel, c in per_doc:
            if total >= size:
                break
            dest = root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            _link(real_root / rel, dest)
            total += int(c)
        need = size - total
        if need > 0:
            extra = need - made
            if extra > 0:
                make_scale_docs(real_root, gen, extra, seed=seed + n, prefix=f"gen{n}")
                made += extra
            for f in sorted(gen.glob("*.md")):
                _link(f, root / f.name)
        index = work / f"tier-{size}.sqlite"
        if prev_index is not None and prev_root is not None:
            backup(prev_index, index)
            # The previous tier's documents are the same files under a new root: the
            # index keys them by relative path, size and mtime, so they are not redone.
        eng = Engine(root, index_path=index)
        try:
            rep = eng.index(embed=False)
            model_id = eng.model_id
            if model_id != model:
                raise RuntimeError(f"model id changed: {model_id} != {model}")
            pending = eng.store.pending_chunks(model_id)
            dim = len(next(iter(real_vecs.values()))) // 4
            n_real = n_syn = 0
            for i in range(0, len(pending), 5000):
                part = pending[i : i + 5000]
                vecs = np.empty((len(part), dim), dtype=np.float32)
                for j, (h, _) in enumerate(part):
                    raw = real_vecs.get(h)
                    if raw is not None:
                        vecs[j] = np.frombuffer(raw, dtype=np.float32)
                        n_real += 1
                    else:
                        v = rng.standard_normal(dim).astype(np.float32)
                        vecs[j] = v / np.linalg.norm(v)
                        n_syn += 1
                eng.store.put_vectors(model_id, [h for h, _ in part], vecs)
            counts = eng.store.counts()
            real_total = eng.store.db.execute(
                "SELECT count(*) FROM chunks WHERE text_hash IN (SELECT text_hash FROM vectors)"
            ).fetchone()[0]
        finally:
            eng.close()
        prev = tiers[-1] if tiers else {"real_vectors": 0, "synthetic_vectors": 0}
        tier = {
            "target": size,
            "root": str(root),
            "index": str(index),
            "chunks": counts["chunks"],
            "files": counts["files"],
            "real_vectors": prev["real_vectors"] + n_real,
            "synthetic_vectors": prev["synthetic_vectors"] + n_syn,
            "build_seconds": round(time.perf_counter() - t0, 1),
            "chunked_this_tier": rep.chunks_written,
        }
        assert real_total == counts["chunks"], "every chunk must have a vector"
        tiers.append(tier)
        log(
            f"  tier ~{size}: {counts['chunks']} chunks in {counts['files']} files"
            f" ({tier['real_vectors']} real vectors, {tier['synthetic_vectors']} synthetic)"
            f" built in {tier['build_seconds']}s"
        )
        prev_index, prev_root = index, root
    return tiers


# -- query latency ------------------------------------------------------------


def worker(root: Path, index: Path, queries: list[str], n: int, n_brute: int) -> dict:
    import psutil

    proc = psutil.Process()
    eng = Engine(root, index_path=index)
    # The embedder caches recent query vectors (an editor resends the same query);
    # every timed query here is embedded afresh, so the cache is emptied before each.
    qcache = getattr(eng.embedder, "_query_cache", None)

    def fresh() -> None:
        if qcache is not None:
            qcache.clear()

    eng.embedder.load()
    eng.embedder.encode_query("warm up")
    rss_model = proc.memory_info().rss
    t0 = time.perf_counter()
    eng._sync_dense()
    load = time.perf_counter() - t0
    chunks = eng.store.counts()["chunks"]
    qs = (queries * (1 + n // max(1, len(queries))))[:n]
    for q in qs[:5]:
        eng.search(q, limit=10)
    out: dict = {"chunks": chunks, "dense_rows": len(eng.dense), "matrix_load_seconds": round(load, 3)}
    for mode in ("hybrid", "dense", "lexical"):
        times = []
        for q in qs:
            fresh()
            t = time.perf_counter()
            eng.search(q, limit=10, mode=mode)
            times.append(time.perf_counter() - t)
        out[mode] = ms_stats(times)
    # Where a hybrid query's time goes.
    emb, fts, den = [], [], []
    for q in qs[: min(len(qs), 60)]:
        fresh()
        t = time.perf_counter()
        qv = eng.embedder.encode_query(q)
        emb.append(time.perf_counter() - t)
        t = time.perf_counter()
        eng.store.fts_search(retrieve.fts_query(q), retrieve.CANDIDATES, eng.fts_weights)
        fts.append(time.perf_counter() - t)
        t = time.perf_counter()
        eng.dense.search(qv, retrieve.CANDIDATES)
        den.append(time.perf_counter() - t)
    out["parts"] = {"query_embedding": ms_stats(emb), "fts": ms_stats(fts), "dense_matrix": ms_stats(den)}
    rss_index = proc.memory_info().rss
    # Brute force: embed the query, re-read every vector from SQLite, numpy over all.
    db = sqlite3.connect(str(index))
    model = eng.model_id
    times = []
    for q in qs[:n_brute]:
        fresh()
        t = time.perf_counter()
        qv = eng.embedder.encode_query(q)
        rows = db.execute(
            "SELECT c.id, v.vec FROM chunks c JOIN vectors v ON v.model = ? AND v.text_hash = c.text_hash",
            (model,),
        ).fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        scores = mat @ qv
        k = min(10, len(ids))
        top = np.argpartition(-scores, k - 1)[:k]
        _ = ids[top[np.argsort(-scores[top])]]
        times.append(time.perf_counter() - t)
        del rows, mat
    db.close()
    out["brute_force"] = ms_stats(times)
    out["rss_mb"] = {
        "model_loaded": round(rss_model / 2**20, 1),
        "index_loaded": round(rss_index / 2**20, 1),
        "index_share": round((rss_index - rss_model) / 2**20, 1),
    }
    out["matrix_mb"] = round(eng.dense.mat.nbytes / 2**20, 1)
    eng.close()
    return out


def latency(tiers: list[dict], queries: list[str], n: int, n_brute: list[int], work: Path, log: Log) -> list[dict]:
    qfile = work / "queries.json"
    qfile.write_text(json.dumps(queries))
    out = []
    for tier, nb in zip(tiers, n_brute, strict=True):
        cmd = [
            sys.executable, "-m", "benchmarks.speed", "worker",
            "--root", tier["root"], "--index", tier["index"], "--queries", str(qfile),
            "--n", str(n), "--brute", str(nb),
        ]  # fmt: skip
        t0 = time.perf_counter()
        res = subprocess.run(cmd, cwd=str(REPO), capture_output=True, text=True, timeout=1800)
        if res.returncode != 0:
            raise RuntimeError(f"latency worker failed:\n{res.stderr[-3000:]}")
        r = json.loads(res.stdout.strip().splitlines()[-1])
        r.update({k: tier[k] for k in ("target", "real_vectors", "synthetic_vectors", "files")})
        out.append(r)
        log(
            f"  latency ~{tier['target']}: hybrid median {r['hybrid']['median_ms']} ms p95 {r['hybrid']['p95_ms']} ms;"
            f" brute force median {r['brute_force']['median_ms']} ms; RSS {r['rss_mb']['index_loaded']} MB"
            f" ({time.perf_counter() - t0:.0f}s)"
        )
    return out


def plot(lat: list[dict], dest: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [r["chunks"] for r in lat]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    series = [
        ("mdseek hybrid, median", [r["hybrid"]["median_ms"] for r in lat], "-o", "C0"),
        ("mdseek hybrid, p95", [r["hybrid"]["p95_ms"] for r in lat], "--o", "C0"),
        ("mdseek dense only, median", [r["dense"]["median_ms"] for r in lat], "-s", "C2"),
        ("mdseek lexical only, median", [r["lexical"]["median_ms"] for r in lat], "-^", "C4"),
        ("brute force (SQLite re-read + numpy), median", [r["brute_force"]["median_ms"] for r in lat], "-x", "C3"),
    ]
    for label, y, style, color in series:
        ax.plot(x, y, style, label=label, color=color)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks in the index")
    ax.set_ylabel("query latency, ms (query embedding included)")
    ax.set_title("Query latency vs corpus size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(dest)
    plt.close(fig)


def _main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.speed")
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("worker", help="query latency and memory of one index (JSON on stdout)")
    w.add_argument("--root", required=True)
    w.add_argument("--index", required=True)
    w.add_argument("--queries", required=True)
    w.add_argument("--n", type=int, default=100)
    w.add_argument("--brute", type=int, default=20)
    args = ap.parse_args(argv)
    queries = json.loads(Path(args.queries).read_text())
    res = worker(Path(args.root), Path(args.index), queries, args.n, args.brute)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
