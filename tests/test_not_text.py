"""Files that are not text are skipped with their reason and listed by status;
a note in cp1252 (Latin-1) is read as such. Real SQLite index, the real
tokenizer, the command line as a user runs it."""

from __future__ import annotations

import io
import json
import logging
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mdseek.index.engine.engine import Engine


def _vault(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "x.md").write_bytes(random.Random(42).randbytes(20_000))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("pkg/__init__.py", "print('hello')\n" * 200)
        z.writestr("pkg/data.txt", "lorem ipsum " * 500)
    (root / "package.md").write_bytes(buf.getvalue())  # a wheel renamed .md
    (root / "latin.md").write_bytes(
        "# Café menu\n\nLe café crème et la crème brûlée du jour.\n".encode("cp1252")
    )
    (root / "good.md").write_text("# Good\n\nGlacier maintenance windows.\n", encoding="utf-8")
    return root


def test_decode():
    from mdseek.index.text.encoding import NotText, decode

    assert decode("café".encode()) == ("café", 0)
    assert decode("café".encode("cp1252")) == ("café", 0)
    assert decode("\ufeffcafé".encode("utf-16")) == ("\ufeffcafé", 0)
    text, errors = decode("naïve ".encode() * 50 + b"\xff")  # UTF-8 with one stray byte
    assert errors == 1 and text.startswith("naïve")
    assert decode("é".encode() + b" \xff\xfe")[1] == 2  # short, a few stray bytes: text
    with pytest.raises(NotText, match="NUL"):
        decode(b"# a\n\0\0")
    with pytest.raises(NotText, match="mostly invalid UTF-8"):
        decode("é".encode() + bytes(range(0x80, 0x100)) * 4)


def test_binary_files_skipped_latin1_read(tmp_path, caplog):
    ws = _vault(tmp_path / "ws")
    eng = Engine(ws)
    with caplog.at_level(logging.WARNING):
        rep = eng.index(embed=False)
    assert set(eng.store.documents.all()) == {"latin.md", "good.md"}  # no junk chunks
    skipped = dict(rep.skipped)
    assert set(skipped) == {"x.md", "package.md"}
    assert "NUL bytes" in skipped["package.md"]
    hits = eng.search("café", limit=3, mode="lexical").results
    assert hits and hits[0].path == "latin.md" and hits[0].heading == "Café menu"
    assert any("latin.md: not UTF-8; read as cp1252" in r.getMessage() for r in caplog.records)
    listed = {x["path"]: x["why"] for x in eng.status().skipped}
    assert listed == skipped
    # Made text: indexed, and no longer listed.
    (ws / "x.md").write_text("# Now text\n\nquokka\n", encoding="utf-8")
    eng.index_file(ws / "x.md", embed=False)
    assert [x["path"] for x in eng.status().skipped] == ["package.md"]
    eng.close()


def test_status_lists_skipped_files(tmp_path):
    ws = _vault(tmp_path / "ws")
    run = [sys.executable, "-m", "mdseek"]
    idx = ["--db", str(tmp_path / "index.sqlite")]
    subprocess.run([*run, "index", str(ws), *idx, "--no-progress"], check=True, capture_output=True)
    out = subprocess.run([*run, "status", str(ws), *idx], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "skipped, not text (2):" in out.stdout
    assert "package.md: it holds NUL bytes" in out.stdout
    st = json.loads(
        subprocess.run(
            [*run, "status", str(ws), *idx, "--json"], capture_output=True, text=True
        ).stdout
    )
    assert sorted(x["path"] for x in st["skipped"]) == ["package.md", "x.md"]
    out = subprocess.run([*run, "chunks", str(ws / "package.md")], capture_output=True, text=True)
    assert out.returncode == 1 and out.stderr == (
        f"mdseek: error: {ws / 'package.md'}: it holds NUL bytes (a binary file, not text); "
        "mdseek does not index it\n"
    )


def test_language_server_lists_and_survives_binary_notes(tmp_path):
    from raw_lsp import RawServer

    ws = _vault(tmp_path / "ws")
    (ws / "good.md").write_text("# Good\n\nSee [x](x.md#top) and [[package]].\n", encoding="utf-8")
    with RawServer(ws) as s:
        s.initialize(ws)
        st = s.wait_state(("ready",), 300)
        assert sorted(x["path"] for x in st["skipped"]) == [
            str(ws / "package.md"),
            str(ws / "x.md"),
        ]
        u = (ws / "good.md").resolve().as_uri()
        s.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": u, "languageId": "markdown", "version": 1,
                              "text": (ws / "good.md").read_text()}},
        )  # fmt: skip
        msg = s.wait_notification(
            "textDocument/publishDiagnostics", 60, pred=lambda m: m["params"]["uri"] == u
        )
        assert msg is not None
        res = s.request(
            "textDocument/hover",
            {"textDocument": {"uri": u}, "position": {"line": 2, "character": 6}},
            timeout=30,
        )
        assert res is not None and "error" not in res, res
        assert "Traceback" not in s.stderr() and "ERROR" not in s.stderr(), s.stderr()[-3000:]
