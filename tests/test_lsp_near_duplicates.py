"""Near-duplicate hints through the real server over stdio: an opened
document's section that says what another section says gets a hint naming
the other (its file and line, a related location), with quick fixes to
replace its text by a link (and, in a wiki vault, by an embed); the
``nearDuplicates`` setting turns the hints off."""

from __future__ import annotations

from pathlib import Path

import pytest
from raw_lsp import RawServer
from test_near_duplicates import _folder

pytestmark = pytest.mark.slow


def _hints(root: Path, options: dict | None = None, fixes: bool = False) -> tuple[list, list]:
    """The near-duplicate hints pushed for install-aks.md once the folder is
    ready, and (``fixes``) the code actions offered on them."""
    with RawServer(root) as s:
        s.initialize(root, options)
        s.wait_state(("ready",), timeout=180)
        path = root / "install-aks.md"
        uri = path.resolve().as_uri()
        s.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": uri,
                    "languageId": "markdown",
                    "version": 1,
                    "text": path.read_text(),
                }
            },
        )
        msg = s.wait_notification(
            "textDocument/publishDiagnostics",
            timeout=60,
            pred=lambda m: m["params"]["uri"] == uri,
        )
        assert msg is not None, s.stderr()[-2000:]
        hints = [d for d in msg["params"]["diagnostics"] if d.get("code") == "near-duplicate"]
        actions: list = []
        if fixes and hints:
            res = s.request(
                "textDocument/codeAction",
                {
                    "textDocument": {"uri": uri},
                    "range": hints[0]["range"],
                    "context": {"diagnostics": hints, "only": ["quickfix"]},
                },
                timeout=30,
            )
            assert res is not None and "result" in res, res
            actions = res["result"] or []
        return hints, actions


def test_an_opened_note_s_duplicate_section_gets_a_hint_and_a_link_fix(tmp_path: Path):
    root = _folder(tmp_path / "docs")
    (hint,) = _hints(root)[0]
    assert hint["severity"] == 4  # Hint
    assert hint["source"] == "mdseek"
    assert hint["range"]["start"] == {"line": 2, "character": 0}
    assert hint["range"]["end"] == {"line": 2, "character": len("## Prerequisites")}
    assert hint["message"].startswith(
        "Near-duplicate: this section says what 'Prerequisites' in install-eks.md (line 5) says"
    )
    (rel,) = hint["relatedInformation"]
    assert rel["location"]["uri"] == (root / "install-eks.md").resolve().as_uri()
    assert rel["location"]["range"]["start"] == {"line": 4, "character": 0}


def test_the_setting_turns_the_hints_off(tmp_path: Path):
    root = _folder(tmp_path / "docs")
    assert _hints(root, {"nearDuplicates": False})[0] == []


def _edit_of(action: dict) -> tuple[dict, str]:
    (edit,) = action["edit"]["changes"].values()
    (e,) = edit
    return e["range"], e["newText"]


def test_the_quick_fix_puts_a_link_in_the_section_s_place(tmp_path: Path):
    root = _folder(tmp_path / "docs")
    (hint,), actions = _hints(root, fixes=True)
    assert [a["title"] for a in actions] == [
        "Replace this section's text with a link to 'Prerequisites' in install-eks.md"
    ]
    rng, text = _edit_of(actions[0])
    # the body, from the line after the heading up to the next heading
    assert rng == {"start": {"line": 3, "character": 0}, "end": {"line": 6, "character": 0}}
    assert text == "\nSee [Prerequisites](install-eks.md#prerequisites).\n\n"


def test_in_a_wiki_vault_the_fixes_are_a_wiki_link_and_an_embed(tmp_path: Path):
    root = _folder(tmp_path / "vault")
    (root / ".obsidian").mkdir()
    _, actions = _hints(root, fixes=True)
    assert [(a["title"], _edit_of(a)[1]) for a in actions] == [
        (
            "Replace this section's text with a link to 'Prerequisites' in install-eks.md",
            "\nSee [[install-eks#Prerequisites]].\n\n",
        ),
        (
            "Replace this section's text with an embed of 'Prerequisites' in install-eks.md",
            "\n![[install-eks#Prerequisites]]\n\n",
        ),
    ]
