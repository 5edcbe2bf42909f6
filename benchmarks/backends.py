"""Embedding backends side by side (torch and ONNX Runtime, fp32 and int8): batch
throughput and query latency at 1 thread and at every core, cosine agreement,
padding, and nDCG@10 of each backend's own vectors on the dev and test halves;
int8 recipes of the fp32 export (:func:`int8_study`). Run alone with
``python -m benchmarks.speed backends``."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from mdseek.index.engine.engine import Engine
from mdseek.index.store import survey

from .timing import ms_stats

Log = Callable[[str], None]

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
    resolved, base_id = base.models.embedder.resolved, base.models.model_id
    built_with = base.models.embedder.settings.backend  # the backend that embedded ``index``
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
