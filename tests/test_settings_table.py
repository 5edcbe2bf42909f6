"""One settings table (index/settings.py): the places that restate it agree
with it -- docs/settings.md (made from it), VS Code's package.json (checked),
the command line's flags (each command only its own), the language server's
parser (defaults, bounds, choices) -- and every front end reads the
environment variables through it (a real language server too)."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, initialize, request, wait_ready
from pytest_lsp import LanguageClient
from tiny_models import build_cross_encoder
from waiting import until

from mdseek.index import settings as table
from mdseek.lsp.cli import build_parser, main
from mdseek.lsp.server.config import Settings, parse_settings

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("settings_doc", REPO / "scripts/settings_doc.py")
assert _spec and _spec.loader
doc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(doc)

COMMANDS = ("index", "search", "related", "chunks", "coverage", "status", "prune", "serve", "mcp")


def subparsers() -> dict[str, argparse.ArgumentParser]:
    ap = build_parser()
    action = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def options(p: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {o: a for a in p._actions for o in a.option_strings}


def cli_problems(parsers: dict[str, argparse.ArgumentParser] | None = None) -> list[str]:
    found = []
    parsers = parsers or subparsers()
    assert set(parsers) == set(COMMANDS)
    for cmd, p in parsers.items():
        opts = options(p)
        for s in table.SETTINGS:
            if not s.flag:
                continue
            if (s.flag in opts) != (cmd in s.commands):
                found.append(f"{cmd}: {s.flag} {'shown' if s.flag in opts else 'missing'}")
            if s.flag not in opts:
                continue
            a = opts[s.flag]
            if s.choices and list(a.choices or ()) != list(s.choices):
                found.append(f"{cmd}: {s.flag} choices {a.choices}")
            if a.default is not None and a.default != s.default:
                found.append(f"{cmd}: {s.flag} default {a.default!r}, the table's {s.default!r}")
    return found


def parser_problems() -> list[str]:
    """The language server's parser against the table: keys, defaults, bounds, choices."""
    found = []
    defaults = Settings()
    for s in table.SERVER_SETTINGS:
        name, attr = s.name, table.attr(s)
        if getattr(defaults, attr, "missing") != s.default:
            found.append(f"{name}: default {getattr(defaults, attr, 'missing')!r}")
        good: list = list(s.choices)
        bad: list = ["no such choice"] if s.choices else []
        if s.type == "integer":
            good += [s.minimum] + ([s.maximum] if s.maximum is not None else [])
            bad += [s.minimum - 1] + ([s.maximum + 1] if s.maximum is not None else [])
        for v in good:
            got, problems = parse_settings({name: v})
            if problems or getattr(got, attr) != v:
                found.append(f"{name}: {v!r} refused ({problems})")
        for v in bad:
            _, problems = parse_settings({name: v})
            if not any(name in p for p in problems):
                found.append(f"{name}: {v!r} accepted")
    return found


def package() -> dict:
    return json.loads((REPO / "vscode-client/package.json").read_text())


def test_docs_settings_md_is_made_from_the_table():
    text = (REPO / "docs/settings.md").read_text()
    assert doc.doc_with_table(text) == text, "run: python scripts/settings_doc.py --write"


def test_package_json_agrees_with_the_table():
    assert doc.package_problems(package()) == []


def test_the_editors_files_state_the_tables_defaults(monkeypatch):
    assert doc.editor_problems() == []
    rows = tuple(
        dataclasses.replace(s, default=7) if s.name == "hoverRelated" else s
        for s in table.SERVER_SETTINGS
    )
    monkeypatch.setattr(table, "SERVER_SETTINGS", rows)
    assert doc.editor_problems() == [
        "lsp/editors/nvim/lsp/mdseek.lua:55: hoverRelated default 5, the table's 7"
    ]


def test_each_command_takes_the_flags_of_its_settings_only():
    assert cli_problems() == []
    prune = set(options(subparsers()["prune"]))
    assert prune == {"-h", "--help", "--dry-run", "--days", "-v", "--verbose"}


def test_the_language_server_parses_by_the_table():
    assert parser_problems() == []
    assert {s.name for s in table.SERVER_SETTINGS} >= {"searchLimit", "maxFileSize", "rerankTop"}


