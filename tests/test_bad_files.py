"""A bad file costs only itself: hostile bytes and names generated here, a real
SQLite index, the real tokenizer; failures are one log line each, no traceback."""

from __future__ import annotations

import base64
import json
import logging
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox import server_env

from mdseek.index.engine.engine import Engine
from mdseek.index.text.files import FileFilter, display_path, matches

BAD_NAME = os.fsdecode(b"caf\xe9-\xff notes.md")  # Latin-1 bytes: not UTF-8


def hostile_workspace(root: Path) -> Path:
    root.mkdir(parents=True)
    rng = random.Random(5)
    (root / "good.md").write_text(
        "# Good\n\nthe ordinary note about glacier maintenance windows.\n"
    )
    (root / BAD_NAME).write_text("# Menu\n\nespresso and quokkaberry tart prices.\n")
    (root / "NOTES.MD").write_text("# Shouting\n\nuppercase extension marmalade.\n")
    (root / "Guide.Markdown").write_text("# Guide\n\nmixed case extension pumpernickel.\n")
    (root / "latin1.md").write_bytes(b"# Caf\xe9\n\ncr\xe8me br\xfbl\xe9e recipe zucchinirolls\n")
    (root / "nul.md").write_bytes(
        b"# Nul\n\n" + b"\0" * 50_000 + b"\n\nafter the nul bytes vermicelli\n"
    )
    (root / "blob.md").write_bytes(
        b"# Blob\n\n" + base64.b64encode(rng.randbytes(3_000)) + b"\n\ntail tamarind\n"
    )
    (root / "word.md").write_bytes(b"# Word\n\n" + b"a" * 40_000 + b"\n\nafter the word rutabaga\n")
    (root / "brackets.md").write_bytes(
        b"# Brackets\n\n" + bytes(rng.choice(b"[]()`*_") for _ in range(2_000))
    )
    (root / "yaml-bomb.md").write_text(
        "---\ntitle: " + "[" * 5000 + "\n---\n# Bomb\n\nkohlrabi survives\n"
    )
    (root / "surrogate-title.md").write_text(
        '---\ntitle: "\\ud800 lone"\n---\n\nbody with lone title okra\n'
    )
    (root / "loop.md").symlink_to("loop.md")  # a symlink loop
    (root / "dangling.md").symlink_to("nowhere.md")
    (root / "folder.md").mkdir()
    (root / "folder.md" / "inner.md").write_text(
        "# Inner\n\ninside a folder named like a file parsnip\n"
    )
    return root


INDEXED = {
    "good.md": "glacier",
    BAD_NAME: "quokkaberry",
    "NOTES.MD": "marmalade",
    "Guide.Markdown": "pumpernickel",
    "latin1.md": "zucchinirolls",
    "blob.md": "tamarind",
    "word.md": "rutabaga",
    "yaml-bomb.md": "kohlrabi",
    "surrogate-title.md": "okra",
    "folder.md/inner.md": "parsnip",
}


def test_hostile_files_are_indexed_or_skipped_alone(tmp_path, caplog):
    ws = hostile_workspace(tmp_path / "ws")
    eng = Engine(ws)
    with caplog.at_level(logging.INFO):
        rep = eng.index(embed=False)
    docs = eng.store.documents.all()
    assert set(INDEXED) | {"brackets.md"} == set(docs)  # nul.md is not text: skipped
    for rel, word in INDEXED.items():
        hits = eng.search(word, limit=3, mode="lexical").results
        assert hits and hits[0].path == rel, (rel, word)
    # The non-UTF-8 name: stored and found by its real bytes, shown with U+FFFD.
    assert display_path(BAD_NAME) == "caf\ufffd-\ufffd notes.md"
    assert eng.store.documents.get(BAD_NAME) is not None
    assert (ws / BAD_NAME).read_text().startswith("# Menu")
    titles = {d.path: d.title for d in docs.values()}
    assert titles[BAD_NAME] == "Menu" and titles["surrogate-title.md"] == "\ufffd lone"
    # The symlinks that go nowhere are skipped, each with its reason, nothing raised.
    skipped = dict(rep.skipped)
    assert "loop" in skipped["loop.md"] and "broken" in skipped["dangling.md"]
    assert "NUL bytes" in skipped["nul.md"]
    assert not rep.errors
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    # Saving the non-UTF-8 file reindexes it in place.
    (ws / BAD_NAME).write_text("# Menu\n\nespresso and gooseberry fool prices.\n")
    rep = eng.index_file(ws / BAD_NAME, embed=False)
    assert rep.indexed == 1
    assert eng.search("gooseberry", limit=1, mode="lexical").results[0].path == BAD_NAME
    eng.close()


def test_default_globs_ignore_case():
    flt = FileFilter()
    for rel in ("NOTES.MD", "a/B.Md", "x/Guide.MARKDOWN", "notes.md"):
        assert flt.wants(rel), rel
    assert not flt.wants("notes.mdx") and not flt.wants("x.txt")
    assert matches("A/.GIT/config.md", flt.exclude) and not flt.wants("A/.GIT/config.md")


def _without_read_override() -> list[str]:
    """A command prefix under which a mode-000 file really cannot be read: root
    reads anything unless it drops the capabilities that let it."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: an unreadable file cannot be made")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}"]


def test_unreadable_file_is_one_line_then_retried_when_it_changes(tmp_path):
    """Through the CLI: a file that cannot be read is one line on stderr (path
    and reason, no traceback), the rest is indexed, and the file is indexed on
    the run after it became readable."""
    ws = hostile_workspace(tmp_path / "ws")
    locked = ws / "locked.md"
    locked.write_text("# Locked\n\nsecret sauerkraut recipe\n")
    os.chmod(locked, 0o000)
    cmd = [
        *_without_read_override(),
        sys.executable,
        "-m",
        "mdseek",
        "index",
        str(ws),
        "--no-progress",
        "--json",
    ]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=server_env())
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr
        lines = [ln for ln in run.stderr.splitlines() if "locked.md" in ln]
        assert len(lines) == 1 and "ermission denied" in lines[0], run.stderr
        rep = json.loads(run.stdout)
        assert rep["files"] == len(INDEXED) + 2 and rep["indexed"] == len(INDEXED) + 1
        assert [e[0] for e in rep["errors"]] == ["locked.md"]
        os.chmod(locked, 0o644)
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=server_env())
        rep = json.loads(run.stdout)
        assert run.returncode == 0 and not rep["errors"] and rep["indexed"] == 1, run.stderr
    finally:
        os.chmod(locked, 0o644)


@pytest.mark.parametrize("verbose", [False, True])
def test_cli_shows_bad_names_with_replacement_characters(tmp_path, verbose):
    ws = hostile_workspace(tmp_path / "ws")
    cmd = [
        sys.executable,
        "-m",
        "mdseek",
        "search",
        str(ws),
        "quokkaberry",
        "--mode",
        "lexical",
        "--limit",
        "1",
    ]
    run = subprocess.run(
        cmd + (["-v"] if verbose else []), capture_output=True, timeout=900, env=server_env()
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout.decode("utf-8")  # valid UTF-8: the bad bytes are shown as U+FFFD
    assert display_path(BAD_NAME) in out
    assert b"Traceback" not in run.stderr
    js = subprocess.run(cmd + ["--json"], capture_output=True, timeout=900, env=server_env())
    rows = json.loads(js.stdout.decode("utf-8"))["results"]
    assert rows[0]["path"] == display_path(BAD_NAME)
