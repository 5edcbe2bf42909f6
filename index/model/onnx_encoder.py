"""Run a cached ONNX export of a sentence-transformers model: no torch.

An export folder (written by :mod:`mdseek.index.model.onnx_export`) holds
``model.onnx`` with its weights in ``model.onnx.data`` (the whole sentence-transformers pipeline in one graph:
transformer, pooling as the model's modules specify, any dense layer,
normalise), the model's own fast tokenizer (``tokenizer.json``), its window
(``sentence_bert_config.json``) and ``manifest.json`` (what was exported from
what, and how well it agreed with torch). Loading one costs the import of
``onnxruntime`` and a session, a fraction of a second; encoding tokenizes with
``tokenizers``, sorts by token count (batches pad to similar lengths),
runs the graph and L2-normalises.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

MANIFEST = "manifest.json"
COUNT_SLICE = 512  # texts per tokenizer call when only counts are wanted
log = logging.getLogger(__name__)
_arena_lock = threading.Lock()
_arena: bool | None = None  # the process's shared CPU arena: registered, failed, not yet
FORMAT = 4  # 4: fused graph (transformer optimizer). Bump when the folder layout or the graph's contract changes


def read_manifest(folder: Path) -> dict | None:
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    return data


def session_options(threads: int, fused: bool = False) -> Any:
    """``fused``: the graph was optimised at export (the transformer optimizer's
    fusions), so the session runs only ORT's basic graph rewrites: the session
    opens in 40 ms instead of 60, and runs as fast with the same vectors
    (measured on the bundled model: cosine >= 0.9999998, 12.9 vs 12.7 texts/s)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    if fused:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.intra_op_num_threads = max(1, threads)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # Worker threads that spin between ops burn a shared machine's cores for nothing.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.log_severity_level = 3
    if shared_arena():
        so.add_session_config_entry("session.use_env_allocators", "1")
    return so


def shared_arena() -> bool:
    """One CPU memory arena for every session of this process (registered
    once). A session's arena keeps the activations of its largest batch, and
    the bulk work has two sessions (threads by demand: two threads, and one
    while a request waits): at 8 texts of ~256 tokens each one kept ~116 MB of
    int8 activations, one shared arena keeps ~120 MB for both
    (benchmarks/README.md, "Memory at 10,000 notes"). False if ONNX Runtime
    refuses (each session then has its own, as before)."""
    global _arena
    with _arena_lock:
        if _arena is None:
            import onnxruntime as ort

            try:
                cpu = ort.OrtMemoryInfo(
                    "Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT
                )
                ort.create_and_register_allocator(cpu, ort.OrtArenaCfg(0, -1, -1, -1))
                _arena = True
            except Exception as exc:  # an older or stripped onnxruntime: per-session arenas
                log.debug("no shared ONNX Runtime arena: %s", exc)
                _arena = False
        return _arena


def token_order(lengths: list[int]) -> list[int]:
    """Indices sorted by token count, longest first (ties keep input order)."""
    return sorted(range(len(lengths)), key=lambda i: -lengths[i])


class OnnxEncoder:
    """One export folder, ready to encode. Thread-safe (onnxruntime sessions are)."""

    backend = "onnx"
    # Texts per model call. Activations grow with batch x tokens and ONNX
    # Runtime's arena keeps their peak: texts of ~256 tokens peaked at 579 MB
    # RSS in calls of 32 and 257 MB in calls of 8, at the same rate (fp32, one
    # thread; `python -m benchmarks.batch_memory`, benchmarks/README).
    batch_size = 8

    def __init__(self, folder: Path, threads: int = 1):
        from tokenizers import Tokenizer

        self.folder = Path(folder)
        manifest = read_manifest(self.folder)
        if manifest is None or manifest.get("status") != "ok":
            raise FileNotFoundError(f"no usable ONNX export in {self.folder}")
        self.manifest = manifest
        self.dim = int(manifest["dim"])
        self.window = self.max_seq_length = int(manifest["window"])
        self.precision = str(manifest.get("precision", "fp32"))
        self.tok = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(self.window)
        import onnxruntime as ort

        opts = session_options(threads, fused=bool(manifest.get("fused")))
        self.session = ort.InferenceSession(
            str(self.folder / manifest["file"]), opts, providers=["CPUExecutionProvider"]
        )
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.output = manifest.get("output", "sentence_embedding")
        self.threads = threads

    def token_counts(self, texts: list[str]) -> list[int]:
        """Tokens per text (truncated at the window), a slice of texts at a time:
        one call over a 10,000-note vault's 38k pending texts held every
        encoding at once and raised the server's peak RSS by ~600 MB."""
        out: list[int] = []
        for i in range(0, len(texts), COUNT_SLICE):
            out += [len(e.ids) for e in self.tok.encode_batch(texts[i : i + COUNT_SLICE])]
        return out

    def _run(self, encs: list) -> np.ndarray:
        n, width = len(encs), max(len(e.ids) for e in encs)
        ids = np.zeros((n, width), dtype=np.int64)
        mask = np.zeros((n, width), dtype=np.int64)
        types = np.zeros((n, width), dtype=np.int64)
        for r, e in enumerate(encs):
            k = len(e.ids)
            ids[r, :k] = e.ids
            mask[r, :k] = 1
            types[r, :k] = e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        out = self.session.run([self.output], {k: feed[k] for k in self.inputs})[0]
        return np.asarray(out, dtype=np.float32)

    def encode(
        self, texts: list[str], batch_size: int | None = None, prompt: str = ""
    ) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in input order;
        ``prompt`` goes before every text, as sentence-transformers puts it
        (the text after it is truncated at the window)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if prompt:
            texts = [prompt + t for t in texts]
        # One text (a query): encode holds the GIL for its ~0.04 ms; encode_batch
        # releases it and then waited for the query's lexical thread to let go
        # (hybrid at 100k chunks: median 23.1 -> 21.7 ms, interleaved A/B).
        encs = [self.tok.encode(texts[0])] if len(texts) == 1 else self.tok.encode_batch(texts)
        order = token_order([len(e.ids) for e in encs])
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        batch_size = batch_size or self.batch_size
        for i in range(0, len(order), batch_size):
            rows = order[i : i + batch_size]
            out[rows] = self._run([encs[j] for j in rows])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms > 0, norms, 1.0)
        return out


def default_threads() -> int:
    """Half the cores this process may use (at least one): the editor and the
    rest of the machine keep the other half. Measured on 2 shared cores: one
    thread is faster than two for a query and no slower in bulk (README)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, n // 2)
