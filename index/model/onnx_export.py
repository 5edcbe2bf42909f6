"""Export a sentence-transformers model to ONNX once, verify it, cache it per model id.

The whole sentence-transformers pipeline (the model's modules in order:
transformer, pooling as configured, any dense layer, normalise) is traced into
one ONNX graph with ``torch.onnx.export`` (TorchScript exporter, opset 17,
the transformer switched to its eager attention for the trace), so pooling is
whatever the model's own modules say. onnxruntime's transformer optimizer then
fuses the graph (one Attention op per layer, embedding + LayerNorm, skip +
LayerNorm, bias + GELU): on 2 cores that is ~1.35x the unfused graph in bulk and
faster than torch; a model it cannot fuse is served unfused (manifest
``fused: {}``). The folder also gets the
tokenizer the model really uses (its fast tokenizer, truncation at the model's
window, no padding) and ``manifest.json``.

Before a folder is published it is verified: the fixed sample :data:`SAMPLE`
is encoded by torch and by :class:`~mdseek.index.model.onnx_encoder.OnnxEncoder` in
mixed-length batches, and every pair must reach cosine >= :data:`MIN_COSINE`.
A failed check (or a model that cannot be traced) is cached too, as a manifest
with ``status: "rejected"`` and the reason, so later runs use torch without
exporting again and say why.

The graph is saved with its weights in a side file (``model.onnx.data``), which
onnxruntime maps rather than parses. Only this module imports torch for ONNX,
and only when a folder is missing.
Concurrent first exports (an editor's server and a CLI run) are serialised by
an advisory lock file; each export is written to a temp folder and renamed into
place, so a reader never sees a half-written folder.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .model import cache_dir, model_cache_dir
from .onnx_encoder import FORMAT, MANIFEST, OnnxEncoder, read_manifest
from .private import why_not_private
from .torch_loader import load_sentence_transformer, need_torch

log = logging.getLogger(__name__)
# What a person waiting should hear (the CLI shows it without -v; see lsp/cli/).
progress = logging.getLogger("mdseek.progress")
progress.setLevel(logging.INFO)  # heard by default wherever logs go (server stderr too)
# The default model's export on a 2-core machine: 21 s idle (issue 22's trial),
# 45 s with other work running (README, "first run").
EXPORT_SECONDS = "20-50"

OPSET = 17
MIN_COSINE = 0.9999  # fp32 export vs torch, every text of SAMPLE
# The cosine bar int8 variants were once held to (``python -m benchmarks.speed
# backends`` still reports it): none passes. int8 is offered on its ranking
# instead (:mod:`mdseek.index.model.onnx_int8`, ``python -m benchmarks.precision``).
MIN_COSINE_INT8 = 0.999

# Short and long, prose and code, markdown syntax, non-Latin text, empty, and
# texts past the window (truncated identically by both sides or not at all).
SAMPLE: list[str] = [
    "",
    "database failover",
    "How do I rotate the TLS certificate on the ingress gateway?",
    "# Payroll\n\nSalaries are paid on the 25th of each month; contractors invoice monthly.",
    "Runbook > Primary database down\n\n1. Page the on-call DBA.\n2. Promote the replica with "
    "`pg_ctl promote`.\n3. Point the connection pooler at the new primary.",
    "```yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  LOG_LEVEL: debug\n```",
    "| Setting | Default |\n| --- | --- |\n| `maxFileSize` | 1 MB |\n| `searchLimit` | 20 |",
    "Le café est servi à 10 h. 東京のオフィスは9時に開きます。 Ünïcödé ñ ß 🚀",
    "> **Note**: the cache is safe to delete; it is rebuilt on the next run.",
    "Expense reports: taxis, trains and hotels are reimbursed within 30 days of submission "
    "if receipts are attached. " * 6,
    "token " * 600,
    "The quick brown fox jumps over the lazy dog. " * 40,
]


class ExportRejected(RuntimeError):
    """The model cannot be served by ONNX Runtime; the message says why."""


def _versions() -> dict:
    import onnxruntime
    import sentence_transformers
    import torch

    return {
        "torch": torch.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "onnxruntime": onnxruntime.__version__,
    }


@contextlib.contextmanager
def _export_lock(folder: Path) -> Iterator[None]:
    """An advisory lock beside ``folder`` (POSIX flock; elsewhere, none: the
    temp-folder-and-rename publish alone keeps readers safe)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    lock = folder.parent / (folder.name + ".lock")
    with open(lock, "a+b") as fh:
        try:
            import fcntl

            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - non-POSIX
            pass
        yield  # the lock goes with the file handle


