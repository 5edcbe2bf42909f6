"""VS Code's untrusted workspaces (issue 40): a folder's ``.vscode/settings.json``
may choose nothing that runs code, loads a model, forces a re-embed or costs
without bound; and the server bounds ``threads`` whatever a client sends."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mdseek.lsp.server.config import _FIELDS, Settings, parse_settings

REPO = Path(__file__).resolve().parent.parent
PACKAGE = json.loads((REPO / "vscode-client" / "package.json").read_text())
PROPERTIES = PACKAGE["contributes"]["configuration"]["properties"]
RESTRICTED = set(PACKAGE["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"])

# Settings a cloned repository must not choose in Restricted Mode, written by
# hand: what runs or loads code or a model (server.*, model, rerank, backend),
# where the index is written (indexPath), what re-embeds every note (precision,
# the prompts), what costs without bound (threads, maxFileSize, searchLimit,
# hoverRelated, rerankTop).
MUST_RESTRICT = {
    "server.command", "server.env", "model", "indexPath", "rerank", "rerankTop", "backend",
    "precision", "queryPrompt", "documentPrompt", "threads", "maxFileSize", "searchLimit",
    "hoverRelated",
}  # fmt: skip


def restricted(key: str) -> bool:
    name = f"mdseek.{key}"
    scope = PROPERTIES.get(name, {}).get("scope")
    return name in RESTRICTED or scope in ("application", "machine")


def test_every_setting_that_runs_loads_or_costs_is_restricted_in_untrusted_workspaces():
    """Guards package.json: each such setting is declared (VS Code restricts
    only declared settings; an undeclared one in .vscode/settings.json still
    reaches the server) and restricted or machine-scoped."""
    missing = sorted(k for k in MUST_RESTRICT if not restricted(k))
    assert not missing, f"not restricted in untrusted workspaces: {missing}"
    undeclared = sorted(k for k in MUST_RESTRICT if f"mdseek.{k}" not in PROPERTIES)
    assert not undeclared, f"restricted but not declared, so not restricted: {undeclared}"
    # Every setting the server reads is declared: none slips past VS Code unchecked.
    server_side = set(_FIELDS) - {"documentSymbols"}  # sent by the extension itself
    assert sorted(server_side - {k.removeprefix("mdseek.") for k in PROPERTIES}) == []


def test_the_server_bounds_threads_whatever_the_client_sends():
    """Guards lsp/server/config.py: threads is 0..cpu count; more is a one-line problem
    and the default, never thousands of threads."""
    cpus = os.cpu_count() or 1
    s, problems = parse_settings({"threads": cpus})
    assert s.threads == cpus and problems == []
    s, problems = parse_settings({"threads": 100_000})
    assert s.threads == Settings().threads == 0  # the default: by demand
    assert problems == [f"threads must be an integer <= {cpus} (got 100000); using the default 0"]


def test_the_extension_takes_restricted_settings_from_the_user_only():
    """Guards extension.ts: its RESTRICTED_SETTINGS (the user's values only
    while the workspace is untrusted) is package.json's list."""
    import re

    ts = (REPO / "vscode-client" / "src" / "extension.ts").read_text()
    block = re.search(r"RESTRICTED_SETTINGS = \[(.*?)\] as const", ts, re.S)
    assert block is not None
    listed = set(re.findall(r"'([A-Za-z.]+)'", block.group(1)))
    assert listed == {k.removeprefix("mdseek.") for k in RESTRICTED} - {
        "server.command",
        "server.env",
    }
    assert "if (!vscode.workspace.isTrusted)" in ts
