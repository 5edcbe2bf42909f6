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
run code: it is a NumPy ``.npz`` read with ``allow_pickle=False``.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FORMAT = "mdseek-vectors-1"
MAX_BYTES = 2 * 2**30  # a file larger than this is refused before reading


class VectorsFileError(ValueError):
    """The file cannot be used; the message says why, in one line."""


@dataclass
class ImportReport:
    offered: int = 0  # vectors in the file for this model
    taken: int = 0  # vectors written (texts the index was waiting for)
    rejected: int = 0  # wrong dimension, not finite or not unit length
    model_in_file: str = ""


def export_vectors(store, model: str, dest: Path) -> int:
    """Write every vector of ``model`` that a chunk of the index uses; returns how many."""
    hashes, mat = store.vectors_in_use(model)
    dest = Path(dest)
    tmp = dest.with_name(dest.name + ".part")
    with open(tmp, "wb") as fh:
        np.savez_compressed(
            fh,
            format=np.array(FORMAT),
            model=np.array(model),
            hashes=np.array(hashes, dtype="S64"),
            vectors=mat.astype(np.float32),
        )
    tmp.replace(dest)
    return len(hashes)


def read_vectors(path: Path) -> tuple[str, list[str], np.ndarray]:
    """(model id, text hashes, float32 matrix) from a file made by :func:`export_vectors`."""
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
        with np.load(path, allow_pickle=False) as z:
            if str(z["format"]) != FORMAT:
                raise VectorsFileError(f"{path}: not an mdseek vectors file ({FORMAT})")
            model = str(z["model"])
            raw = z["hashes"]
            vecs = z["vectors"]
    except VectorsFileError:
        raise
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, io.UnsupportedOperation) as exc:
        raise VectorsFileError(
            f"{path}: not an mdseek vectors file ({type(exc).__name__})"
        ) from None
    if raw.ndim != 1 or vecs.ndim != 2 or len(raw) != len(vecs) or vecs.dtype != np.float32:
        raise VectorsFileError(f"{path}: hashes and vectors do not match")
    hashes = [h.decode("ascii", "replace") for h in raw.tolist()]
    return model, hashes, vecs


def import_vectors(
    store, model: str, dim: int | None, data: tuple[str, list[str], np.ndarray]
) -> ImportReport:
    """Seed ``store`` with the vectors of ``model`` in ``data`` (from
    :func:`read_vectors`) for the texts it is still waiting for (see the
    module's docstring for what is checked)."""
    file_model, hashes, vecs = data
    rep = ImportReport(model_in_file=file_model)
    if file_model != model:
        return rep
    rep.offered = len(hashes)
    wanted = {h for h, _ in store.pending_for(model, hashes)}
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
        store.put_vectors(model, keep_h, vecs[keep_i])
    rep.taken = len(keep_h)
    return rep
