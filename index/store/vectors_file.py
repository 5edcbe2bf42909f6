"""Vectors computed once per team: export an index's vectors to a file, seed
another index from it.

A vector is keyed by the model id and the hash of the exact text embedded
(breadcrumb + section text), so a file made by CI for a shared docs repository
fits every checkout of the same text and model. The file holds vectors only --
never text: chunk text is always read from the files themselves. Importing
takes only the vectors of text hashes the index is still waiting for, of the
same model id and dimension, finite and of unit length; anything else in the
file is ignored. A stale or hostile file can therefore cost ranking (a wrong
vector for a real text), never show text that is not in the files, and never
run code: it is a NumPy ``.npz`` read with ``allow_pickle=False``, and never
cost memory beyond its declared size: the members' unpacked sizes, dtypes and
shapes are read from the zip's directory and the arrays' headers, and a file
that would unpack to more than MAX_BYTES, or whose headers say anything else
than what :func:`export_vectors` writes, is refused in one line before any
array is loaded.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..settings import PRECISIONS

if TYPE_CHECKING:
    from .vectors import VectorCache

FORMAT = "mdseek-vectors-1"
INT8_SUFFIX = "#onnx-int8"  # as onnx_int8.INT8_SUFFIX (no import: this module loads no model code)
MAX_BYTES = 2 * 2**30  # a file larger than this, or unpacking to more, is refused before reading


class VectorsFileError(ValueError):
    """The file cannot be used; the message says why, in one line."""


@dataclass
class ImportReport:
    offered: int = 0  # vectors in the file for this model
    taken: int = 0  # vectors written (texts the index was waiting for)
    rejected: int = 0  # wrong dimension, not finite or not unit length
    model_in_file: str = ""
    precision_followed: str | None = None  # the file's, taken by the index (Engine.seed_vectors)


class VectorsRead(NamedTuple):
    """A team's vectors file read (:func:`read_vectors`, :func:`read_precision`)
    and checked against an index's precision before anything is written
    (:meth:`Engine.read_vectors_file`), taken later (:meth:`Engine.seed_vectors`)."""

    path: Path
    data: tuple[str, list[str], np.ndarray]  # (model id, text hashes, float32 matrix)
    precision: str


def precision_of(model: str) -> str:
    """The precision of a model id's vectors: int8 ids end in ``#onnx-int8``
    (before any prompt suffix), every other is fp32."""
    return "int8" if INT8_SUFFIX in model else "fp32"


def _base(model: str) -> str:
    """A model id without its int8 part (``#onnx-int8``, ``#onnx-int8-r2``: the
    recipe), prompt suffix kept."""
    return re.sub(re.escape(INT8_SUFFIX) + r"(-r\d+)?", "", model, count=1)


def check_precision(path: Path, file_model: str, file_precision: str, model: str) -> None:
    """Refuse, in one line naming both, a file of this index's model at the
    other precision (a file of another model is only left unused)."""
    mine = precision_of(model)
    same_model = _base(file_model) == _base(model)
    if same_model and file_precision != mine:
        raise VectorsFileError(
            f"{path}: this vectors file holds {file_precision} vectors; this index uses {mine}"
        )


def export_vectors(vectors: VectorCache, model: str, dest: Path) -> int:
    """Write every vector of ``model`` that a chunk of the index uses; returns how many."""
    hashes, mat = vectors.vectors_in_use(model)
    dest = Path(dest)
    tmp = dest.with_name(dest.name + ".part")
    with open(tmp, "wb") as fh:
        np.savez_compressed(
            fh,
            format=np.array(FORMAT),
            model=np.array(model),
            precision=np.array(precision_of(model)),
            hashes=np.array(hashes, dtype="S64"),
            vectors=mat.astype(np.float32),
        )
    tmp.replace(dest)
    return len(hashes)


# What each member may be, checked in its .npy header before anything is read:
# dtype kind, the largest item size, ndim, and what it is said to be.
MEMBERS = {
    "format": ("U", 256, 0, "one format name"),
    "model": ("U", 4096, 0, "one model id"),
    "precision": ("U", 16, 0, "one precision"),
    "hashes": ("S", 128, 1, "a list of text hashes"),
    "vectors": ("f", 4, 2, "a matrix of float32 vectors"),
}


def _header(fh) -> tuple[tuple[int, ...], np.dtype]:
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
    else:
        raise ValueError(f"npy format {version}")
    return shape, dtype


def check_members(path: Path) -> None:
    """Refuse, before anything is unpacked, a file whose members unpack to more
    than MAX_BYTES (the zip's declared sizes: a small file can unpack to
    gigabytes), whose arrays' headers declare more values than their member
    holds, or whose hashes, vectors, format or model are of another kind."""
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        unpacked = sum(i.file_size for i in infos)
        if unpacked > MAX_BYTES:
            raise VectorsFileError(
                f"{path}: unpacks to {unpacked:,} bytes, over the {MAX_BYTES:,} a vectors file may hold"
            )
        for info in infos:
            name = info.filename.removesuffix(".npy")
            if name not in MEMBERS or not info.filename.endswith(".npy"):
                continue
            with zf.open(info) as fh:
                shape, dtype = _header(fh)
                body = info.file_size - fh.tell()
            kind, itemsize, ndim, what = MEMBERS[name]
            values = int(np.prod(shape, dtype=object))
            if values * dtype.itemsize > body:
                raise VectorsFileError(
                    f"{path}: {info.filename} declares {values:,} values of "
                    f"{dtype.itemsize} bytes, more than it holds"
                )
            if dtype.kind != kind or dtype.itemsize > itemsize or dtype.hasobject:
                raise VectorsFileError(f"{path}: {info.filename} holds {dtype}, not {what}")
            if len(shape) != ndim:
                raise VectorsFileError(f"{path}: {info.filename} is not {what}")


def read_precision(path: Path) -> str:
    """The precision a vectors file says its vectors are (read after
    :func:`read_vectors` checked it): its ``precision`` member, else (a file
    made before it was written) from its model id, fp32 unless an int8 id."""
    with np.load(path, allow_pickle=False) as z:
        if "precision" in z.files:
            got = str(z["precision"])
            if got not in PRECISIONS:
                raise VectorsFileError(f"{path}: names an unknown precision ({got[:16]!r})")
            return got
        return precision_of(str(z["model"]))


def read_vectors(path: Path) -> tuple[str, list[str], np.ndarray]:
    """(model id, text hashes, float32 matrix) from a file made by :func:`export_vectors`;
    everything is checked (:func:`check_members`) before any array is loaded."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise VectorsFileError(f"{path}: cannot be read ({exc.strerror})") from None
    if size > MAX_BYTES:
        raise VectorsFileError(
            f"{path}: {size} bytes, over the {MAX_BYTES} a vectors file may have"
        )
    try:
        check_members(path)
        with np.load(path, allow_pickle=False) as z:
            if str(z["format"]) != FORMAT:
                raise VectorsFileError(f"{path}: not an mdseek vectors file ({FORMAT})")
            model = str(z["model"])
            raw = z["hashes"]
            vecs = z["vectors"]
    except VectorsFileError:
        raise
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, io.UnsupportedOperation,
            EOFError, MemoryError) as exc:  # fmt: skip
        raise VectorsFileError(
            f"{path}: not an mdseek vectors file ({type(exc).__name__})"
        ) from None
    if raw.ndim != 1 or vecs.ndim != 2 or len(raw) != len(vecs) or vecs.dtype != np.float32:
        raise VectorsFileError(f"{path}: hashes and vectors do not match")
    hashes = [h.decode("ascii", "replace") for h in raw.tolist()]
    return model, hashes, vecs


