"""Does onnxruntime's transformer optimizer (fused attention / LayerNorm / GELU)
make the cached ONNX export faster for bulk embedding? Side by side in one
process: the export as mdseek caches it, the same graph after
``onnxruntime.transformers.optimizer.optimize_model(model_type="bert")``, and
torch (sentence-transformers), on the same texts and thread count.

    .venv/bin/python -m benchmarks.onnx_fusion [--threads 1] [--rounds 3] [--texts 128]

Texts: 150-word pieces of the product docs (../shared/data/rhdh/docs), or of
fixtures/ when absent. Prints texts/s per round and the median, the fused
operator counts, and the minimum cosine between the three.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from mdseek.index.model.model import default_model_path, model_id, resolve_model
from mdseek.index.model.onnx_encoder import OnnxEncoder, session_options
from mdseek.index.model.onnx_export import ensure_fp32

from .data import FIXTURES, data_dir


def texts(n: int) -> list[str]:
    try:
        src = data_dir() / "rhdh" / "docs"
        files = sorted(src.glob("*.md"))
    except Exception:  # noqa: BLE001 - no benchmark data: the fixtures
        files = []
    if not files:
        files = sorted(FIXTURES.rglob("*.md"))
    words = " ".join(p.read_text(encoding="utf-8") for p in files).split()
    return [" ".join(words[i : i + 150]) for i in range(0, 150 * n, 150)][:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--texts", type=int, default=128)
    args = ap.parse_args()

    import onnxruntime as ort
    from onnxruntime.transformers.optimizer import optimize_model

    resolved = resolve_model(str(default_model_path()))
    folder = ensure_fp32(resolved, model_id(resolved))
    enc = OnnxEncoder(folder, threads=args.threads)
    fused_path = Path(tempfile.mkdtemp()) / "fused.onnx"
    opt = optimize_model(
        str(folder / enc.manifest["file"]), model_type="bert", num_heads=12, hidden_size=384
    )
    fused_ops = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
    opt.save_model_to_file(str(fused_path), use_external_data_format=False)
    fused = OnnxEncoder(folder, threads=args.threads)
    fused.session = ort.InferenceSession(
        str(fused_path), session_options(args.threads), providers=["CPUExecutionProvider"]
    )

    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    st = SentenceTransformer(resolved, device="cpu")
    data = texts(args.texts)
    runs: dict[str, list[float]] = {"onnx export (mdseek)": [], "onnx fused": [], "torch": []}
    vecs: dict[str, np.ndarray] = {}
    for _ in range(args.rounds):
        for name, fn in (
            ("onnx export (mdseek)", lambda: enc.encode(data)),
            ("onnx fused", lambda: fused.encode(data)),
            ("torch", lambda: st.encode(data, batch_size=32, normalize_embeddings=True)),
        ):
            t0 = time.perf_counter()
            vecs[name] = np.asarray(fn(), dtype=np.float32)
            runs[name].append(len(data) / (time.perf_counter() - t0))
    print(
        f"{len(data)} texts of 150 words, {args.threads} thread(s), {args.rounds} rounds; fused ops: {fused_ops}"
    )
    for name, r in runs.items():
        print(
            f"  {name:22} median {statistics.median(r):6.1f} texts/s  rounds {[round(x, 1) for x in r]}"
        )
    names = list(vecs)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            cos = float((vecs[names[i]] * vecs[names[j]]).sum(1).min())
            print(f"  min cosine {names[i]} vs {names[j]}: {cos:.6f}")


if __name__ == "__main__":
    main()
