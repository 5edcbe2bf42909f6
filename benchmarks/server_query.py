"""Query latency through the language server, two builds side by side (issue
"Retrieval v4": the query p50 unchanged within 10%; a very long question, a
pasted page, keeps its p95 within 2x of today's).

    python -m benchmarks.server_query --work DIR --build v3=CHECKOUT --build v4=CHECKOUT
        [--corpus emanual] [--queries 60] [--seed-index NAME=FILE ...]

Each build is a checkout of mdseek (``git worktree``/``git archive`` of a
commit; ``.`` for this one): its code is laid out as installed
(``DIR/code-NAME/mdseek``) and put first on ``PYTHONPATH``, so its own
``python -m mdseek index`` builds its index of a copy of the corpus (from a
copy of ``--seed-index`` if given: vectors are keyed by text, so only what
differs is embedded) and its own ``python -m mdseek serve`` answers. Both
servers run at once, idle but for the queries, which go to them in turn (the
order alternating), each ``mdseek/search`` (hybrid, limit 10) timed over
stdio; the round trip is what a client waits for.

Queries, from the corpus's questions (by id, ``--queries`` of each kind,
each kind on other questions): *short*, the question as written; *long*, the question after a scenario
paragraph (``data.long_form``, the judge's long form); *page*, a pasted page:
about 400 words of the corpus's own text (a window chosen by the query id),
then the question. Reported: p50 and p95 per kind and build, the ratios of the
second build to the first, and each build's page p95 over its short p95.
``MDSEEK_THREADS`` is passed on (1 on a shared machine: both builds alike).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from mdseek.index.store import survey

from . import data as D
from .lsp_client import LspProcess, _capabilities, _common_handlers
from .timing import pct

KINDS = ("short", "long", "page")
PAGE_WORDS = 400


def code_tree(checkout: Path, dest: Path) -> Path:
    """``dest/mdseek`` laid out as installed, of links into ``checkout``."""
    pkg = dest / "mdseek"
    if pkg.exists():
        shutil.rmtree(dest)
    pkg.mkdir(parents=True)
    for f in (checkout / "lsp" / "_package").glob("*.py"):
        (pkg / f.name).symlink_to(f.resolve())
    (pkg / "index").symlink_to((checkout / "index").resolve(), target_is_directory=True)
    (pkg / "lsp").symlink_to((checkout / "lsp").resolve(), target_is_directory=True)
    return dest


def queries(root: Path, qrels: D.QrelSet, n: int) -> dict[str, list[str]]:
    """The three kinds of query (see the module), ``n`` of each, each kind on
    questions of its own (a server keeps a query's vector, and a long query's
    ask is a question: no text is asked twice), and ``warm``: five more."""
    ids = sorted(qrels.queries)
    words = " ".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.md"))).split()
    out: dict[str, list[str]] = {}
    for k, kind in enumerate((*KINDS, "warm")):
        out[kind] = []
        for q in ids[k * n : (k + 1) * n][: 5 if kind == "warm" else n]:
            text = qrels.queries[q]
            at = int(hashlib.sha1(q.encode()).hexdigest(), 16) % max(1, len(words) - PAGE_WORDS)
            page = " ".join(words[at : at + PAGE_WORDS])
            out[kind].append({"short": text, "warm": text, "long": D.long_form(q, text),
                              "page": f"{page} So my question is: {text}"}[kind])  # fmt: skip
    return out


def wait_ready(srv: LspProcess, timeout: float = 1800) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st, _ = srv.request("mdseek/status", {}, timeout=60)
        busy = st.get("updates_pending") or st.get("pending_embeds")
        if st.get("state") == "ready" and not busy:
            return st
        time.sleep(0.5)
    raise RuntimeError(f"server not ready after {timeout:.0f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.server_query",
                                 description=__doc__.split("\n\n")[0])  # fmt: skip
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--build", action="append", required=True, metavar="NAME=CHECKOUT")
    ap.add_argument("--seed-index", action="append", default=[], metavar="NAME=FILE")
    ap.add_argument("--corpus", default="emanual", choices=("emanual", "covidqa"))
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    builds = dict(b.split("=", 1) for b in args.build)
    seeds = dict(s.split("=", 1) for s in args.seed_index)
    load = getattr(D, f"load_{args.corpus}")
    src, qrels = load(D.data_home(args.corpus))
    qs = queries(src, qrels, args.queries)
    work = args.work.resolve()
    env0 = {**os.environ, "XDG_CACHE_HOME": str(work / "cache"), "HF_HUB_OFFLINE": "1"}
    servers: dict[str, LspProcess] = {}
    out: dict = {"command": "python -m benchmarks.server_query " + " ".join(argv or sys.argv[1:]),
                 "threads": os.environ.get("MDSEEK_THREADS", "by demand"),
                 "load_average_start": round(os.getloadavg()[0], 2), "builds": {}}  # fmt: skip
    try:
        for name, checkout in builds.items():
            tree = code_tree(Path(checkout), work / f"code-{name}")
            env = {**env0, "PYTHONPATH": str(tree)}
            ws = work / name / "ws"
            if not ws.is_dir():
                D.copy_docs(src, ws)
            index = ws / ".mdseek" / "index.sqlite"
            index.parent.mkdir(mode=0o700, exist_ok=True)  # private, or mdseek will not use it
            if name in seeds and not index.exists():
                survey.copy(Path(seeds[name]), index)
                index.chmod(0o600)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "mdseek", "index", str(ws), "--no-progress"],
                           env=env, check=True, capture_output=True)  # fmt: skip
            print(f"{name}: indexed in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            srv = servers[name] = LspProcess([sys.executable, "-m", "mdseek", "serve"], ws,
                                             _common_handlers(ws), env=env)  # fmt: skip
            srv.request("initialize", {"processId": os.getpid(), "rootUri": ws.as_uri(),
                        "workspaceFolders": [{"uri": ws.as_uri(), "name": ws.name}],
                        "capabilities": _capabilities()}, timeout=300)  # fmt: skip
            srv.notify("initialized", {})
        for name, srv in servers.items():
            st = wait_ready(srv)
            out["builds"][name] = {"checkout": builds[name], "chunks": st.get("chunks")}
            for q in qs["warm"]:  # warm: the model and the matrix in
                srv.request("mdseek/search", {"query": q, "limit": 10}, timeout=300)
        times: dict[str, dict[str, list[float]]] = {n: {k: [] for k in KINDS} for n in servers}
        names = list(servers)
        for kind in KINDS:
            for i, q in enumerate(qs[kind]):
                for name in names if i % 2 == 0 else names[::-1]:
                    res, dt = servers[name].request("mdseek/search", {"query": q, "limit": 10},
                                                    timeout=300)  # fmt: skip
                    if res.get("mode") != "hybrid":
                        raise RuntimeError(f"{name} answered {res.get('mode')}: {res.get('note')}")
                    times[name][kind].append(dt * 1000)
    finally:
        for srv in servers.values():
            srv.close()
    out["load_average_end"] = round(os.getloadavg()[0], 2)
    for name in servers:
        b = out["builds"][name]
        for kind in KINDS:
            xs = times[name][kind]
            b[kind] = {
                "n": len(xs),
                "p50_ms": round(pct(xs, 50), 1),
                "p95_ms": round(pct(xs, 95), 1),
            }
        b["page_p95_over_short_p95"] = round(b["page"]["p95_ms"] / b["short"]["p95_ms"], 2)
    a, b = names[0], names[-1]
    out["ratios"] = {kind: {m: round(out["builds"][b][kind][m] / out["builds"][a][kind][m], 2)
                            for m in ("p50_ms", "p95_ms")} for kind in KINDS}  # fmt: skip
    print(render(out, a, b))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


def render(out: dict, a: str, b: str) -> str:
    L = [f"| query (n each) | {a} p50 / p95 ms | {b} p50 / p95 ms | {b} / {a}: p50, p95 |",
         "|---|---|---|---|"]  # fmt: skip
    for kind in KINDS:
        ra, rb, r = out["builds"][a][kind], out["builds"][b][kind], out["ratios"][kind]
        L.append(f"| {kind} ({ra['n']}) | {ra['p50_ms']} / {ra['p95_ms']} | {rb['p50_ms']} /"
                 f" {rb['p95_ms']} | {r['p50_ms']:.2f}, {r['p95_ms']:.2f} |")  # fmt: skip
    L.append(f"| page p95 / short p95 | {out['builds'][a]['page_p95_over_short_p95']} |"
             f" {out['builds'][b]['page_p95_over_short_p95']} | |")  # fmt: skip
    return "\n".join(L)


if __name__ == "__main__":
    raise SystemExit(main())
