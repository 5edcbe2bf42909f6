"""index/engine/status.py's :class:`Status`: the one shape of what an index
holds that every front end reports (the CLI's ``status --json``, MCP's status
tool, the language server's ``mdseek/status``), named where the VS Code client
reads it."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

from mdseek.index.api import SUMMED, Folder, FolderState, Status, summary
from mdseek.index.engine.status import CLIENT_FIELDS, FOLDER_FIELDS

ROOT = Path(__file__).resolve().parents[1]


def _client_fields() -> list[str]:
    """The fields of the VS Code client's ``StatusResponse`` interface."""
    ts = (ROOT / "vscode-client" / "src" / "extension.ts").read_text()
    body = re.search(r"export interface StatusResponse \{(.*?)\n\}", ts, re.S)
    assert body is not None
    return re.findall(r"^\s*(\w+)\??:", body.group(1), re.M)


def test_the_fields_the_vscode_client_reads_are_named_in_status():
    names = {f.name for f in fields(Status)}
    client = [n for n in _client_fields() if n != "roots"]  # roots: the server's own list
    assert sorted(client) == sorted(CLIENT_FIELDS)
    assert set(CLIENT_FIELDS) <= names and set(FOLDER_FIELDS) <= names
    assert set(SUMMED) <= names


def test_an_index_status_leaves_the_folder_fields_out_of_its_json():
    st = Status(root="/notes", index_path="/notes/.mdseek/index.db", files=2, chunks=5)
    out = st.as_json()
    assert out["files"] == 2 and out["chunks"] == 5 and out["model_error"] is None
    assert not set(FOLDER_FIELDS) & set(out)
    json.dumps(out)  # plain JSON types


def test_a_folder_status_before_its_index_opens(tmp_path: Path):
    f = Folder(tmp_path)
    try:
        st = f.status()
    finally:
        f.close()
    assert (st.state, st.files, st.chunks, st.window_fit, st.embedded_total) == (
        FolderState.STARTING,
        0,
        0,
        1.0,
        0,
    )
    out = st.as_json()
    assert out["state"] == "starting" and out["message"] is None
    assert json.loads(json.dumps(out))["state"] == "starting"


def test_summary_sums_the_folders_and_weights_the_window_fit():
    a = Status("a", "", files=1, chunks=3, window_fit=1.0, model="m", state=FolderState.READY)
    b = Status("b", "", files=2, chunks=1, window_fit=0.0, model="m", state=FolderState.INDEXING)
    total = summary([a, b])
    assert (total.state, total.files, total.chunks, total.window_fit, total.model) == (
        FolderState.INDEXING,
        3,
        4,
        0.75,
        "m",
    )
    assert summary([]).state == FolderState.READY
