"""The default model's ONNX export as its wheel installs it: found, checked, never run.

``scripts/package.sh`` (and ``.ci/setup``) build, beside mdseek's own wheel, a
model wheel (distribution :data:`DISTRIBUTION`) whose one folder,
:data:`PACKAGE`, holds the verified ONNX export of the default model exactly
as :mod:`mdseek.index.model.onnx_export` writes it into the user cache (``model.onnx``
+ ``model.onnx.data``, ``tokenizer.json``, ``sentence_bert_config.json``,
``manifest.json``), plus the model's ``config.json`` and
``config_sentence_transformers.json``. With it the default model is ready from
the first run, and an install needs neither torch nor sentence-transformers.

The folder is data: it has no ``__init__.py`` and is never imported. It is
looked for where pip installs wheels (the environment's site-packages, then
the user's; never the current folder), and used only if

- its manifest is this mdseek's export format, says ``status: ok`` and lists
  every file with its size and sha256, and each file matches (a partial or
  mixed install is refused, not half-loaded);
- every file is a plain file and the folder a plain folder (no symlink out),
  owned by this user or root and writable by nobody else (as a venv or a
  system site-packages is), so no other user chose what is loaded;
- it names the same model as the one asked for (its recorded model id; see
  :func:`export_for`).

Finding it costs a few file stats; the sha256 of its ~90 MB (~65 ms) is
checked once per process, before its session opens (in the background where
the session is warmed early). Building the wheel is ``scripts/model_wheel.py``
(it needs torch: ``mdseek[torch]``).

The wheel also holds the verified int8 copy of the export (:data:`INT8`, a
subfolder made by :mod:`mdseek.index.model.onnx_int8`'s recipe, with its own
manifest), listed in the top manifest's ``int8`` entry with every file's size
and sha256. It is checked apart from the fp32 files (:func:`int8_copy`): a
damaged int8 copy is refused in one line and fp32 is used; the fp32 export
stays usable.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
from pathlib import Path

from .onnx_encoder import read_manifest

log = logging.getLogger(__name__)


class ModelUnavailable(RuntimeError):
    """The model (or its tokenizer) cannot be loaded; the message says why.

    Defined here, the lowest of the model modules (a damaged model wheel is the
    first reason), so that :mod:`mdseek.index.model.model`, which finds the default
    model through this module, and everything above it raise the same error."""


DISTRIBUTION = "mdseek-all-minilm-l6-v2-onnx"
PACKAGE = "mdseek_all_minilm_l6_v2_onnx"
# Files every model wheel holds (the manifest lists them, with more, and their hashes).
REQUIRED = ("model.onnx", "model.onnx.data", "tokenizer.json", "sentence_bert_config.json")
INT8 = "int8"  # the subfolder holding the int8 copy (listed in the manifest's "int8" entry)
INT8_DAMAGED = "the int8 copy of the bundled model is damaged: {why}; using fp32"

_lock = threading.Lock()
_verify_lock = threading.Lock()  # hashing must not hold up installed()
_found: list[tuple[Path | None, str | None]] = []  # the one lookup, once found
_verified: dict[str, str | None] = {}
_int8: dict[str, tuple[Path | None, str | None]] = {}
_said: set[str] = set()


def _candidates() -> list[Path]:
    """Where pip puts the wheel: the environment's site-packages, then the
    user's. Never the current folder or ``$PYTHONPATH`` (a folder you are in
    is data written by a stranger)."""
    import site

    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [Path(d) / PACKAGE for d in dirs if os.path.isfile(Path(d) / PACKAGE / "manifest.json")]


def _file_problem(p: Path, is_dir: bool) -> str | None:
    try:
        st = os.lstat(p)
    except OSError as exc:
        return f"{p.name} cannot be read ({exc.strerror or exc})"
    kind = stat.S_ISDIR(st.st_mode) if is_dir else stat.S_ISREG(st.st_mode)
    if not kind:
        return f"{p.name} is not a plain {'folder' if is_dir else 'file'}"
    if hasattr(os, "getuid") and st.st_uid not in (os.getuid(), 0):
        return f"{p.name} is owned by another user"
    if st.st_mode & 0o022:
        return f"{p.name} is writable by other users"
    return None


def _sha256(p: Path) -> str:
    with open(p, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def check(folder: Path, hashes: bool = True) -> str | None:
    """Why ``folder`` is not a usable model wheel folder (one line), or None.
    ``hashes=False`` checks everything but the files' sha256 (milliseconds)."""
    folder = Path(os.path.abspath(folder))
    if why := _file_problem(folder, is_dir=True):
        return why
    m = read_manifest(folder)
    if m is None:
        return "its manifest is missing or from another mdseek version (reinstall the wheels of one build)"
    if m.get("status") != "ok" or not isinstance(m.get("model_id"), str):
        return "its manifest does not describe a verified export"
    files = m.get("files")
    if not isinstance(files, dict) or not set(REQUIRED) <= set(files) or m.get("file") not in files:
        return "its manifest does not list the model's files"
    return _listed_files_problem(folder, files, hashes)


