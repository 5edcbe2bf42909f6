"""``scripts/package.sh`` on a machine without Node: both Python wheels are
built, the model wheel is the one ``.ci/setup`` built (no second export), the
extension is left out with a reason, and a summary says what was built; the
mdseek wheel holds every package of the checkout (a package missing from
pyproject's list installs a tool that cannot start)."""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".venv" / "model-wheel"

pytestmark = pytest.mark.slow


def _path_without_node(tmp_path: Path) -> str:
    """A PATH with every program of this one but node, npm and npx."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not d or not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if name in ("node", "npm", "npx", "nodejs") or (bin_ / name).exists():
                continue
            src = os.path.join(d, name)
            if os.path.isfile(src) and os.access(src, os.X_OK):
                (bin_ / name).symlink_to(src)
    return str(bin_)


def assert_every_package_in(wheel: Path) -> None:
    """Each folder of index/ and lsp/ holding an ``__init__.py`` is in the wheel,
    under ``mdseek`` (pyproject's package-dir: lsp/_package is mdseek itself)."""
    want = set()
    for top in ("index", "lsp"):
        for init in (REPO / top).rglob("__init__.py"):
            rel = init.relative_to(REPO).as_posix()
            want.add("mdseek/__init__.py" if rel == "lsp/_package/__init__.py" else f"mdseek/{rel}")
    with zipfile.ZipFile(wheel) as z:
        have = set(z.namelist())
    assert not want - have, f"packages missing from the wheel: {sorted(want - have)}"


@pytest.mark.skipif(
    not any(CACHE.glob("*.whl")), reason="no model wheel from .ci/setup in .venv/model-wheel"
)
def test_package_without_node_builds_the_wheels_and_exports_nothing(tmp_path: Path):
    dist = tmp_path / "dist"
    env = {**os.environ, "PATH": _path_without_node(tmp_path), "DIST": str(dist)}
    r = subprocess.run(
        ["bash", "scripts/package.sh"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    names = sorted(p.name for p in dist.glob("*.whl"))
    assert names == [
        "mdseek-0.1.0-py3-none-any.whl",
        "mdseek_all_minilm_l6_v2_onnx-0.1.0-py3-none-any.whl",
    ]
    assert_every_package_in(dist / names[0])
    assert "model_wheel: reused the export setup built" in r.stderr  # no second export
    assert "exported" not in r.stderr
    assert not list(dist.glob("*.vsix"))
    summary = r.stdout[r.stdout.index("== built") :]
    assert f"  {dist}/mdseek-0.1.0-py3-none-any.whl (" in summary
    assert "  left out: the VS Code extension (no node/npm on PATH; --vsix to insist)" in summary
    # asked for the extension without Node: one line, exit 1, the wheels still there
    r = subprocess.run(
        ["bash", "scripts/package.sh", "--vsix"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 1 and "--vsix needs node 18+ and npm" in r.stderr, r.stderr[-2000:]