def _publish(tmp: Path, folder: Path) -> None:
    """Move a finished temp folder into place atomically (replacing a stale one)."""
    import shutil

    if folder.exists():
        old = folder.with_name(f"{folder.name}.old-{os.getpid()}-{time.monotonic_ns()}")
        try:
            os.rename(folder, old)
        except OSError:
            pass
        else:
            shutil.rmtree(old, ignore_errors=True)
    try:
        os.rename(tmp, folder)
    except OSError:  # another process published first: theirs is as good as ours
        shutil.rmtree(tmp, ignore_errors=True)


def _write_manifest(folder: Path, manifest: dict) -> None:
    (folder / MANIFEST).write_text(json.dumps({"format": FORMAT, **manifest}, indent=1) + "\n")


def _min_cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return float((a * b).sum(axis=1).min())


def _torch_vectors(st, texts: list[str]) -> np.ndarray:
    return np.asarray(
        st.encode(
            texts,
            prompt="",  # the graph's own vectors: never the model's default prompt
            batch_size=5,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        ),
        dtype=np.float32,
    )


@contextlib.contextmanager
def _eager_attention(st) -> Iterator[None]:
    """Trace the transformer with its plain ("eager") attention: torch's fused
    scaled-dot-product attention exports as ~20 unfusable nodes per layer
    (IsNaN/Where guards included), while the eager pattern is the one
    onnxruntime's transformer optimizer fuses into one Attention op."""
    auto: Any = getattr(st[0], "auto_model", None) if len(st) else None
    config = getattr(auto, "config", None)
    before = getattr(config, "_attn_implementation", None)
    if config is None or before in (None, "eager"):
        yield
        return
    try:
        if hasattr(auto, "set_attn_implementation"):
            auto.set_attn_implementation("eager")
        else:
            config._attn_implementation = "eager"
    except Exception:  # a model without an eager path: trace what it has
        log.debug("cannot switch %s to eager attention", type(auto).__name__, exc_info=True)
        yield
        return
    try:
        yield
    finally:
        if hasattr(auto, "set_attn_implementation"):
            auto.set_attn_implementation(before)
        else:
            config._attn_implementation = before


# Model types onnxruntime's transformer optimizer knows, as it names them.
_FUSABLE = {
    "bert": "bert",
    "roberta": "bert",
    "xlm-roberta": "bert",
    "mpnet": "bert",
    "distilbert": "bert",
}


def _fuse(st, src: Path, dest: Path) -> dict:
    """Fuse ``src`` (attention, embedding + LayerNorm, skip + LayerNorm, bias +
    GELU) with onnxruntime's transformer optimizer into ``dest`` (weights in a
    side file); returns the fused-operator counts. Raises if the model type is
    unknown to the optimizer or nothing was fused (the caller keeps ``src``)."""
    from onnxruntime.transformers.optimizer import optimize_model

    config = st[0].auto_model.config
    kind = _FUSABLE.get(getattr(config, "model_type", ""))
    if kind is None:
        raise ValueError(f"no fusion for model type {getattr(config, 'model_type', '?')!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = optimize_model(
            str(src), model_type=kind, num_heads=int(config.num_attention_heads),
            hidden_size=int(config.hidden_size), opt_level=None,
        )  # fmt: skip
    stats = {k: int(v) for k, v in opt.get_fused_operator_statistics().items() if v}
    if not stats.get("Attention"):
        raise ValueError(f"attention was not fused ({stats})")
    opt.save_model_to_file(str(dest), use_external_data_format=True, all_tensors_to_one_file=True)
    for f in (dest, dest.with_name(dest.name + ".data")):
        os.chmod(f, 0o644)
    return stats


