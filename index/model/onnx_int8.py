"""An int8 copy of a verified fp32 ONNX export, for faster bulk embedding.

The bundled model's copy ships in its wheel (built with this recipe by
``scripts/model_wheel.py``, :func:`packaged.int8_copy`) and is that model's
default (:func:`embed.default_precision`); any other model's is made here on first use when asked for
(``precision: int8``): onnxruntime's own dynamic quantisation
(``onnxruntime.quantization.quantize_dynamic``) turns the weights of the fused
graph's MatMul and Attention ops into int8, per output channel; activations are
quantised on the fly. The result is cached beside the fp32 export under its own
model id (:func:`int8_model_id`: the fp32 id + ``#onnx-int8``), so its vectors
never mix with fp32 ones: switching precision moves the vectors
(:mod:`engine.precision_move`).

Whether int8 ranks as well as fp32 is measured, not assumed: nDCG@10 on every
benchmark test half, fp32 beside int8 (``benchmarks/README.md``). The copy is
checked before it is published (every text of the export's fixed sample must
keep cosine >= :data:`MIN_COSINE_INT8` to the fp32 vectors: a sanity bound that
catches a broken quantisation, not a ranking guarantee); a failure is cached as
a rejection manifest, as for the fp32 export.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

from .model import cache_dir, model_cache_dir
from .onnx_encoder import OnnxEncoder, read_manifest
from .onnx_export import (
    SAMPLE,
    ExportRejected,
    _export_lock,
    _min_cosine,
    _publish,
    _write_manifest,
    ensure_fp32,
)
from .packaged import export_for, int8_copy, serves
from .private import why_not_private

log = logging.getLogger(__name__)
progress = logging.getLogger("mdseek.progress")

INT8_SUFFIX = "#onnx-int8"
# Sanity bound of the int8 copy against fp32 on SAMPLE (the default model: min
# 0.983 per-channel, every MatMul quantised). Ranking is judged by nDCG@10.
MIN_COSINE_INT8 = 0.95
OP_TYPES = ["MatMul", "Attention"]
# The recipe's number: bump it when the recipe below changes. Cached copies
# are then redone, and the int8 model id names the new recipe, so an index's
# vectors of the old recipe are re-embedded (a move) instead of being searched
# with query vectors of the new one.
QUANTIZER = 1


def int8_model_id(fp32_id: str, quantizer: int | None = None) -> str:
    """The model id of int8 vectors: names backend, precision and, after the
    first, the recipe (``#onnx-int8`` for recipe 1, ``#onnx-int8-r2`` ...;
    ``quantizer``: this module's :data:`QUANTIZER` unless given)."""
    q = QUANTIZER if quantizer is None else quantizer
    return fp32_id + INT8_SUFFIX + ("" if q == 1 else f"-r{q}")


def quantize(
    src: Path, dest: Path, exclude: list[str] | None = None, per_channel: bool = True
) -> None:
    """Quantise ``src/model.onnx`` (with its external weights) into ``dest/model.onnx``:
    int8 weights of every MatMul and Attention op except the nodes in ``exclude``."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    quiet = _QuantizerAdvice()
    root.addFilter(quiet)  # it logs advice on the root logger, as a warning
    try:
        quantize_dynamic(
            str(src / "model.onnx"), str(dest / "model.onnx"), per_channel=per_channel,
            weight_type=QuantType.QInt8, op_types_to_quantize=OP_TYPES, nodes_to_exclude=exclude or [],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},  # fused ops defeat shape inference
        )  # fmt: skip
    finally:
        root.removeFilter(quiet)
    os.chmod(dest / "model.onnx", 0o644)


class _QuantizerAdvice(logging.Filter):
    """Drops onnxruntime's quantizer advice ("consider pre-processing") from the root logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname


def _build(fp32: Path, model_id: str, folder: Path) -> None:
    """Quantise, verify against fp32 and publish ``folder`` (or a rejection there)."""
    t0 = time.perf_counter()
    src = read_manifest(fp32) or {}
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    os.chmod(tmp, 0o755)
    base = {
        "model_id": model_id,
        "source": str(fp32),
        "precision": "int8",
        "backend": "onnx",
        "quantizer": QUANTIZER,
    }
    reason: str | None = None
    cos = 0.0
    try:
        try:
            for name in ("tokenizer.json", "sentence_bert_config.json"):
                shutil.copyfile(fp32 / name, tmp / name)
            quantize(fp32, tmp)
            manifest = {
                **base, "status": "ok", "file": "model.onnx", "dim": src["dim"],
                "window": src["window"], "inputs": src.get("inputs"),
                "output": src.get("output", "sentence_embedding"), "fused": src.get("fused"),
                "quantized": {"per_channel": True, "weights": "int8", "op_types": OP_TYPES},
            }  # fmt: skip
            _write_manifest(tmp, manifest)
            ref = OnnxEncoder(fp32, threads=1).encode(SAMPLE, batch_size=5)
            got = OnnxEncoder(tmp, threads=1).encode(SAMPLE, batch_size=5)
            cos = _min_cosine(got, ref)
            if not cos >= MIN_COSINE_INT8:
                raise ExportRejected(
                    f"int8 vectors disagree with fp32 (min cosine {cos:.4f} < {MIN_COSINE_INT8})"
                )
        except ExportRejected as exc:
            reason = str(exc)
        except ImportError as exc:
            reason = f"int8 needs the onnx package ({exc.name} is missing): pip install onnx"
        except Exception as exc:
            log.debug("int8 quantisation of %s failed", model_id, exc_info=True)
            reason = f"int8 quantisation failed: {type(exc).__name__}: {str(exc)[:300]}"
        if reason:
            for leftover in tmp.iterdir():
                leftover.unlink()
            _write_manifest(tmp, {**base, "status": "rejected", "reason": reason})
        else:
            manifest["seconds"] = round(time.perf_counter() - t0, 1)
            manifest["verify"] = {
                "texts": len(SAMPLE),
                "min_cosine_vs_fp32": round(cos, 5),
                "threshold": MIN_COSINE_INT8,
            }
            _write_manifest(tmp, manifest)
        _publish(tmp, folder)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def ensure_int8(resolved: str, fp32_id: str, allow_pickle: bool = False) -> Path:
    """The int8 folder of a model, made from its fp32 export on first use
    (seconds). Raises ExportRejected (with the reason) if it cannot be made."""
    mid = int8_model_id(fp32_id)
    if wheel := serves(resolved, fp32_id):  # the model wheel's verified copy: nothing to make
        sub, why = int8_copy(wheel)
        if sub is not None and (read_manifest(sub) or {}).get("model_id") == mid:
            return sub
        if sub is not None:  # an intact copy of another recipe: its vectors would not match
            log.warning(
                "the int8 copy of the bundled model is of another int8 recipe than this"
                " mdseek's; quantising the fp32 export instead"
            )
        elif why:
            log.warning("%s", why.replace("; using fp32", "; quantising the fp32 export instead"))
    folder = model_cache_dir(mid)
    if why := why_not_private(folder, top=cache_dir()):
        raise ExportRejected(f"its int8 folder cannot be trusted: {why}")

    def current() -> dict | None:
        m = read_manifest(folder)
        ok = m is not None and m.get("model_id") == mid and m.get("quantizer") == QUANTIZER
        return m if ok else None

    m = current()
    if m is None:
        if importlib.util.find_spec("onnx") is None:  # not cached: installing it is the fix
            raise ExportRejected("int8 needs the onnx package: pip install onnx")
        # The model wheel's fp32 export when it is this model: no torch export
        fp32 = export_for(resolved, fp32_id) or ensure_fp32(
            resolved, fp32_id, allow_pickle=allow_pickle
        )
        with _export_lock(folder):
            m = current()  # someone may have finished while we waited
            if m is None:
                progress.info("first use of %s: quantising it to int8 once", mid)
                _build(fp32, mid, folder)
                m = current()
    if m is None:
        raise ExportRejected("the int8 folder could not be read back")
    if m.get("status") != "ok":
        raise ExportRejected(str(m.get("reason", "rejected")))
    return folder
