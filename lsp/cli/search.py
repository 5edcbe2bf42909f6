"""``mdseek search``: index if needed, then search and print the answer (text,
``--json`` or ``--explain``).

Owns: the search command's checks (:mod:`mdseek.index.search.requests`, as MCP and the
language server) and output. Imports :mod:`.common` and :mod:`.progress`.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import threading
from typing import TYPE_CHECKING

from mdseek.index.api import Mode, is_damage, requests

from .common import CliError, UsageError, folder_for, load_reranker, shown
from .progress import Progress

if TYPE_CHECKING:
    from mdseek.index.api import Folder


def cmd_search(args: argparse.Namespace) -> int:
    try:  # the same checks and words as MCP and the language server
        request = requests.SearchRequest.make(
            requests.check_query(args.query),
            limit=requests.check_limit(args.limit),
            mode=requests.check_mode(args.mode),
            paths=requests.check_globs(args.path),
            explain=args.explain,
            filter=requests.check_filter(args.tag, args.where),
        )
    except requests.BadRequest as exc:
        raise UsageError(str(exc)) from None
    if args.section is not None and not args.explain:
        raise UsageError("--section PATH:LINE goes with --explain")
    loading: list[threading.Thread] = []
    folder = None
    try:
        if request.mode != Mode.LEXICAL and not args.model:
            from mdseek.index.api import warm_default_session

            loading.append(
                warm_default_session(args.backend, args.threads, args.precision)
            )  # opens while the index does
        # No quick_check on open (0.5-1.7 s at 100k chunks, every search): damage
        # met on the way says how to recover instead.
        folder = folder_for(args, check_index=False, shapes=False)
        if request.mode != Mode.LEXICAL:
            loading.append(folder.preload_model())  # the model opens while the index is reconciled
        return _search(args, folder, request)
    except sqlite3.DatabaseError as exc:
        if folder is None or not is_damage(exc):
            raise
        raise CliError(
            f"the index {shown(folder.index_path or '')} is damaged ({exc});"
            f" `mdseek index {shown(folder.path)}` sets it aside and builds a new one"
        ) from None
    finally:
        # A model still opening in native code must not meet the interpreter's
        # exit (an error before the search: onnxruntime aborts the process).
        for t in loading:
            t.join()


def _search(args: argparse.Namespace, folder: Folder, request: requests.SearchRequest) -> int:
    from mdseek.index.api import search_folders

    index_now(args, folder)
    folder.use_reranker(load_reranker(args))
    answer = search_folders(request, [folder])
    results = [r for _, r in answer.hits]
    where = _where(args, folder) if args.section else None
    if args.highlight:
        for r in results:
            r.snippet = answer.marked(r.snippet)
    if args.json:
        out = {
            "mode": answer.mode,
            "complete": answer.complete,
            "note": answer.note,
            "results": [json_result(folder, r) for r in results],
        }
        if where is not None:
            out["section"] = where
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    for note in dict.fromkeys(answer.notes):
        print(f"note: {note}", file=sys.stderr)
    if not results:
        print("no matching sections")
    if args.explain and results:
        print(_explain_terms(results[0].explain or {}))
    for n, r in enumerate(results, 1):
        ranks = f"lexical #{r.lexical_rank or '-'}, dense #{r.dense_rank or '-'}"
        print(f"{n:2}. {r.breadcrumb}")
        print(f"    {shown(folder.path / r.path)}:{r.lines()[0]}  score {r.score:.4f} ({ranks})")
        if r.explain:
            print(f"    {_explain_line(r.explain)}")
        if r.snippet:
            print(f"    {r.snippet}")
    if where is not None:
        print(_where_lines(where))
    return 0


def index_now(args: argparse.Namespace, folder: Folder):
    """The folder indexed in one go behind a progress bar (search, related)."""
    bar = Progress(not args.no_progress and not args.json, what=f"indexing {shown(folder.path)}")
    try:
        return folder.index_now(progress=bar)
    finally:
        bar.close()


def _where(args: argparse.Namespace, folder: Folder) -> dict:
    """``--section PATH:LINE``: where that section ranked (:meth:`Folder.where_ranked`)."""
    from pathlib import Path

    from mdseek.index.text.files import relpath

    path, sep, line = args.section.rpartition(":")
    if not sep or not line.isdigit() or int(line) < 1 or not path:
        raise UsageError(f"--section must be PATH:LINE, e.g. notes/a.md:12 (got {args.section!r})")
    p = Path(path)
    root = folder.path
    full = (p if p.is_absolute() else Path.cwd() / p).resolve()
    if not full.is_file() and not p.is_absolute():
        full = (root / p).resolve()  # a path relative to the folder
    if not full.is_relative_to(root):
        raise UsageError(f"--section: {path} is not in {shown(root)}")
    where = folder.where_ranked(args.query, relpath(root, full), int(line))
    if where is None:
        raise CliError(f"--section: {path} is not indexed")
    return where


def _where_lines(w: dict) -> str:
    sec = w["section"]
    out = [f"where {sec['path']}:{sec['line']} ranked ({sec['breadcrumb'] or 'no section there'}):"]
    names = {
        Mode.HYBRID: "shown (hybrid)",
        Mode.LEXICAL: "keywords (BM25)",
        Mode.DENSE: "meaning (cosine)",
    }
    for mode in Mode:
        p = w.get(mode)
        if p is None:
            continue
        key, mine = ("best", "score") if mode == Mode.HYBRID else ("best_raw", "raw")
        best = "" if p[key] is None else f"; the top one {p[key]:.4g}"
        if p["rank"] is None:
            out.append(f"  {names[mode]}: not among its {p['of']} sections{best}")
            continue
        score = "-" if p[mine] is None else f"{p[mine]:.4g}"
        line = f"  {names[mode]}: #{p['rank']} of {p['of']}, {score}{best}"
        if mode == Mode.HYBRID and p["explain"]:
            line += f"\n    {_explain_line(p['explain'])}"
        out.append(line)
    out.append(f"  why: {w['why']}")
    return "\n".join(out)


def json_result(folder: Folder, r) -> dict:
    """One result of ``search --json``: lines 1-based and inclusive, the heading
    as written (and as plain text), as MCP has them (:meth:`SearchResult.as_json`)."""
    return r.as_json(folder.heading_as_written(r))


def _explain_terms(ex: dict) -> str:
    terms = ex.get("query_terms")
    if terms is None:
        return "query terms: (no lexical search)"
    dropped = ex.get("dropped_terms") or {}
    out = "query terms: " + (", ".join(terms) or "(none)")
    if dropped:
        out += "; left out: " + ", ".join(f"{w} ({why})" for w, why in dropped.items())
    return out


def _explain_line(ex: dict) -> str:
    """One line: each retriever's raw -> normalised score and weight, the section
    score, the document term and the final score."""
    parts = []
    weights = ex.get("weights", {})
    for name in (Mode.LEXICAL, Mode.DENSE):  # the retrievers, named as their modes
        p = ex.get(name)
        if not p:
            continue
        raw = "-" if p.get("raw") is None else f"{p['raw']:.4g}"
        if ex.get("fusion") == "convex":
            norm = p.get("normalised")
            norm_s = "0" if norm is None else f"{norm:.3f}"
            parts.append(f"{name} {raw} -> {norm_s} x{weights.get(name, 0):g}")
        else:
            parts.append(f"{name} {raw} (#{p.get('rank') or '-'})")
    dw = ex.get("document_weight", 0)
    fusion = (
        "" if ex.get("fusion") == "convex" else f" [{ex.get('fusion')}, k={weights.get('rrf_k')}]"
    )
    rr = ex.get("rerank")
    rerank = ""
    if rr:
        score = "-" if rr.get("score") is None else f"{rr['score']:.4f}"
        rerank = f"; rerank {score} (reranker {rr.get('ms')} ms)"
    return (
        f"why: {' + '.join(parts) or 'no scores'}{fusion} = section {ex.get('section', 0):.3f};"
        f" document {ex.get('document', 0):.3f} x{dw:g}; final {ex.get('final', 0):.3f}{rerank}"
    )
