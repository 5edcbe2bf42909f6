"""Speed and scale: index throughput, incremental reindex, query latency and memory.

Every figure is measured in the same run on the same machine and reported as
a ratio against a baseline run beside it:

* index throughput vs the bare encode of the same embedded texts by the same
  backend (the compute limit the model sets);
* torch vs ONNX Runtime side by side (:func:`backends`): batch throughput and
  query latency at 1 thread and at every core, cosine agreement, nDCG@10 of
  each backend's vectors on the dev and held-out test halves;
* the cold command line (:func:`cold_cli`): ``mdseek search`` on an existing
  index vs ``python -c pass`` and an SQLite open, each a fresh process;
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
import importlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mdseek.index.engine.engine import Engine
from mdseek.index.search import retrieve
from mdseek.index.store import survey

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
    """Copy an index consistently (WAL included)."""
    survey.copy(src, dest)


# -- index throughput ---------------------------------------------------------


def throughput(root: Path, index: Path, log: Log) -> tuple[dict, Engine]:
    """Full index of ``root`` (model already loaded) vs bare encode of the same texts.
    Always from an empty index, even when the work folder is kept."""
    from mdseek.index.store.location import companions

    for p in (index, *companions(index)):
        p.unlink(missing_ok=True)
    eng = Engine(root, index_path=index)
    st = eng.embedder.load()  # the backend's encoder (ONNX Runtime unless told otherwise)
    st.encode(["warm up the model"] * 8, 8)  # both runs below start warm
    rep = eng.index()
    if rep.lexical_only_reason:
        raise RuntimeError(rep.lexical_only_reason)
    texts = survey.embedding_texts(index)
    t0 = time.perf_counter()
    st.encode(texts, eng.embedder.batch_size)
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
        "batch_size": eng.embedder.batch_size or eng.embedder.load().batch_size,
        "backend": eng.embedder.backend,
        "threads": eng.embedder.settings.n_threads,
    }
    log(
        f"  throughput: {rep.chunks} chunks in {rep.seconds:.1f}s ({out['chunks_per_s']:.1f}/s);"
        f" bare encode {bare:.1f}s ({out['bare_chunks_per_s']:.1f}/s): ratio {out['overhead_ratio']:.2f}"
    )
    return out, eng


# -- backends: torch vs ONNX Runtime -----------------------------------------


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _variants(
    resolved: str, base_id: str, log: Log, work: Path | None = None
) -> list[tuple[str, str, Callable[[int], object]]]:
    """(name, vector model id, encoder factory taking a thread count); with
    ``work``, also the unfused export (kept in ``work`` between runs)."""
    from mdseek.index.model import onnx_export
    from mdseek.index.model.embed import TorchEncoder
    from mdseek.index.model.onnx_encoder import OnnxEncoder, read_manifest

    out: list[tuple[str, str, Callable[[int], object]]] = [
        ("torch fp32", base_id, lambda n: TorchEncoder(resolved, n)),
    ]
    fp32 = onnx_export.ensure_fp32(resolved, base_id)
    out.append(("onnx fp32", base_id, lambda n: OnnxEncoder(fp32, n)))
    if work is not None:  # the plain traced graph, as exported before fusion (FORMAT 3)
        plain = work / "onnx-unfused"
        m = read_manifest(plain)
        if m is None or m.get("status") != "ok":
            plain.parent.mkdir(parents=True, exist_ok=True)
            onnx_export.export_fp32(resolved, base_id, plain, fuse=False)
        out.append(("onnx fp32 unfused", base_id, lambda n: OnnxEncoder(plain, n)))
    return out


def padding_share(texts: list[str], counts: list[int], batch: int = 32) -> dict:
    """Share of the tokens fed to the model that are padding, batches of ``batch``
    formed after sorting by characters (what sentence-transformers does) or by tokens."""

    def share(order: list[int]) -> float:
        pad = total = 0
        for i in range(0, len(order), batch):
            lens = [counts[j] for j in order[i : i + batch]]
            total += max(lens) * len(lens)
            pad += max(lens) * len(lens) - sum(lens)
        return round(pad / total, 4) if total else 0.0

    idx = range(len(texts))
    return {
        "by_characters": share(sorted(idx, key=lambda i: -len(texts[i]))),
        "by_tokens": share(sorted(idx, key=lambda i: -counts[i])),
        "batch": batch,
    }


def backends(
    root: Path,
    index: Path,
    qrels,
    work: Path,
    log: Log,
    rounds: int = 3,
    n_queries: int = 30,
    max_texts: int | None = None,
) -> dict:
    """Every backend on the same texts in one process, measured in interleaved rounds."""
    from mdseek.index.model.embed import EmbedSettings

    from .data import split_qids
    from .quality import run_engine, score_runs

    base = Engine(root, index_path=index)
    resolved, base_id = base.embedder.resolved, base.model_id
    built_with = base.embedder.settings.backend  # the backend that embedded ``index``
    texts = survey.embedding_texts(index)
    from mdseek.index.model.tokenizer import load_tokenizer

    tok = load_tokenizer(resolved)
    counts = [min(c, tok.window) for c in tok.count_many(texts)]
    pad = padding_share(texts, counts)
    base.close()
    if max_texts:
        texts = texts[:: max(1, len(texts) // max_texts)][:max_texts]
    queries = (
        list(qrels.queries.values())[:n_queries] if qrels else [t[:60] for t in texts[:n_queries]]
    )
    variants = _variants(resolved, base_id, log, work)
    threads = sorted({1, _cores()})
    encs = {(name, n): make(n) for name, _, make in variants for n in threads}
    res: dict = {
        "texts": len(texts), "queries": len(queries), "threads": threads, "rounds": rounds,
        "padding_share": pad, "variants": {},
    }  # fmt: skip
    log(
        f"  padding in batches of 32: sorted by characters {pad['by_characters']:.1%}, by tokens {pad['by_tokens']:.1%}"
    )
    tp: dict = {}
    ql: dict = {}
    for enc in encs.values():
        enc.encode(texts[:8], 8)  # warm
    for _ in range(rounds):
        for (name, n), enc in encs.items():
            if name.startswith("torch"):
                import torch

                torch.set_num_threads(n)  # process-wide in torch
            t0 = time.perf_counter()
            enc.encode(texts, 32)
            tp.setdefault((name, n), []).append(len(texts) / (time.perf_counter() - t0))
            times = []
            for q in queries:
                t0 = time.perf_counter()
                enc.encode([q], 1)
                times.append(time.perf_counter() - t0)
            ql.setdefault((name, n), []).extend(times)
    n_all = threads[-1]
    vecs = {name: encs[(name, n_all)].encode(texts, 32) for name, _, _ in variants}
    ref = vecs["torch fp32"]
    for name, vid, _ in variants:
        cos = (vecs[name] * ref).sum(axis=1)
        row: dict = {
            "model_id": vid,
            "throughput_texts_per_s": {
                str(n): round(statistics.median(tp[(name, n)]), 2) for n in threads
            },
            "query_ms": {str(n): ms_stats(ql[(name, n)]) for n in threads},
            "cosine_vs_torch": {
                "min": round(float(cos.min()), 6),
                "mean": round(float(cos.mean()), 6),
            },
        }
        res["variants"][name] = row
        log(
            f"  {name}: " + ", ".join(
                f"{n} thr {row['throughput_texts_per_s'][str(n)]}/s, query {row['query_ms'][str(n)]['median_ms']} ms"
                for n in threads
            ) + f"; cosine to torch min {row['cosine_vs_torch']['min']}"
        )  # fmt: skip
    encs.clear()
    # Ranking quality of each backend's own vectors (all chunks, not the sample above).
    if qrels is not None:
        halves = {h: split_qids(qrels.queries, h) for h in ("dev", "test")}
        for name, _vid, _ in variants:
            if name.endswith(
                "unfused"
            ):  # the engine serves the fused graph; same vectors (cosine above)
                continue
            copy = work / "backends" / f"{name.replace(' ', '-')}.sqlite"
            settings = EmbedSettings(backend="torch" if name.startswith("torch") else "onnx")
            # the index's own vectors serve its backend; another backend embeds anew
            survey.copy(index, copy, vectors=settings.backend == built_with)
            eng = Engine(root, index_path=copy, embed=settings)
            t0 = time.perf_counter()
            rep = eng.index()
            out = {"embed_seconds": round(time.perf_counter() - t0, 1), "embedded": rep.embedded}
            for mode in ("dense", "hybrid"):
                for half, qids in halves.items():
                    runs, _ = run_engine(eng, qrels.subset(qids), mode)
                    sc = score_runs(runs, qrels.subset(qids), bool(qrels.sections))
                    out[f"{mode}/{half}"] = {
                        "doc_ndcg@10": round(sc["doc"]["ndcg@10"], 4),
                        **(
                            {"section_ndcg@10": round(sc["section"]["ndcg@10"], 4)}
                            if "section" in sc
                            else {}
                        ),
                    }
            eng.close()
            res["variants"][name]["quality"] = out
            log(
                f"  {name}: embedded {rep.embedded} chunks in {out['embed_seconds']}s; test nDCG@10 dense"
                f" {out['dense/test']['doc_ndcg@10']}, hybrid {out['hybrid/test']['doc_ndcg@10']}"
            )
    return res


def int8_study(index: Path, work: Path, log: Log, max_texts: int = 200) -> dict:
    """Dynamic int8 quantisation of the fp32 export (onnxruntime, per-channel
    weights unless said), leaving more or fewer MatMuls in fp32: cosine to the
    fp32 vectors and throughput beside fp32, on chunk texts of ``index``.
    mdseek offers int8 only if some variant keeps cosine >= 0.999 and is faster."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from mdseek.index.model import onnx_export
    from mdseek.index.model.model import model_id as model_id_of
    from mdseek.index.model.model import resolve_model
    from mdseek.index.model.onnx_encoder import OnnxEncoder

    resolved = resolve_model(None)
    src = onnx_export.ensure_fp32(resolved, model_id_of(resolved))
    texts = survey.embedding_texts(index)
    texts = texts[:: max(1, len(texts) // max_texts)][:max_texts]
    graph = onnx.load(str(src / "model.onnx"), load_external_data=False).graph
    # The fused graph: every MatMul has a weight; Attention ops hold the QKV weights.
    weights = [
        n.name
        for n in graph.node
        if n.op_type in ("MatMul", "Attention") and "/self/MatMul" not in n.name
    ]
    ffn_out = [n for n in weights if n.endswith("/output/dense/MatMul") and "attention" not in n]
    ffn_in = [n for n in weights if "/intermediate/" in n]
    plans = [
        ("every MatMul and Attention (naive)", [], True),
        ("every MatMul and Attention, per-tensor", [], False),
        ("FFN output layers kept fp32", ffn_out, True),
        ("attention only (all FFN kept fp32)", ffn_out + ffn_in, True),
    ]
    fp32 = OnnxEncoder(src, threads=1)
    ref = fp32.encode(texts, 32)
    out: dict = {
        "texts": len(texts),
        "weight_matmuls": len(weights),
        "threshold": onnx_export.MIN_COSINE_INT8,
        "variants": [],
    }
    base_t: list[float] = []
    for name, exclude, per_channel in plans:
        d = work / "int8" / re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(src, d, ignore=shutil.ignore_patterns("model.onnx*"))
        t0 = time.perf_counter()
        quantize_dynamic(
            str(src / "model.onnx"), str(d / "model.onnx"), per_channel=per_channel,
            weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul", "Attention"], nodes_to_exclude=exclude,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},  # fused ops defeat shape inference
        )  # fmt: skip
        qs = time.perf_counter() - t0
        enc = OnnxEncoder(d, threads=1)
        t0 = time.perf_counter()
        fp32.encode(texts, 32)
        base_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        v = enc.encode(texts, 32)
        t8 = time.perf_counter() - t0
        cos = (v * ref).sum(axis=1)
        row = {
            "variant": name, "fp32_matmuls": len(exclude), "quantize_seconds": round(qs, 1),
            "cosine_min": round(float(cos.min()), 5), "cosine_mean": round(float(cos.mean()), 5),
            "speedup_vs_fp32": round(base_t[-1] / t8, 2),
            "size_mb": round(sum(f.stat().st_size for f in d.glob("model.onnx*")) / 2**20, 1),
        }  # fmt: skip
        row["passes"] = (
            row["cosine_min"] >= onnx_export.MIN_COSINE_INT8 and row["speedup_vs_fp32"] > 1.0
        )
        out["variants"].append(row)
        log(
            f"  int8 {name}: cosine min {row['cosine_min']} mean {row['cosine_mean']}, {row['speedup_vs_fp32']}x fp32"
        )
        shutil.rmtree(d, ignore_errors=True)
    out["offered"] = any(r["passes"] for r in out["variants"])
    return out


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
        # the document with the most chunks (the first by path among equals)
        rel, n_chunks = min(survey.chunks_per_document(index), key=lambda d: (-d[1], d[0]))
        chunks = eng.store.chunks.document_chunks(rel)
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
        texts = [c.embedding_text for c in eng.store.chunks.document_chunks(rel)]
        st = eng.embedder.load()
        t0 = time.perf_counter()
        st.encode(texts, eng.embedder.batch_size)
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
    model = survey.models(real_index)[0]
    real_vecs = survey.vectors_by_hash(real_index, model)
    per_doc = [(p, n) for p, n in survey.chunks_per_document(real_index) if n]
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
            pending = eng.store.vectors.pending_chunks(model_id)
            dim = len(next(iter(real_vecs.values())))
            n_real = n_syn = 0
            for i in range(0, len(pending), 5000):
                part = pending[i : i + 5000]
                vecs = np.empty((len(part), dim), dtype=np.float32)
                for j, (h, _) in enumerate(part):
                    real = real_vecs.get(h)
                    if real is not None:
                        vecs[j] = real
                        n_real += 1
                    else:
                        v = rng.standard_normal(dim).astype(np.float32)
                        vecs[j] = v / np.linalg.norm(v)
                        n_syn += 1
                eng.store.vectors.put_vectors(model_id, [h for h, _ in part], vecs)
            counts = eng.store.counts()
            real_total = survey.chunks_with_vectors(index)
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
    eng.dense_side.sync()
    load = time.perf_counter() - t0
    # As in the server: lexical candidates ranked from memory (index/search/lexical.py)
    # from LEXICAL_IN_MEMORY_MIN chunks, by FTS5 below.
    eng.lexical_in_memory = True
    lexical_build = eng.build_lexical()
    chunks = eng.store.counts()["chunks"]
    lexical_from = "memory" if eng.lexical_side.current() else "FTS5"
    qs = (queries * (1 + n // max(1, len(queries))))[:n]
    for q in qs[:5]:
        eng.search(q, limit=10)
    out: dict = {
        "chunks": chunks, "passages": eng.store.counts()["passages"],
        "dense_rows": eng.dense.rows, "matrix_load_seconds": round(load, 3),
        "lexical_build_seconds": round(lexical_build, 2), "lexical_from": lexical_from,
    }  # fmt: skip
    for mode in ("hybrid", "dense", "lexical"):
        times = []
        for q in qs:
            fresh()
            t = time.perf_counter()
            eng.search(q, limit=10, mode=mode)
            times.append(time.perf_counter() - t)
        out[mode] = ms_stats(times)
    # Where a hybrid query's time goes: the query embedding, the lexical side
    # (query terms + BM25 from memory), the dense matrix; and beside them the
    # same lexical query ranked by FTS5's bm25() in SQLite, with the overlap of
    # the two top-10s (the in-memory ranking is FTS5's formula: 10/10 expected).
    emb, lex, fts, den, overlap = [], [], [], [], []
    for q in qs[: min(len(qs), 60)]:
        fresh()
        t = time.perf_counter()
        qv = eng.embedder.encode_query(q)
        emb.append(time.perf_counter() - t)
        t = time.perf_counter()
        terms, hits = eng.lexical_side.hits(eng.parse_query(q), eng.ranking.candidates)
        lex.append(time.perf_counter() - t)
        t = time.perf_counter()
        sql = eng.store.postings.fts_search(terms.match(), retrieve.CANDIDATES, eng.fts_weights)
        fts.append(time.perf_counter() - t)
        if lexical_from == "memory":
            overlap.append(len({c for c, _ in hits[:10]} & {c for c, _ in sql[:10]}))
        t = time.perf_counter()
        eng.dense.search(qv, retrieve.CANDIDATES)
        den.append(time.perf_counter() - t)
    out["parts"] = {
        "query_embedding": ms_stats(emb), "lexical": ms_stats(lex), "dense_matrix": ms_stats(den),
        "fts5_bm25": ms_stats(fts),
        "top10_overlap_memory_vs_fts5": round(statistics.mean(overlap), 2) if overlap else None,
    }  # fmt: skip
    out["backend"] = eng.embedder.backend
    rss_index = proc.memory_info().rss
    # Brute force: embed the query, re-read every vector from SQLite, numpy over all.
    model = eng.model_id
    times = []
    for q in qs[:n_brute]:
        fresh()
        t = time.perf_counter()
        qv = eng.embedder.encode_query(q)
        ids, mat = eng.store.vectors.chunk_vectors(model)  # every vector re-read from SQLite
        scores = mat @ qv
        k = min(10, len(ids))
        top = np.argpartition(-scores, k - 1)[:k]
        _ = ids[top[np.argsort(-scores[top])]]
        times.append(time.perf_counter() - t)
        del ids, mat
    out["brute_force"] = ms_stats(times)
    out["rss_mb"] = {
        "model_loaded": round(rss_model / 2**20, 1),
        "index_loaded": round(rss_index / 2**20, 1),
        "index_share": round((rss_index - rss_model) / 2**20, 1),
    }
    out["matrix_mb"] = round(eng.dense.mat.nbytes / 2**20, 1)
    eng.close()
    return out


def latency(
    tiers: list[dict], queries: list[str], n: int, n_brute: list[int], work: Path, log: Log
) -> list[dict]:
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
        (
            "brute force (SQLite re-read + numpy), median",
            [r["brute_force"]["median_ms"] for r in lat],
            "-x",
            "C3",
        ),
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
    for name in ("backends", "cold-cli"):
        b = sub.add_parser(
            name, help=f"the {name} part alone on an indexed folder (JSON on stdout)"
        )
        b.add_argument("--root", required=True)
        b.add_argument("--index", required=True)
        b.add_argument("--work", required=True)
        b.add_argument("--rounds", type=int, default=2)
        b.add_argument("--texts", type=int, default=192)
    args = ap.parse_args(argv)
    if args.cmd == "worker":
        queries = json.loads(Path(args.queries).read_text())
        res = worker(Path(args.root), Path(args.index), queries, args.n, args.brute)
    else:
        from .data import DataMissing, data_dir, load_rhdh

        def log(msg: str) -> None:
            print(msg, file=sys.stderr, flush=True)

        root, index, work = Path(args.root), Path(args.index), Path(args.work)
        if args.cmd == "cold-cli":
            res = cold_cli(root, index, "how do I configure the database connection", log)
        else:
            qrels = None
            try:
                d = data_dir()
                qrels = load_rhdh(d)[1] if d else None
            except DataMissing:
                pass
            res = backends(root, index, qrels, work, log, rounds=args.rounds, max_texts=args.texts)
            res["int8"] = int8_study(index, work, log)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())


# -- report -------------------------------------------------------------------


def render_backends_and_cli(sp: dict) -> list[str]:
    """Markdown for the backend comparison and the cold command line."""
    L: list[str] = []
    be = sp.get("backends")
    if be:
        th = [str(n) for n in be["threads"]]
        L.append(
            f"### Embedding backends side by side ({be['texts']} chunk texts, {be['queries']} queries,"
            f" median of {be['rounds']} interleaved rounds)"
        )
        L.append("")
        head = ["backend"]
        head += [f"batch texts/s, {n} thread(s)" for n in th]
        head += [f"query ms (median / p95), {n} thread(s)" for n in th]
        head += ["cosine to torch (min / mean)"]
        qual = any("quality" in v for v in be["variants"].values())
        if qual:
            head += ["nDCG@10 dense dev / test", "nDCG@10 hybrid dev / test"]
        rows = []
        for name, v in be["variants"].items():
            row = [name]
            row += [f"{v['throughput_texts_per_s'][n]:.1f}" for n in th]
            row += [
                f"{v['query_ms'][n]['median_ms']:.1f} / {v['query_ms'][n]['p95_ms']:.1f}"
                for n in th
            ]
            row += [f"{v['cosine_vs_torch']['min']:.6f} / {v['cosine_vs_torch']['mean']:.6f}"]
            if qual:
                q = v.get("quality", {})

                def nd(key: str, q=q) -> str:
                    m = q.get(key)
                    return "–" if not m else f"{m['doc_ndcg@10']:.4f}"

                row += [
                    f"{nd('dense/dev')} / {nd('dense/test')}",
                    f"{nd('hybrid/dev')} / {nd('hybrid/test')}",
                ]
            rows.append(row)
        L += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        L += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
        L.append("")
        L.append(
            "Same process, same texts, batches of 32 sorted by token count; nDCG@10 (document level) from each"
            " backend's own vectors of every chunk, on the dev and held-out test halves of the product-docs queries."
        )
        pad = be.get("padding_share")
        if pad:
            L.append(
                f"Padding in batches of {pad['batch']} over every chunk: {pad['by_characters']:.1%} of the tokens"
                f" when sorted by characters, {pad['by_tokens']:.1%} when sorted by tokens (what mdseek does)."
            )
        L.append("")
    q8 = sp.get("int8")
    if q8:
        L.append(
            f"### int8 (onnxruntime dynamic quantisation) vs the fp32 export ({q8['texts']} chunk texts)"
        )
        L.append("")
        L += [
            "| variant | MatMuls kept fp32 | cosine to fp32 (min / mean) | speed vs fp32 | size MB |",
            "|---|---|---|---|---|",
        ]
        for r in q8["variants"]:
            L.append(
                f"| {r['variant']} | {r['fp32_matmuls']} of {q8['weight_matmuls']} | {r['cosine_min']:.5f} /"
                f" {r['cosine_mean']:.5f} | {r['speedup_vs_fp32']:.2f}× | {r['size_mb']:.0f} |"
            )
        L.append("")
        L.append(
            f"Cosine ≥ {q8['threshold']} and faster: "
            + ("some variant is." if q8["offered"] else "no variant is.")
            + " Cosine is not what users feel: the first variant is offered as `--precision int8`,"
            " judged on nDCG@10 (`python -m benchmarks.precision`, below)."
        )
        L.append("")
    cli = sp.get("cold_cli")
    if cli:
        L.append(
            f"### Cold command line (fresh process each, median of {cli['runs']} interleaved runs)"
        )
        L.append("")
        L += ["| command | median s | min s |", "|---|---|---|"]
        for k, v in cli.items():
            if isinstance(v, dict):
                L.append(f"| `{k}` | {v['median_s']:.2f} | {v['min_s']:.2f} |")
        L.append("")
        L.append(
            f"Hybrid search on an existing index = {cli['hybrid_vs_python_sqlite']}× a bare Python start plus an"
            f" SQLite open (lexical {cli['lexical_vs_python_sqlite']}×); no daemon, no torch import."
        )
        L.append("")
    return L
