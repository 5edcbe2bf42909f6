"""lsp/server/codecache.py: the server's start reuses the code attrs generates for
lsprotocol's classes; the classes behave the same whether their code was
compiled or read back, and a bad cache file only means compiling."""

from __future__ import annotations

import json
import subprocess
import sys

from sandbox import server_env

PROBE = """
import json, sys
from pathlib import Path
from mdseek.lsp.server import codecache
cache = codecache.install(Path(sys.argv[1])) if len(sys.argv) < 3 else None
from lsprotocol import types
new = cache.new if cache else 0
codecache.finish()
import attr._make
p = types.Position(line=1, character=2)
print(json.dumps({
    "new": new, "used": len(cache.used) if cache else 0,
    "restored": "compile" not in vars(attr._make),
    "eq": p == types.Position(line=1, character=2) and p != types.Position(line=1, character=3),
    "repr": repr(p),
    "range": repr(types.Range(start=p, end=p)),
    "edit": repr(types.TextEdit(range=types.Range(start=p, end=p), new_text="x")),
    "hash": hash(types.Position(line=1, character=2)) == hash(p) if types.Position.__hash__ else None,
}))
"""


def probe(cache_dir, *plain: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(cache_dir), *plain],
        capture_output=True, text=True, check=True, env=server_env(PYTHONDONTWRITEBYTECODE="1"),
    )  # fmt: skip
    return json.loads(out.stdout)


def test_second_start_compiles_nothing_and_classes_behave_the_same(tmp_path):
    first = probe(tmp_path)
    files = list(tmp_path.glob("attrs-code-*.marshal"))
    assert len(files) == 1 and first["new"] > 300 and first["used"] == first["new"]
    second = probe(tmp_path)
    assert second["new"] == 0 and second["used"] == first["used"]
    plain = probe(tmp_path / "unused", "plain")  # attrs compiling as usual
    assert not (tmp_path / "unused").exists()
    behaviour = ("eq", "repr", "range", "edit", "hash", "restored")
    assert (
        {k: first[k] for k in behaviour}
        == {k: second[k] for k in behaviour}
        == {k: plain[k] for k in behaviour}
    )
    assert first["eq"] and first["restored"] and "new_text='x'" in first["edit"]
    assert oct(files[0].stat().st_mode & 0o777) == "0o600"


def test_a_damaged_cache_file_means_compiling_and_is_replaced(tmp_path):
    first = probe(tmp_path)
    (f,) = tmp_path.glob("attrs-code-*.marshal")
    f.write_bytes(f.read_bytes()[:1000])  # truncated mid-write by something else
    again = probe(tmp_path)
    assert again["new"] == first["new"] and again["eq"] and again["repr"] == first["repr"]
    assert probe(tmp_path)["new"] == 0  # rewritten whole
    f.write_bytes(b"not marshal data")
    assert probe(tmp_path)["new"] == first["new"]
