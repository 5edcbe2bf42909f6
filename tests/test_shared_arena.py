"""Every ONNX Runtime session of a process draws on one CPU arena: threads by
demand runs the bulk work on two sessions (two threads, and one while a
request waits), and an arena each kept the activations of the largest call
twice (~113 MB more at 8 window-long int8 texts; benchmarks/README.md,
"Memory at 10,000 notes")."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdseek.index.model.onnx_encoder import OnnxEncoder
from mdseek.index.model.packaged import installed

ROOT = Path(__file__).resolve().parent.parent


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    pytest.skip("no /proc/self/status")


def _long_texts(n: int) -> list[str]:
    words = " ".join(
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "fixtures").rglob("*.md"))
    )
    return [words[i * 1500 : (i + 1) * 1500] for i in range(n)]  # each past the 256-token window


def test_a_second_session_adds_no_arena_of_its_own():
    folder, _ = installed()
    if folder is None or not (folder / "int8").is_dir():
        pytest.skip("no model wheel installed (bash .ci/setup installs it)")
    texts = _long_texts(8)
    two, one = OnnxEncoder(folder / "int8", 2), OnnxEncoder(folder / "int8", 1)
    for _ in range(2):  # the first session's arena at its largest call
        a = two.encode(texts, 8)
    before = _rss_mb()
    b = one.encode(texts, 8)
    grew = _rss_mb() - before
    assert (a * b).sum(axis=1).min() > 0.999  # the same vectors either way
    # an arena of its own: ~113 MB; the shared one is already as large as the call
    assert grew < 40, grew