def _listed_files_problem(folder: Path, files: dict, hashes: bool) -> str | None:
    """Why the files a manifest lists (name -> size, sha256) are not in
    ``folder`` as verified, or None: each inside the folder, private, of its
    size; then, with ``hashes``, of its sha256."""
    for name, want in files.items():
        if not isinstance(name, str) or "/" in name or "\\" in name or name.startswith("."):
            return f"its manifest names a file outside the folder ({name!r})"
        if not isinstance(want, dict):
            return f"its manifest entry for {name} cannot be read"
        p = folder / name
        if why := _file_problem(p, is_dir=False):
            return why
        if p.stat().st_size != want.get("size"):
            return f"{name} is not the file that was verified (its size differs)"
    if hashes:  # sizes first: a truncated install is said cheaply
        for name, want in files.items():
            if _sha256(folder / name) != want.get("sha256"):
                return f"{name} is not the file that was verified (its sha256 differs)"
    return None


def installed() -> tuple[Path | None, str | None]:
    """(the model wheel's folder, None) if it is installed and passes
    :func:`check` without hashes; else (None, why), why None when no model wheel
    is installed. Looked up once per process (:func:`forget` looks again)."""
    with _lock:
        if not _found:
            found: tuple[Path | None, str | None] = (None, None)
            for folder in _candidates():
                why = check(folder, hashes=False)
                if why is None:
                    found = (folder.resolve(), None)
                    break
                found = (None, f"the installed default model ({folder}) cannot be used: {why}")
            _found.append(found)
        return _found[0]


def forget() -> None:
    """Look for the model wheel again, and check its files again, on next use."""
    with _lock, _verify_lock:
        _found.clear()
        _verified.clear()
        _int8.clear()


def packaged_model_id(folder: Path) -> str | None:
    """The recorded model id if ``folder`` is the installed model wheel's folder."""
    found, _ = installed()
    if found is None or folder.resolve() != found:
        return None
    m = read_manifest(found)
    return str(m["model_id"]) if m else None


def verified(folder: Path) -> str | None:
    """:func:`check` with the sha256 of every file, once per process and folder:
    None if it may be loaded, else why not."""
    key = str(folder)
    with _verify_lock:
        if key not in _verified:
            _verified[key] = check(folder, hashes=True)
        return _verified[key]


def export_for(resolved: str, base_id: str) -> Path | None:
    """The model wheel's folder if it serves the model ``resolved`` (id
    ``base_id``), verified: the folder itself (the light install's default), or
    the model it was exported from (the same id, which hashes its config files
    and weights' sizes: the torch install's default). None if no installed
    model wheel is that model. A damaged folder raises ModelUnavailable when it
    is the model asked for; when it only stands in for a model on disk, that
    model is exported as without it (and the reason logged once)."""
    folder, _ = installed()
    if folder is None:
        return None
    m = read_manifest(folder)
    itself = Path(resolved) == folder
    if not itself and (m is None or m.get("model_id") != base_id):
        return None
    why = verified(folder)
    if why is None:
        return folder
    why = f"the installed default model ({folder}) cannot be used: {why}"
    if itself:
        raise ModelUnavailable(f"{why}; reinstall the model wheel")
    if why not in _said:
        _said.add(why)
        log.warning("%s; exporting the model instead", why)
    return None


def _int8_problem(folder: Path, entry: object, hashes: bool) -> str | None:
    """Why the int8 copy the manifest lists (``entry``) cannot be used, or None."""
    if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
        return "its manifest entry cannot be read"
    sub = folder / INT8
    if why := _file_problem(sub, is_dir=True):
        return why
    files = entry["files"]
    if not set(REQUIRED[:1] + REQUIRED[2:] + ("manifest.json",)) <= set(files):
        return "its manifest does not list its files"
    return _listed_files_problem(sub, files, hashes)


def int8_copy(folder: Path) -> tuple[Path | None, str | None]:
    """The model wheel's int8 copy: (its folder, None) if the manifest lists one
    and every file matches its size and sha256 (hashed once per process,
    ~25 MB); (None, why) if it is listed but damaged (``why`` is the one line
    to say: fp32 is used); (None, None) if this wheel has none."""
    key = str(folder)
    with _verify_lock:
        if key not in _int8:
            m = read_manifest(folder)
            entry = (m or {}).get("int8")
            if entry is None:
                _int8[key] = (None, None)
            elif why := _int8_problem(folder, entry, hashes=True):
                _int8[key] = (None, INT8_DAMAGED.format(why=why))
            else:
                sub = folder / INT8
                im = read_manifest(sub)
                ok = (
                    im is not None
                    and im.get("status") == "ok"
                    and im.get("precision") == "int8"
                    and str(im.get("model_id")).startswith(f"{(m or {}).get('model_id')}#onnx-int8")
                )
                why = None if ok else INT8_DAMAGED.format(why="its manifest does not describe it")
                _int8[key] = (sub.resolve(), None) if ok else (None, why)
        return _int8[key]


def serves(resolved: str, base_id: str) -> Path | None:
    """The installed model wheel's folder if it is the model ``resolved`` (id
    ``base_id``), checked without hashes (file stats: cheap); else None."""
    folder, _ = installed()
    if folder is None:
        return None
    m = read_manifest(folder)
    if Path(resolved) == folder or (m is not None and m.get("model_id") == base_id):
        return folder
    return None


def int8_listed(folder: Path) -> bool:
    """Whether the model wheel at ``folder`` lists an int8 copy whose files are
    there with their sizes (file stats, no hashing: :func:`int8_copy` hashes
    them when the model loads). A listed copy that fails is said once."""
    m = read_manifest(folder)
    entry = (m or {}).get("int8")
    if entry is None:
        return False
    why = _int8_problem(folder, entry, hashes=False)
    if why is not None:
        line = INT8_DAMAGED.format(why=why)
        if line not in _said:
            _said.add(line)
            log.warning("%s", line)
    return why is None