def import_vectors(
    vectors: VectorCache, model: str, dim: int | None, data: tuple[str, list[str], np.ndarray]
) -> ImportReport:
    """Seed the index's ``vectors`` with the vectors of ``model`` in ``data`` (from
    :func:`read_vectors`) for the texts it is still waiting for (see the
    module's docstring for what is checked)."""
    file_model, hashes, vecs = data
    rep = ImportReport(model_in_file=file_model)
    if file_model != model:
        return rep
    rep.offered = len(hashes)
    wanted = {h for h, _ in vectors.pending_for(model, hashes)}
    keep_h: list[str] = []
    keep_i: list[int] = []
    norms = np.linalg.norm(vecs, axis=1) if len(vecs) else np.zeros(0)
    for i, h in enumerate(hashes):
        if h not in wanted:
            continue
        ok = (
            (dim is None or vecs.shape[1] == dim)
            and np.isfinite(vecs[i]).all()
            and abs(norms[i] - 1.0) < 1e-3
        )
        if not ok:
            rep.rejected += 1
            continue
        keep_h.append(h)
        keep_i.append(i)
        wanted.discard(h)  # a hash listed twice is taken once
    if keep_h:
        vectors.put_vectors(model, keep_h, vecs[keep_i])
    rep.taken = len(keep_h)
    return rep
