"""A big vault: how soon a 10,000-note folder is useful in the language server.

    python -m benchmarks.bigvault --work DIR                 10,000 files (about an hour on 2 cores)
    python -m benchmarks.bigvault --work DIR --files 1000    a smaller vault of the same mix

The vault is made once, deterministically, from the public data in
``../shared/data`` (never copied into the repository): every SciFact abstract
as a paper note (front matter with title and tags; ``## Background`` /
``## Findings`` when it is long enough; a ``## See also`` with a wiki link and
an inline link to other papers), the product docs' guides under ``docs/``, and
daily journal notes under ``journal/YYYY/MM/`` that quote a SciFact claim and a
product question with links to a paper and a guide. ``--files N`` keeps the
same mix at a smaller size.

Then ``mdseek serve`` opens it with an empty index (over stdio, as an editor
does; three notes opened with ``didOpen`` at once), and the harness polls the
server's own state -- ``mdseek/search`` and ``mdseek/status`` -- to time:

* ``first_lexical_s``: process start to the first search that finds a word of
  a note (the folder is read and searchable by keywords);
* ``open_files_dense_s``: to the moment every chunk of the three open notes
  has a vector (read from the index file, read-only), i.e. they are fully
  searchable by meaning;
* ``save_searchable_s``: a note saved (``didSave``) once ``first_lexical``
  is reached, to the moment a search finds a word only its new text has;
* ``all_vectors_s``: to ``pending_embeds == 0`` and state ``ready``;
* chunks/s while embedding, peak RSS of the server, index size on disk;
* the same server restarted with nothing changed: time to ``ready`` and the
  number of texts it embedded (0 is right).

Timings are wall-clock on a shared machine: read them as orders of magnitude
and compare runs made side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from pathlib import Path

from mdseek.index.store import survey

from .data import DataMissing, _read_jsonl, data_dir, rhdh_dir, scifact_dir, where_data_should_be
from .lsp_client import LspProcess, _common_handlers, mdseek_server
from .lsp_speed import _initialize
from .output import emit

SEED = 0
POLL = 0.25  # seconds between polls of the server's state
MIX = {"papers": 0.52, "docs": 28, "journal": None}  # share, count, the rest


def _slug(text: str, n: int = 40) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:n].strip("-") or "note"


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def make_vault(data: Path, dest: Path, n_files: int = 10_000) -> dict:
    """Write the vault (if ``dest`` does not hold this size already); returns its counts."""
    marker = dest / ".bigvault.json"
    if marker.is_file():
        meta = json.loads(marker.read_text())
        if meta.get("files") == n_files and meta.get("seed") == SEED:
            return meta
    if dest.exists():
        raise SystemExit(f"{dest} exists and is not a vault of {n_files} files: remove it first")
    rng = random.Random(SEED)
    corpus = _read_jsonl(scifact_dir(data) / "corpus.jsonl")
    claims = [q["text"] for q in _read_jsonl(scifact_dir(data) / "queries.jsonl")]
    rdir = rhdh_dir(data)
    questions = [q["text"] for q in _read_jsonl(rdir / "queries.jsonl")]
    guides = sorted((rdir / "docs").glob("*.md"))
    n_docs = min(len(guides), int(MIX["docs"] or 0), n_files // 10)
    n_papers = min(len(corpus), round(n_files * float(MIX["papers"] or 0)))
    n_journal = n_files - n_docs - n_papers
    papers = corpus[:n_papers]
    paper_paths = [
        Path("papers") / f"p{int(p['_id']) % 40:02d}" / f"{p['_id']}-{_slug(p['title'])}.md"
        for p in papers
    ]
    doc_paths = [Path("docs") / g.name for g in guides[:n_docs]]
    dest.mkdir(parents=True)
    for i, (p, rel) in enumerate(zip(papers, paper_paths, strict=True)):
        title = p["title"].strip().rstrip(".")
        sents = _sentences(p["text"])
        body = [f"# {title}", ""]
        if len(sents) >= 4:
            half = len(sents) // 2
            body += ["## Background", "", " ".join(sents[:half]), ""]
            body += ["## Findings", "", " ".join(sents[half:]), ""]
        else:
            body += [" ".join(sents), ""]
        if len(papers) > 2:
            a, b = [paper_paths[j] for j in rng.sample(range(len(papers)), 3) if j != i][:2]
            body += [
                "## See also",
                "",
                f"- [[{a.stem}]]",
                f"- [a related study]({os.path.relpath(b, rel.parent)})",
                "",
            ]
        front = [
            "---",
            f"title: {json.dumps(title)}",
            f"tags: [paper, {rel.parent.name}]",
            "---",
            "",
        ]
        _write(dest / rel, "\n".join(front + body))
    for g, rel in zip(guides[:n_docs], doc_paths, strict=True):
        _write(dest / rel, g.read_text(encoding="utf-8"))
    day0 = 20_000  # days since 1970: 2024-10-04
    for k in range(n_journal):
        date = time.strftime("%Y-%m-%d", time.gmtime((day0 + k // 3) * 86400))
        rel = Path("journal") / date[:4] / date[5:7] / f"{date}-{k % 3 + 1}.md"
        lines = [
            "---",
            f"date: {date}",
            "tags: [journal]",
            "---",
            "",
            f"# {date} note {k % 3 + 1}",
            "",
        ]
        if claims and paper_paths:
            target = paper_paths[rng.randrange(len(paper_paths))]
            lines += [
                "## Reading",
                "",
                f"{claims[k % len(claims)]} See [the paper]({os.path.relpath(target, rel.parent)}).",
                "",
            ]
        if questions and doc_paths:
            guide = doc_paths[rng.randrange(len(doc_paths))]
            lines += [
                "## Question",
                "",
                f"{questions[k % len(questions)]} Notes in [[{guide.stem}]].",
                "",
            ]
        _write(dest / rel, "\n".join(lines))
    meta = {
        "files": n_files,
        "seed": SEED,
        "papers": n_papers,
        "docs": n_docs,
        "journal": n_journal,
    }
    marker.write_text(json.dumps(meta))
    return meta


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# -- the measurement -----------------------------------------------------------------


def _tree_rss_mb(pid: int) -> float | None:
    try:
        import psutil

        p = psutil.Process(pid)
        return sum(q.memory_info().rss for q in [p, *p.children(recursive=True)]) / 2**20
    except Exception:
        return None


def _open_pending(index: Path, rels: list[str]) -> int | None:
    """Chunks of these files without a vector (any model), read-only; None before they are indexed."""
    return survey.waiting(index, paths=rels)


def _vectors(index: Path) -> int | None:
    """Vectors in the index (any model), read-only."""
    return survey.vector_count(index)


def _say(what: str, value: object) -> None:
    """A milestone as it is reached (a run cut short keeps what it saw)."""
    print(
        f"  {time.strftime('%H:%M:%S')} {what} {value} (load {os.getloadavg()[0]:.1f})",
        file=sys.stderr,
        flush=True,
    )


def _finds(srv: LspProcess, query: str, rel: str) -> bool:
    res, _ = srv.request("mdseek/search", {"query": query, "limit": 10}, timeout=300)
    results = res.get("results", []) if isinstance(res, dict) else []
    return any(r.get("path") == rel for r in results)


def run_server(
    root: Path, index: Path, open_rels: list[str], save_rel: str | None, timeout: float
) -> dict:
    """One server start over ``root``: the times above, until every vector is made."""
    cmd, _ = mdseek_server()
    if cmd is None:
        raise SystemExit("mdseek's language server is not installed")
    srv = LspProcess(cmd, root, _common_handlers(root))
    t0 = srv.t_start
    out: dict = {"vectors_at_start": _vectors(index) or 0}
    peak = 0.0
    loads: list[float] = []
    last_say = 0.0
    try:
        _initialize(srv, root, {"indexPath": str(index)})
        out["initialize_s"] = round(time.perf_counter() - t0, 2)
        for rel in open_rels:
            p = root / rel
            srv.notify(
                "textDocument/didOpen",
                {
                    "textDocument": {
                        "uri": p.as_uri(),
                        "languageId": "markdown",
                        "version": 1,
                        "text": p.read_text(),
                    }
                },
            )
        probe_rel = open_rels[0]
        probe = _probe_word(root / probe_rel)
        saved_at = None
        marker = "zyxwvutsrq" + str(os.getpid())
        deadline = t0 + timeout
        status: dict = {}
        embedded_first: tuple[float, int] | None = None
        while time.perf_counter() < deadline:
            now = time.perf_counter() - t0
            rss = _tree_rss_mb(srv.proc.pid)
            peak = max(peak, rss or 0.0)
            status, _ = srv.request("mdseek/status", {}, timeout=300)
            loads.append(os.getloadavg()[0])
            if now - last_say >= 60:
                last_say = now
                _say(
                    f"{now:.0f}s: state {status.get('state')}, embedded"
                    f" {status.get('embedded_total')}, pending",
                    f"{status.get('pending_embeds')}, peak RSS {peak:.0f} MB",
                )
            if "first_lexical_s" not in out and _finds(srv, probe, probe_rel):
                out["first_lexical_s"] = round(now, 2)
                _say("first_lexical_s", out["first_lexical_s"])
                if save_rel:
                    p = root / save_rel
                    p.write_text(
                        p.read_text() + f"\n\n## Saved later\n\nThe word {marker} is new.\n"
                    )
                    srv.notify("textDocument/didSave", {"textDocument": {"uri": p.as_uri()}})
                    saved_at = time.perf_counter()
            if (
                saved_at is not None
                and "save_searchable_s" not in out
                and _finds(srv, marker, save_rel or "")
            ):
                out["save_searchable_s"] = round(time.perf_counter() - saved_at, 2)
                _say("save_searchable_s", out["save_searchable_s"])
            if "open_files_dense_s" not in out and _open_pending(index, open_rels) == 0:
                out["open_files_dense_s"] = round(now, 2)
                _say("open_files_dense_s", out["open_files_dense_s"])
            emb = int(status.get("embedded_total", 0) or 0)
            if embedded_first is None and emb > 0:
                embedded_first = (now, emb)
            if (
                status.get("state") == "ready"
                and status.get("pending_embeds") == 0
                and "first_lexical_s" in out
            ):
                out["all_vectors_s"] = round(now, 2)
                if (
                    embedded_first is not None
                    and emb > embedded_first[1]
                    and now > embedded_first[0]
                ):
                    out["chunks_per_s"] = round(
                        (emb - embedded_first[1]) / (now - embedded_first[0]), 1
                    )
                break
            time.sleep(POLL)
        else:
            out["timed_out_after_s"] = timeout
            now = time.perf_counter() - t0
            emb = int(status.get("embedded_total", 0) or 0)
            if embedded_first is not None and emb > embedded_first[1]:
                out["chunks_per_s"] = round(
                    (emb - embedded_first[1]) / (now - embedded_first[0]), 1
                )
        out["embedded"] = int(status.get("embedded_total", 0) or 0)
        out["files"] = status.get("files")
        out["chunks"] = status.get("chunks")
        out["pending_embeds"] = status.get("pending_embeds")
        out["peak_rss_mb"] = round(peak, 1)
        if loads:
            out["load_average"] = {
                "min": round(min(loads), 1),
                "median": round(sorted(loads)[len(loads) // 2], 1),
                "max": round(max(loads), 1),
            }
    finally:
        srv.close()
    out["vectors_at_end"] = _vectors(index) or 0
    return out


def _probe_word(path: Path) -> str:
    """The note's title (a paper's title names it among the first results)."""
    m = re.search(r"^# (.+)$", path.read_text(encoding="utf-8"), re.M)
    return m.group(1) if m else path.stem


def synthetic_vectors(index: Path, dest: Path) -> int:
    """A vectors file for every text of ``index`` (made by a run cut short: its
    chunks are all there, its vectors not), of the default model's id, holding
    random unit vectors. Seeding from it costs what seeding from CI's real file
    costs (the import reads, checks and writes every vector alike; values do
    not matter), so it times a team's first index when the full embed cannot
    be waited for. It ranks nothing: never use it for quality."""
    import numpy as np

    from mdseek.index.model.model import model_id, resolve_model
    from mdseek.index.store.vectors_file import FORMAT

    hashes = survey.text_hashes(index)
    v = np.random.default_rng(SEED).standard_normal((len(hashes), 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    with open(dest, "wb") as fh:
        np.savez_compressed(
            fh, format=np.array(FORMAT), model=np.array(model_id(resolve_model(None))),
            hashes=np.array(hashes, dtype="S64"), vectors=v,
        )  # fmt: skip
    return len(hashes)


def seeded_index(vault: Path, index: Path, vectors: Path) -> dict:
    """``mdseek index VAULT --db INDEX --vectors FILE`` on an empty index: wall
    time to every chunk having a vector, peak RSS, what it took and embedded."""
    import subprocess

    cmd = [sys.executable, "-m", "mdseek", "index", str(vault), "--db", str(index)]
    cmd += ["--vectors", str(vectors), "--json", "--no-progress"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_mb(proc.pid) or 0.0)
        time.sleep(0.1)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"mdseek index failed ({proc.returncode}): {err.strip()[-500:]}")
    rep = json.loads(out)
    res = {
        "fully_searchable_s": round(wall, 1),
        "peak_rss_mb": round(peak, 1),
        "vectors_taken": rep.get("vectors_taken"),
        "embedded": rep.get("embedded"),
        "chunks": rep.get("chunks"),
        "files": rep.get("files"),
        "index_mb": _size_mb(index),
        "load_average_end": round(os.getloadavg()[0], 1),
    }
    _say("seeded index", res)
    return res


def token_count_memory(index: Path) -> dict:
    """What counting the tokens of every chunk text of ``index`` at once costs
    (the first embed of a vault orders its whole queue by token count): peak
    RSS of this process over its RSS before, and the seconds."""
    import resource

    from mdseek.index.model.embed import Embedder

    texts = survey.embedding_texts(index, distinct=False)
    enc = Embedder().load()
    before = _tree_rss_mb(os.getpid()) or 0.0
    t0 = time.perf_counter()
    total = sum(enc.token_counts(texts))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {
        "texts": len(texts),
        "tokens": total,
        "rss_before_mb": round(before),
        "peak_rss_mb": round(peak),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _size_mb(index: Path) -> float:
    return round(
        sum(p.stat().st_size for p in index.parent.glob(index.name + "*") if p.is_file()) / 2**20, 1
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.bigvault", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument(
        "--work", required=True, type=Path, help="folder for the vault and its index (kept)"
    )
    ap.add_argument("--files", type=int, default=10_000, help="notes in the vault (default 10000)")
    ap.add_argument(
        "--timeout", type=float, default=4 * 3600, help="seconds to wait for all vectors"
    )
    ap.add_argument(
        "--restart-timeout",
        type=float,
        default=None,
        help="seconds for the restart (default: --timeout)",
    )
    ap.add_argument(
        "--seed-vectors",
        type=Path,
        metavar="FILE",
        help="instead of the editor's first open: `mdseek index --vectors FILE` on an empty"
        " index, then the restart",
    )
    ap.add_argument(
        "--synthetic-vectors",
        type=Path,
        metavar="FILE",
        help="write FILE (random unit vectors for every text of the existing index, for"
        " timing --seed-vectors only) and stop",
    )
    ap.add_argument(
        "--token-count-memory",
        action="store_true",
        help="only: peak RSS of counting the tokens of every chunk of the existing index at once",
    )
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    data = data_dir()
    if data is None:
        raise DataMissing(f"benchmark data not found at {where_data_should_be()}")
    work = args.work.resolve()
    vault = work / f"vault-{args.files}"
    meta = make_vault(data, vault, args.files)
    index = work / f"index-{args.files}" / "index.sqlite"
    if args.token_count_memory:
        print(json.dumps(token_count_memory(index)))
        return 0
    if args.synthetic_vectors:
        n = synthetic_vectors(index, args.synthetic_vectors)
        print(f"wrote {n} random unit vectors to {args.synthetic_vectors}", file=sys.stderr)
        return 0
    if args.seed_vectors:
        index = work / f"index-{args.files}-seeded" / "index.sqlite"
    if index.parent.exists():
        for p in index.parent.iterdir():
            p.unlink()
    index.parent.mkdir(parents=True, exist_ok=True)
    rels = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    rng = random.Random(SEED + 1)
    journal = [r for r in rels if r.startswith("journal/")]
    papers = [r for r in rels if r.startswith("papers/")]
    open_rels = [rng.choice(papers), rng.choice(journal), rng.choice(papers)]
    save_rel = rng.choice(journal)
    print(f"vault {vault}: {meta}", file=sys.stderr)
    if args.seed_vectors:
        first = seeded_index(vault, index, args.seed_vectors.resolve())
    else:
        first = run_server(vault, index, open_rels, save_rel, args.timeout)
    first["index_mb"] = _size_mb(index)
    print(f"first open: {first}", file=sys.stderr)
    again = run_server(vault, index, open_rels, None, args.restart_timeout or args.timeout)
    again["index_mb"] = _size_mb(index)
    print(f"restart:    {again}", file=sys.stderr)
    res = {"vault": meta, "open_files": open_rels, "first_open": first, "restart": again}
    return emit(res, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