def _trace(st, dest: Path) -> list[str]:
    """Trace ``st`` into ``dest``; returns the graph's input names."""
    import torch

    feats = st.preprocess(["a short text", "a somewhat longer text to pad the first one against"])
    names = [
        k
        for k in ("input_ids", "attention_mask", "token_type_ids")
        if isinstance(feats.get(k), torch.Tensor)
    ]
    if "input_ids" not in names or "attention_mask" not in names:
        raise ExportRejected(f"unexpected model inputs {sorted(feats)}")

    class Pipeline(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.st = st

        def forward(self, *args):  # the sentence-transformers modules, in order
            return self.st(dict(zip(names, args, strict=True)))["sentence_embedding"]

    axes = {n: {0: "batch", 1: "tokens"} for n in names}
    axes["sentence_embedding"] = {0: "batch"}
    with (
        _eager_attention(st),
        torch.inference_mode(False),
        torch.no_grad(),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Pipeline().eval(),
            tuple(feats[n] for n in names),
            str(dest),
            input_names=names,
            output_names=["sentence_embedding"],
            dynamic_axes=axes,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    return names


def _external_weights(src: Path, dest: Path) -> None:
    """Rewrite ``src`` as ``dest`` + ``dest.data`` (weights outside the protobuf):
    onnxruntime then maps the weights instead of parsing and copying them, which
    halves the CPU time of opening a session and saves their size in memory."""
    import onnx

    model = onnx.load(str(src))
    onnx.save_model(
        model, str(dest), save_as_external_data=True, all_tensors_to_one_file=True,
        location=dest.name + ".data", size_threshold=1024,
    )  # fmt: skip
    src.unlink()
    for f in (dest, dest.with_name(dest.name + ".data")):
        os.chmod(f, 0o644)


def _save_tokenizer(st, folder: Path) -> int:
    """The tokenizer the model really uses, truncating at its window; returns the window."""
    backend = getattr(st.tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise ExportRejected("the model has no fast (tokenizers) tokenizer")
    window = int(st.max_seq_length)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(backend.to_str())
    tok.no_padding()
    tok.enable_truncation(window)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": window}) + "\n")
    return window


def export_fp32(
    resolved: str,
    model_id: str,
    folder: Path,
    min_cosine: float = MIN_COSINE,
    fuse: bool = True,
    allow_pickle: bool = False,
) -> Path:
    """Export, verify and publish ``folder`` (or a rejection manifest there).
    ``fuse=False`` keeps the plain traced graph (benchmarks compare the two).
    Prompts are text before the text, so one export serves every prompt."""
    import shutil
    import tempfile

    t0 = time.perf_counter()
    st = load_sentence_transformer(resolved, allow_pickle)  # torch: the one place it is needed
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    os.chmod(tmp, 0o755)  # mkdtemp makes it private; the published folder is an ordinary cache
    base = {"model_id": model_id, "source": resolved, "precision": "fp32", "backend": "onnx"}
    try:
        try:
            window = _save_tokenizer(st, tmp)
            inputs = _trace(st, tmp / "traced.onnx")
            _external_weights(tmp / "traced.onnx", tmp / "plain.onnx")
            try:
                if not fuse:
                    raise ValueError("fusion not asked for")
                fused = _fuse(st, tmp / "plain.onnx", tmp / "model.onnx")
            except Exception as exc:  # serve the plain graph: slower, same vectors
                log.info("ONNX graph of %s left unfused: %s", model_id, exc)
                fused = {}
                _external_weights(tmp / "plain.onnx", tmp / "model.onnx")
                (tmp / "plain.onnx.data").unlink()
            else:
                for f in ("plain.onnx", "plain.onnx.data"):
                    (tmp / f).unlink()
            getter = (
                getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
            )
            _write_manifest(
                tmp,
                {
                    **base,
                    "status": "ok",
                    "file": "model.onnx",
                    "dim": int(getter()),
                    "window": window,
                },
            )
            enc = OnnxEncoder(tmp, threads=1)
            got = enc.encode(SAMPLE, batch_size=5)
            del enc
            cos = _min_cosine(got, _torch_vectors(st, SAMPLE))
            if not cos >= min_cosine:
                raise ExportRejected(
                    f"ONNX vectors disagree with torch (min cosine {cos:.6f} < {min_cosine} over {len(SAMPLE)} texts)"
                )
        except ExportRejected as exc:
            reason: str | None = str(exc)
        except Exception as exc:  # tracing arbitrary models fails in many ways
            log.debug("ONNX export of %s failed", model_id, exc_info=True)
            reason = f"export failed: {type(exc).__name__}: {str(exc)[:300]}"
        else:
            reason = None
        if reason:  # keep only the manifest saying why
            for leftover in tmp.iterdir():
                leftover.unlink()
        manifest = {**base, "versions": _versions(), "seconds": round(time.perf_counter() - t0, 1)}
        if reason:
            manifest.update(status="rejected", reason=reason)
        else:
            manifest.update(
                status="ok", file="model.onnx", dim=int(got.shape[1]), window=window, inputs=inputs,
                output="sentence_embedding", opset=OPSET, fused=fused,
                verify={"texts": len(SAMPLE), "min_cosine_vs_torch": round(cos, 7), "threshold": min_cosine},
            )  # fmt: skip
        _write_manifest(tmp, manifest)
        _publish(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    if reason:
        log.warning("ONNX export of %s rejected: %s", model_id, reason)
    else:
        log.info(
            "exported %s to ONNX in %.1fs (min cosine to torch %.6f)",
            model_id,
            manifest["seconds"],
            cos,
        )
    return folder


def _rejection_is_current(manifest: dict) -> bool:
    """A rejection stands until torch or sentence-transformers change (a newer
    exporter may succeed); comparing versions needs no torch import."""
    from importlib.metadata import PackageNotFoundError, version

    then = manifest.get("versions") or {}
    try:
        now = {"torch": version("torch"), "sentence_transformers": version("sentence-transformers")}
    except PackageNotFoundError:
        return True
    return all(str(then.get(k, "")).split("+")[0] == v.split("+")[0] for k, v in now.items())


def ensure_fp32(
    resolved: str, model_id: str, min_cosine: float = MIN_COSINE, allow_pickle: bool = False
) -> Path:
    """The verified fp32 export folder of a model, exporting it on first use.
    Raises ExportRejected (with the reason) if it cannot be served by ONNX."""
    folder = model_cache_dir(model_id)
    if why := why_not_private(folder, top=cache_dir()):  # its files are loaded as they are
        raise ExportRejected(f"its export folder cannot be trusted: {why}")
    for attempt in range(2):
        m = read_manifest(folder)
        if m is not None and m.get("model_id") == model_id:
            if m.get("status") == "ok":
                return folder
            if m.get("status") == "rejected" and _rejection_is_current(m):
                raise ExportRejected(m.get("reason", "rejected"))
        if attempt:
            break
        with _export_lock(folder):
            m = read_manifest(folder)  # someone may have finished while we waited
            if (
                m is None
                or m.get("model_id") != model_id
                or (m.get("status") == "rejected" and not _rejection_is_current(m))
            ):
                need_torch(resolved)  # the light install: say which extra, announce nothing
                progress.info(
                    "first use of %s: exporting it to ONNX once (%s s on a 2-core machine;"
                    " later starts load it in under a second)",
                    model_id, EXPORT_SECONDS,
                )  # fmt: skip
                t0 = time.perf_counter()
                export_fp32(resolved, model_id, folder, min_cosine, allow_pickle=allow_pickle)
                progress.info("exported %s in %.0f s", model_id, time.perf_counter() - t0)
    raise ExportRejected("the export folder could not be read back")