def test_a_change_in_one_place_is_seen(monkeypatch):
    """Each check fails when the table and one place part: a bound, a default, a flag."""
    pkg = package()
    pkg["contributes"]["configuration"]["properties"]["mdseek.maxFileSize"]["minimum"] = 0
    assert any("maxFileSize minimum" in p for p in doc.package_problems(pkg))
    pkg = package()
    pkg["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"].remove("mdseek.model")
    assert any("restricted" in p for p in doc.package_problems(pkg))

    def changed(name: str, **kw) -> None:
        rows = tuple(dataclasses.replace(s, **kw) if s.name == name else s for s in table.SETTINGS)
        monkeypatch.setattr(table, "SETTINGS", rows)
        monkeypatch.setattr(table, "SERVER_SETTINGS", tuple(s for s in rows if s.server))

    changed("searchLimit", default=25)
    assert any("searchLimit: default" in p for p in parser_problems())
    text = (REPO / "docs/settings.md").read_text()
    assert doc.doc_with_table(text) != text
    assert any("searchLimit default" in p for p in doc.package_problems(package()))
    parsers = subparsers()  # the flags are made from the table: one written by hand is seen
    parsers["prune"].add_argument("--threads", type=int)
    parsers["mcp"].set_defaults(rerank_top=12)
    assert cli_problems(parsers) == ["prune: --threads shown", "mcp: --rerank-top default 12, "
                                     "the table's 10"]  # fmt: skip
    changed("hoverRelated", minimum=1)
    assert any("hoverRelated: 0 accepted" in p for p in parser_problems())


def test_environment_fills_what_no_setting_gives(monkeypatch):
    monkeypatch.setenv("MDSEEK_MODEL", "/from/env/model")
    monkeypatch.setenv("MDSEEK_RERANK", "/from/env/reranker")
    monkeypatch.setenv("MDSEEK_THREADS", "3")
    s, problems = parse_settings({"model": "/from/setting"})
    assert problems == []
    assert (s.model, s.rerank, s.threads) == ("/from/setting", "/from/env/reranker", 3)
    s, _ = parse_settings({"model": "", "rerank": ""})  # VS Code's unset
    assert (s.model, s.rerank) == ("/from/env/model", "/from/env/reranker")
    monkeypatch.setenv("MDSEEK_THREADS", "many")
    s, problems = parse_settings({})
    assert s.threads == 0 and problems == ["MDSEEK_THREADS must be an integer (got 'many'); "
                                           "using the default 0"]  # fmt: skip


POSITIONALS = {"index": ["d"], "search": ["d", "q"], "chunks": ["f"], "coverage": ["d"],
               "status": ["d"], "mcp": []}  # fmt: skip
VALUES = {"string": "/from/env", "prompt": "from env: ", "choice": None, "integer": "3",
          "boolean": "1"}  # fmt: skip


def test_every_command_reads_its_variables_and_a_flag_wins(monkeypatch):
    from mdseek.lsp.cli.options import from_environment

    checked = 0
    for cmd, positionals in POSITIONALS.items():
        for s in table.for_command(cmd):
            if not s.env:
                continue
            raw = VALUES[s.type] or s.choices[-1]
            monkeypatch.setenv(s.env, raw)
            args = build_parser().parse_args([cmd, *positionals])
            from_environment(args, cmd)
            off = s.flag.startswith("--no-")  # a setting on by default: its flag turns it off
            dest = table.attr(s) if off else s.flag.lstrip("-").replace("-", "_")
            want = {"3": 3, "1": True}.get(raw, raw)
            assert getattr(args, dest) == want, (cmd, s.name)
            if off:
                args = build_parser().parse_args([cmd, *positionals, s.flag])
                from_environment(args, cmd)
                assert getattr(args, dest) is False, (cmd, s.name)
            if s.type != "boolean":
                given = s.choices[0] if s.choices else "4" if s.type == "integer" else "/flag"
                args = build_parser().parse_args([cmd, *positionals, s.flag, given])
                from_environment(args, cmd)
                assert str(getattr(args, dest)) == given, (cmd, s.name)
            monkeypatch.delenv(s.env)
            checked += 1
    assert checked >= 30


def test_the_command_line_says_a_bad_variable_in_the_same_words(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("MDSEEK_THREADS", "many")
    assert main(["status", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err == "mdseek: error: MDSEEK_THREADS must be an integer (got 'many')\n"
    )


# The server's variables: a model that is not there (the server says so and takes
# the bundled one) and a tiny cross-encoder, made before the server is asked to search.
CROSS_ENCODER = Path(tempfile.mkdtemp(prefix="mdseek-settings-")) / "ce"
ENV = {"MDSEEK_MODEL": "/no/such/model-dir", "MDSEEK_RERANK": str(CROSS_ENCODER)}


@pytest_lsp.fixture(config=config(env=ENV))
async def env_client(lsp_client: LanguageClient, tmp_path: Path):
    build_cross_encoder(CROSS_ENCODER, seed=3)
    (tmp_path / "a.md").write_text(
        "# Alpha\n\nSome text about databases.\n\n## Beta\n\nReplicas.\n"
    )
    await initialize(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.slow
async def test_the_language_server_reads_the_variables(env_client: LanguageClient):
    """MDSEEK_MODEL and MDSEEK_RERANK reach the server (it ignored them before)."""

    async def messages() -> list:
        return list(env_client.messages)

    await until(
        messages,
        lambda ms: any("/no/such/model-dir" in m.message for m in ms),
        timeout=60,
        what="the message about MDSEEK_MODEL's model",
    )
    await wait_ready(env_client)
    res = await request(env_client, "mdseek/search", {"query": "databases", "explain": True})
    assert res["results"] and all("rerank" in r["explain"] for r in res["results"])
