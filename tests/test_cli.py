"""The command line explains itself: help, version, clear one-line errors,
human status, progress only where it helps, paths that open from the cwd."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from sandbox import mdseek, run

from mdseek import __version__

REPO = Path(__file__).resolve().parent.parent


def test_version_and_help():
    r = mdseek("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"mdseek {__version__}"
    r = mdseek("--help")
    assert "MDSEEK_MODEL" in r.stdout and "MDSEEK_INDEX" in r.stdout
    r = mdseek("search", "--help")
    out = " ".join(r.stdout.split())
    for needle in (
        "QUERY what you are looking for",
        "--limit N how many sections",
        "--mode {hybrid,lexical,dense} hybrid =",
        "--json print the answer",
        "--no-progress no progress on stderr",
        "MDSEEK_INDEX",
    ):
        assert needle in out, needle


def test_limit_must_be_positive(tmp_path: Path):
    for bad in ("0", "-1", "x"):
        r = mdseek("search", str(tmp_path), "q", "--limit", bad)
        assert r.returncode == 2 and r.stdout == "", bad  # a usage error
        assert r.stderr.startswith("mdseek: error: limit must be") and r.stderr.count("\n") == 1


def test_a_file_given_as_dir_and_a_missing_folder(tmp_path: Path):
    f = tmp_path / "notes.md"
    f.write_text("# A\n")
    r = mdseek("search", str(f), "q")
    assert r.returncode == 1
    assert "is a file, not a folder" in r.stderr and "mdseek chunks" in r.stderr
    r = mdseek("index", str(tmp_path / "nope"))
    assert r.returncode == 1 and "no such folder" in r.stderr
    r = mdseek("chunks", str(tmp_path))
    assert r.returncode == 1 and "is a folder, not a file" in r.stderr


def test_folder_without_markdown_says_so_before_loading_a_model(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "a.txt").write_text("hello")
    for d in ("empty", "text"):
        code = (
            "import sys; from mdseek.lsp.cli import main; rc = main(['search', sys.argv[1], 'q']); "
            "print(rc, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)"
        )
        r = run([sys.executable, "-c", code, str(tmp_path / d)], timeout=120)
        assert r.stdout.split() == ["1", "False", "False"], (r.stdout, r.stderr)
        assert "no markdown files in" in r.stderr and "--include" in r.stderr
        assert r.stderr.count("\n") == 1  # one line
    assert not any((tmp_path / "empty").iterdir())  # no index folder left behind


def test_unknown_model_is_one_clear_line(tmp_path: Path):
    (tmp_path / "a.md").write_text("# A\n\ncats\n")
    r = mdseek(
        "search",
        str(tmp_path),
        "cats",
        "--model",
        "no-such-model-xyz",
        "--db",
        str(tmp_path / "i.sqlite"),
    )
    assert r.returncode == 1
    lines = r.stderr.strip().split("\n")
    assert len(lines) == 1 and "no-such-model-xyz" in lines[0], r.stderr
    assert "internet" not in r.stderr.lower() and "never downloads" in r.stderr


@pytest.mark.slow
def test_status_progress_and_paths(tmp_path: Path):
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "cats.md").write_text(
        "# Cats\n\n## Feeding\n\nCats eat twice a day, mostly fish.\n"
    )
    db = tmp_path / "index.sqlite"
    # not a terminal: plain lines, never a tqdm bar (no "\r", no "it/s" rates)
    r = mdseek("index", str(ws), "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "\r" not in r.stderr and "/s]" not in r.stderr
    r = mdseek("index", str(ws), "--db", str(db), "--no-progress")
    assert r.returncode == 0 and r.stderr == ""
    # paths open from where the command ran: relative inside the cwd ...
    r = mdseek("search", "ws", "what do cats eat", "--db", str(db), "--limit", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    loc = r.stdout.split("\n")[1].split()[0]
    assert loc.startswith("ws/sub/cats.md:"), r.stdout
    assert (tmp_path / loc.split(":")[0]).is_file()
    # ... absolute outside it
    other = tmp_path / "elsewhere"
    other.mkdir()
    r = mdseek("search", str(ws), "what do cats eat", "--db", str(db), "--limit", "1", cwd=other)
    assert r.returncode == 0 and len(r.stdout.split("\n")) > 2, (r.stdout, r.stderr)
    loc = r.stdout.split("\n")[1].split()[0]
    assert loc.startswith(str(ws / "sub" / "cats.md") + ":"), r.stdout
    line = int(loc.rsplit(":", 1)[1])
    assert (ws / "sub" / "cats.md").read_text().split("\n")[line - 1] in ("# Cats", "## Feeding")
    # human status: no Python reprs
    r = mdseek("status", str(ws), "--db", str(db))
    assert r.returncode == 0
    assert "None" not in r.stdout and "False" not in r.stdout and "True" not in r.stdout
    assert "index file:" in r.stdout and "chunks:" in r.stdout
    st = json.loads(mdseek("status", str(ws), "--db", str(db), "--json").stdout)
    assert st["model_error"] is None  # JSON keeps its types


def test_main_in_process_leaves_the_hosts_log_handlers_alone(monkeypatch, capsys, caplog):
    """main() called by a host that already logs (here pytest) filters and replaces only
    the handlers it made: the host still hears the engine's model-load errors, and a
    second call does not stack a second progress handler."""
    import logging

    from mdseek.lsp.cli import main

    monkeypatch.setenv("MDSEEK_THREADS", "many")  # a usage error: nothing is opened
    assert main(["status", "."]) == 2
    assert main(["status", "."]) == 2
    capsys.readouterr()
    with caplog.at_level(logging.WARNING):
        logging.getLogger("mdseek.index.engine").error("cannot load embedding model 'x'")
    assert [r.message for r in caplog.records] == ["cannot load embedding model 'x'"]
    progress = logging.getLogger("mdseek.progress").handlers
    assert [type(h) for h in progress].count(logging.StreamHandler) == 1
