"""Diagnostics that fit the vault: in an Obsidian vault (``.obsidian/``, or wiki
links that dominate) links are ``[[Note#Heading]]``, so the GitHub-anchor
advice on duplicate headings is not given; the ``duplicateHeadings`` setting
turns it on or off anywhere. The real server over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from raw_lsp import RawServer

pytestmark = pytest.mark.slow

DAILY = (
    "# Daily\n\n## Properties\n\nsee [[Weekly#Properties]]\n\n"
    "## Log\n\n## Properties\n\nagain\n"
)  # a duplicate heading, as templates make them


def _vault(root: Path, obsidian: bool, wiki_links: int = 0) -> Path:
    root.mkdir(parents=True)
    if obsidian:
        (root / ".obsidian").mkdir()
    (root / "Daily.md").write_text(DAILY)
    links = " ".join("[[Daily#Log]] [[Weekly]]" for _ in range(wiki_links))
    (root / "Weekly.md").write_text(f"# Weekly\n\n## Properties\n\n{links}\n")
    return root


def _duplicate_warnings(root: Path, options: dict | None = None) -> list[str]:
    with RawServer(root) as s:
        s.initialize(root, options)
        daily = (root / "Daily.md").resolve().as_uri()
        s.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": daily,
                    "languageId": "markdown",
                    "version": 1,
                    "text": DAILY,
                }
            },
        )
        msg = s.wait_notification(
            "textDocument/publishDiagnostics",
            timeout=60,
            pred=lambda m: m["params"]["uri"] == daily,
        )
        assert msg is not None, s.stderr()[-2000:]
        return [
            d["message"]
            for d in msg["params"]["diagnostics"]
            if d.get("code") == "duplicate-heading"
        ]


def test_obsidian_vault_gets_no_duplicate_heading_warning(tmp_path: Path):
    assert _duplicate_warnings(_vault(tmp_path / "obsidian", obsidian=True)) == []


def test_wiki_links_dominate_then_no_warning(tmp_path: Path):
    assert _duplicate_warnings(_vault(tmp_path / "wiki", obsidian=False, wiki_links=6)) == []


def test_plain_folder_warns_and_the_setting_decides(tmp_path: Path):
    plain = _vault(tmp_path / "plain", obsidian=False)
    (warning,) = _duplicate_warnings(plain)
    assert "Duplicate heading 'Properties'" in warning and "#properties-1" in warning
    assert _duplicate_warnings(plain, {"duplicateHeadings": "off"}) == []
    vault = _vault(tmp_path / "vault", obsidian=True)
    assert len(_duplicate_warnings(vault, {"duplicateHeadings": "on"})) == 1
