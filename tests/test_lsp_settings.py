"""Bad settings fall back to defaults with one clear message; good ones apply."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, indexed_copy, initialize, request, wait_ready
from lsprotocol import types
from pytest_lsp import LanguageClient
from waiting import until

from mdseek.lsp.server.config import Settings, parse_settings

pytestmark = pytest.mark.slow

BAD = {
    "searchLimit": "lots",
    "hoverRelated": -3,
    "include": 5,
    "maxFileSize": True,
    "model": "/no/such/model-dir",
}


def test_parse_settings_defaults_and_problems():
    s, problems = parse_settings({"mdseek": BAD})
    assert s.search_limit == 20 and s.hover_related == 5 and s.include == Settings().include
    assert s.max_file_size == Settings().max_file_size
    assert s.model == "/no/such/model-dir"  # a string: its loadability is checked by the engine
    assert len(problems) == 4 and any("searchLimit" in p for p in problems)
    good, problems = parse_settings(
        {"searchLimit": 3}, {"mdseek": {"hoverRelated": 0, "model": ""}}
    )
    assert (
        problems == [] and good.search_limit == 3 and good.hover_related == 0 and good.model is None
    )
    assert ".mdseek" in " ".join(good.file_filter().exclude)


@pytest.fixture(scope="module")
def ws(tmp_path_factory, request) -> Path:
    return indexed_copy(tmp_path_factory, "settings", request)


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, ws: Path):
    await initialize(lsp_client, ws, options=BAD)
    yield
    await lsp_client.shutdown_session()


async def _messages(client: LanguageClient, needle: str, timeout: float = 60) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [m.message for m in client.messages if needle in m.message]
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"no message about {needle!r}: {[m.message for m in client.messages]}")


async def test_bad_settings_one_message_and_defaults(client: LanguageClient):
    msgs = await _messages(client, "searchLimit")
    assert len(msgs) == 1
    assert "hoverRelated" in msgs[0] and "include" in msgs[0] and "maxFileSize" in msgs[0]
    model_msgs = await _messages(client, "/no/such/model-dir")
    assert "default" in model_msgs[0]
    await wait_ready(client)
    res = await request(client, "mdseek/search", {"query": "database"})
    assert len(res["results"]) == 20  # default searchLimit
    assert res["mode"] == "hybrid"  # the bundled default model took over


async def _count(client: LanguageClient) -> int:
    return len(client.messages)


async def test_did_change_configuration_applies_good_and_reports_bad(client: LanguageClient):
    client.set_configuration({"searchLimit": 3}, section="mdseek")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    # applied once the server has pulled the new settings: every search after has 3
    await until(
        lambda: request(client, "mdseek/search", {"query": "database"}),
        lambda res: len(res["results"]) == 3,
        timeout=10,
        what="searchLimit 3 applied",
    )
    res = await request(client, "mdseek/search", {"query": "replica"})
    assert len(res["results"]) == 3
    before = len(client.messages)
    client.set_configuration({"searchLimit": 0}, section="mdseek")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await until(lambda: _count(client), lambda n: n > before, timeout=10, what="a message")
    assert "searchLimit" in client.messages[-1].message
    res = await request(client, "mdseek/search", {"query": "database"})
    assert len(res["results"]) == 20


def test_empty_list_null_and_empty_string_mean_no_settings():
    """Neovim encodes `init_options = {}` as [] : that is "no settings", silently."""
    for raw in ([], (), None, "", {}, {"mdseek": {}}, {"mdseek": None}):
        s, problems = parse_settings(raw)
        assert problems == [] and s == Settings(), raw
    s, problems = parse_settings([], {"searchLimit": 4}, None)
    assert problems == [] and s.search_limit == 4
    _, problems = parse_settings([1, 2])
    assert problems and "must be an object" in problems[0]
    s, problems = parse_settings({"documentSymbols": False})
    assert problems == [] and s.document_symbols is False
    s, problems = parse_settings({"documentSymbols": "no"})
    assert s.document_symbols is True and "documentSymbols" in problems[0]
