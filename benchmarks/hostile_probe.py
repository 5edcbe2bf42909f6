"""Hostile-user probe of the index file and the language server (issue 13,
items 3-9 and 11): prints one line per case, for before/after comparisons.

    python benchmarks/hostile_probe.py OUTDIR [case ...]

Cases: symlinks, modes, corrupt, framing, params, strings, server-corrupt,
exit, twice (default: all). Everything runs in OUTDIR (XDG_CACHE_HOME too);
the workspaces are copies of fixtures/, nothing else is needed.

To measure an older checkout, put its packages first on PYTHONPATH, e.g. for
commit C:  git archive C | tar -x -C /tmp/old && mkdir /tmp/old/pkg &&
cp -r /tmp/old/lsp/_package /tmp/old/pkg/mdseek && cp -r /tmp/old/index
/tmp/old/pkg/mdseek/index && cp -r /tmp/old/lsp /tmp/old/pkg/mdseek/lsp, then
PYTHONPATH=/tmp/old/pkg python benchmarks/hostile_probe.py OUTDIR.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from raw_lsp import RawServer  # noqa: E402

from mdseek.index.store import survey  # noqa: E402
from mdseek.index.store.store import Store  # noqa: E402

FIX = REPO / "fixtures" / "handbook"
ALL = [
    "symlinks",
    "modes",
    "corrupt",
    "framing",
    "params",
    "strings",
    "server-corrupt",
    "exit",
    "twice",
]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mdseek", *args], capture_output=True, text=True)


def ws(out: Path, name: str, files: int = 2) -> Path:
    d = out / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    for f in sorted((FIX / "adr").glob("*.md"))[:files]:
        shutil.copy(f, d / f.name)
    return d


def said(run: subprocess.CompletedProcess) -> str:
    err = run.stderr.strip().splitlines()
    tb = sum("Traceback" in ln for ln in err)
    return f"exit {run.returncode}, {len(err)} stderr lines, {tb} tracebacks: {err[-1][:160] if err else ''!r}"


def mode(p: Path) -> str:
    return oct(stat.S_IMODE(os.stat(p).st_mode)) if p.exists() else "-"


def symlinks(out: Path) -> None:
    a = ws(out, "link-folder")
    elsewhere = out / "elsewhere"
    elsewhere.mkdir()
    (a / ".mdseek").symlink_to(elsewhere, target_is_directory=True)
    run = cli("index", str(a), "--no-progress")
    print(
        f"symlinks: .mdseek -> folder elsewhere: {said(run)}; created there: {sorted(os.listdir(elsewhere))}"
    )
    b = ws(out, "link-file")
    (b / ".mdseek").mkdir()
    diary = out / "diary.txt"
    diary.write_text("my diary\n")
    (b / ".mdseek" / "index.sqlite").symlink_to(diary)
    run = cli("index", str(b), "--no-progress")
    intact = diary.read_text() == "my diary\n"
    print(f"symlinks: index.sqlite -> user file: {said(run)}; file intact: {intact}")


def modes(out: Path) -> None:
    c = ws(out, "modes")
    old = os.umask(0o022)
    try:
        cli("index", str(c), "--no-progress")
        st = json.loads(cli("status", str(c), "--json").stdout)
    finally:
        os.umask(old)
    idx = Path(st["index_path"])
    db = Store(idx)  # open it for writing so -wal and -shm exist
    db.set_meta("probe", "1")
    wal, shm = (Path(str(idx) + s) for s in ("-wal", "-shm"))
    print(
        f"modes (umask 022): folder {mode(idx.parent)}, index {mode(idx)}, wal {mode(wal)}, shm {mode(shm)} ({idx})"
    )
    db.close()


def corrupt(out: Path) -> None:
    d = ws(out, "corrupt")
    (d / ".mdseek").mkdir()
    (d / ".mdseek" / "index.sqlite").write_bytes(os.urandom(65536))
    run = cli("index", str(d), "--no-progress")
    print(f"corrupt: random bytes: {said(run)}; folder: {sorted(os.listdir(d / '.mdseek'))}")
    app = out / "app.sqlite"
    db = sqlite3.connect(app)
    db.execute("CREATE TABLE invoices(x)")
    db.commit()
    db.close()
    before = app.read_bytes()
    run = cli("index", str(ws(out, "foreign")), "--no-progress", "--db", str(app))
    print(
        f"corrupt: another app's database as --db: {said(run)}; file unchanged: {app.read_bytes() == before}"
    )


def framing(out: Path) -> None:
    d = ws(out, "framing")
    with RawServer(d, stderr_path=out / "framing.log") as s:
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        ).encode()
        s.send_raw(b"Content-Length: banana\r\n\r\n" + body)
        t0 = time.monotonic()
        res = s.request(
            "initialize", {"processId": None, "rootUri": d.as_uri(), "capabilities": {}}, timeout=15
        )
        print(
            f"framing: initialize after 'Content-Length: banana' answered: {res is not None} "
            f"({time.monotonic() - t0:.1f}s); alive: {s.proc.poll() is None}"
        )
        s.proc.stdin.close()
        print(f"framing: after closing its input the server exits: code {s.wait_exit(15)}")


def params(out: Path) -> None:
    d = ws(out, "params")
    u = next(d.glob("*.md")).as_uri()
    cases = [
        ("textDocument/hover", {"textDocument": {"uri": u}}),
        ("textDocument/documentSymbol", {"textDocument": None}),
        ("workspace/symbol", {"query": 42}),
        ("textDocument/completion", {"textDocument": {"uri": u}, "position": "here"}),
        (
            "textDocument/references",
            {"textDocument": {"uri": u}, "context": {"includeDeclaration": True}},
        ),
        ("textDocument/definition", None),
        ("textDocument/hover", [1, 2]),
        ("textDocument/documentSymbol", {}),
        (
            "textDocument/hover",
            {"textDocument": {"uri": u}, "position": {"line": -5, "character": 10**12}},
        ),
    ]
    with RawServer(d, stderr_path=out / "params.log") as s:
        s.initialize(d)
        answers = [s.request(m, p, timeout=5) for m, p in cases]
    got = [a for a in answers if a is not None]
    invalid = [a for a in got if a.get("error", {}).get("code") == -32602]
    tb = [a for a in got if "traceback" in json.dumps(a.get("error", {}).get("data")).lower()]
    print(
        f"params: {len(got)}/{len(cases)} answered, {len(invalid)} with -32602, {len(tb)} with a traceback in data"
    )


def strings(out: Path) -> None:
    d = ws(out, "strings", files=4)
    with RawServer(d, stderr_path=out / "strings.log") as s:
        s.initialize(d)
        s.wait_state(("ready",), 600)
        for q in ["\ud800 replica", "post\x00gres", "replica " + "x" * 200_000]:
            res = s.request("workspace/symbol", {"query": q}, timeout=30)
            desc = (
                "no answer"
                if res is None
                else (
                    f"error {res['error']['code']}"
                    if "error" in res
                    else f"{len(res['result'])} results"
                )
            )
            print(f"strings: workspace/symbol {q[:12]!r}... ({len(q)} chars): {desc}")


def server_corrupt(out: Path) -> None:
    d = ws(out, "server-corrupt")
    (d / ".mdseek").mkdir()
    (d / ".mdseek" / "index.sqlite").write_bytes(os.urandom(65536))
    with RawServer(d, stderr_path=out / "server-corrupt.log") as s:
        t0 = time.monotonic()
        s.initialize(d)
        msg = s.wait_notification("window/showMessage", timeout=40)
        print(
            f"server-corrupt: showMessage within 40 s: {msg['params']['message'][:120] if msg else None!r}"
        )
        try:
            st = s.wait_state(("indexing", "ready"), 40, pred=lambda st: st["files"] > 0)
            print(
                f"server-corrupt: indexed again: {st['files']} files after {time.monotonic() - t0:.1f}s"
            )
        except AssertionError:
            print("server-corrupt: not indexed after 40 s")


def big_workspace(out: Path, copies: int = 3) -> Path:
    d = out / "big"
    if d.exists():
        return d
    for n in range(copies + 1):
        for f in sorted(FIX.rglob("*.md")):
            dest = d / f"copy{n}" / f.relative_to(FIX)
            dest.parent.mkdir(parents=True, exist_ok=True)
            paras = f.read_text().split("\n\n")
            dest.write_text(
                "\n\n".join(
                    p + (f" v{n}x{i}" if p and p[0].isalpha() else "") for i, p in enumerate(paras)
                )
            )
    return d


def exit_(out: Path) -> None:
    d = big_workspace(out)
    for variant in ("shutdown+exit", "exit", "eof"):
        shutil.rmtree(out / "cache", ignore_errors=True)
        with RawServer(d, stderr_path=out / f"exit-{variant}.log") as s:
            s.initialize(d)
            s.wait_state(
                ("indexing",),
                600,
                pred=lambda st: st.get("embedded_total", 0) > 0 and st["pending_embeds"] > 0,
            )
            t0 = time.monotonic()
            if variant == "shutdown+exit":
                s.request("shutdown", None, timeout=30)
            if variant == "eof":
                s.proc.stdin.close()
            else:
                s.notify("exit")
            code = s.wait_exit(120)
            err = s.stderr()
            print(
                f"exit while embedding ({variant}): exit code {code} after {time.monotonic() - t0:.2f}s; "
                f"stderr {len(err)} bytes, {len(err.splitlines())} lines"
            )


def twice(out: Path) -> None:
    d = ws(out, "twice", files=12)
    shutil.rmtree(out / "cache", ignore_errors=True)
    with RawServer(out, stderr_path=out / "twice.log") as s:
        s.initialize(d)
        run = cli("index", str(d), "--json")
        rep = json.loads(run.stdout)
        st = s.wait_state(("ready",), 900, pred=lambda st: st["pending_embeds"] == 0)
        idx = st["roots"][0]["index_path"]
    chunks = len(survey.text_hashes(Path(idx)))
    print(
        f"twice: server + CLI on a fresh folder: {chunks} distinct chunks, embedded "
        f"{st['embedded_total']} (server) + {rep['embedded']} (CLI) = {st['embedded_total'] + rep['embedded']}"
    )


CASES = {
    "symlinks": symlinks,
    "modes": modes,
    "corrupt": corrupt,
    "framing": framing,
    "params": params,
    "strings": strings,
    "server-corrupt": server_corrupt,
    "exit": exit_,
    "twice": twice,
}


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["XDG_CACHE_HOME"] = str(out / "cache")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for name in sys.argv[2:] or ALL:
        CASES[name](out)


if __name__ == "__main__":
    main()
