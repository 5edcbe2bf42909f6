"""``mdseek search --explain --section PATH:LINE`` says where that section
ranked in each retriever and why (the real engine, model and command line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

NOTES = {
    "animals.md": "# Animals\n\n## Quokka\n\nThe quokka is a small marsupial of Rottnest Island.\n\n"
    "## Wombat\n\nWombats dig burrows with strong claws.\n",
    "kitchen.md": "# Kitchen\n\n## Sourdough\n\nFeed the starter with rye flour every morning.\n",
}


def _search(ws: Path, tmp_path: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mdseek", "search", str(ws), "quokka island marsupial",
         "--db", str(tmp_path / "i.sqlite"), "--no-progress", *flags],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_where_a_section_ranked(tmp_path: Path):
    ws = tmp_path / "notes"
    ws.mkdir()
    for name, text in NOTES.items():
        (ws / name).write_text(text)
    r = _search(ws, tmp_path, "--explain", "--section", "animals.md:5", "--json")
    assert r.returncode == 0, r.stderr
    w = json.loads(r.stdout)["section"]
    assert w["section"] == {"path": "animals.md", "line": 5, "breadcrumb": "Animals > Quokka"}
    assert w["hybrid"]["rank"] == 1 and w["lexical"]["rank"] == 1 and w["dense"]["rank"] == 1
    assert w["why"] == "shown at #1 (found by lexical and dense)"
    # the sourdough section: no query word, so not a keyword candidate
    r = _search(ws, tmp_path, "--explain", "--section", str(ws / "kitchen.md") + ":3")
    assert r.returncode == 0, r.stderr
    text = r.stdout[r.stdout.index("where kitchen.md:3 ranked (Kitchen > Sourdough):") :]
    assert "  keywords (BM25): not among its " in text
    assert "  why: " in text
    # a usage error: --section without --explain, or not PATH:LINE
    for flags in (["--section", "animals.md:5"], ["--explain", "--section", "animals.md"]):
        r = _search(ws, tmp_path, *flags)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
