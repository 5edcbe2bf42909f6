"""``mdseek index``, ``mdseek status`` and ``mdseek prune``: build an index
(taking and writing team vectors files: ``--vectors``, ``--export-vectors``),
say what it holds, remove the ones whose folder is gone.

Owns: these commands' output. Imports :mod:`.common` and :mod:`.progress`.
"""

from __future__ import annotations

import argparse
import json
import sys

from mdseek.index.text.files import display_path

from .common import CliError, folder_for, shown
from .progress import Progress


def cmd_index(args: argparse.Namespace) -> int:
    from mdseek.index.api import VectorsFileError

    folder = folder_for(args)
    bar = Progress(not args.no_progress and not args.json, what=f"indexing {shown(folder.path)}")
    try:
        try:  # vectors of the other precision: moved now, once
            rep = folder.index_now(progress=bar, vectors=args.vectors, move=True)
        except VectorsFileError as exc:
            raise CliError(str(exc)) from None
        if args.export_vectors:
            n = folder.export_vectors(args.export_vectors)
            print(f"mdseek: wrote {n} vectors to {shown(args.export_vectors)}", file=sys.stderr)
    finally:
        bar.close()
    if rep.precision_from_vectors:  # the file's precision, not the default (Engine.seed_vectors)
        other = "int8" if rep.precision_from_vectors == "fp32" else "fp32"
        print(
            f"mdseek: this index keeps {rep.precision_from_vectors} vectors, the precision of"
            f" {shown(args.vectors)} (--precision {other} to re-embed instead)",
            file=sys.stderr,
        )
    if args.vectors and not args.json:
        print(
            f"mdseek: took {rep.vectors_taken} vectors from {shown(args.vectors)}", file=sys.stderr
        )
    if args.json:
        out = rep.to_dict()
        for key in ("skipped", "errors"):
            out[key] = [(display_path(rel), why) for rel, why in out[key]]
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        erate = rep.embedded / rep.embed_seconds if rep.embed_seconds >= 0.5 else None
        load = folder.model_load_seconds
        detail = []
        if erate:
            detail.append(f"embedding {erate:.0f} texts/s")
        if rep.embedded and load:
            detail.append(f"model load {load:.1f}s")
        passages = rep.embedded_passages
        print(
            f"{rep.files} files: {rep.indexed} indexed, {rep.unchanged} unchanged, "
            f"{rep.removed} removed, {len(rep.skipped)} skipped, {len(rep.ignored)} ignored; {rep.chunks} chunks in the index "
            f"({rep.chunks_written} new or changed); {rep.embedded} vectors made "
            f"({rep.embedded - passages} for chunks, {passages} for passages) in {rep.seconds:.1f}s"
            + (f" ({'; '.join(detail)})" if detail else "")
        )
        print(f"index: {shown(folder.index_path or '')}")
        for rel, why in rep.skipped:
            print(f"  skipped {shown(folder.path / rel)}: {why}", file=sys.stderr)
        # Files that failed were each logged on one line (path and reason).
        if rep.lexical_only_reason:
            print(f"warning: {rep.lexical_only_reason}; lexical search only", file=sys.stderr)
    return 0


def _human(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, dict):
        return ", ".join(f"{k} {n}" for k, n in v.items()) or "-"
    return str(v)


def cmd_status(args: argparse.Namespace) -> int:
    folder = folder_for(args, need_files=False, shapes=False)
    st = folder.status(own=False).as_json()
    if args.json:
        print(json.dumps(st, indent=2))
        return 0
    labels = {
        "root": "folder",
        "index_path": "index file",
        "model": "model",
        "model_loaded": "model loaded",
        "model_error": "model error",
        "window": "model window (tokens)",
        "pending_embeds": "texts waiting for a vector",  # chunks and passages
    }
    rows = []
    skipped = st.pop("skipped", [])
    for k, v in st.items():
        if k in ("root", "index_path"):
            v = shown(v)
        if k == "model_error" and not v:
            continue
        rows.append((labels.get(k, k.replace("_", " ")), _human(v)))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k + ':':<{width + 1}} {v}")
    if skipped:
        print(f"skipped, not text ({len(skipped)}):")
        for x in skipped:
            print(f"  {display_path(x['path'])}: {x['why']}")
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    from mdseek.index.api import prune

    if not args.days >= 0:  # NaN too
        raise CliError(f"--days must be a number of days, 0 or more (got {args.days:g})")
    verdicts = prune(days=args.days, dry_run=args.dry_run)
    gone = "would remove" if args.dry_run else "removed"
    for v in verdicts:
        print(
            f"{gone if v.remove else 'kept'} {v.index.folder} ({v.index.size / 1e6:.1f} MB): {v.why}"
        )
    removed = [v for v in verdicts if v.remove]
    size = sum(v.index.size for v in removed) / 1e6
    print(
        f"{gone} {len(removed)} index{'' if len(removed) == 1 else 'es'} ({size:.1f} MB); "
        f"kept {len(verdicts) - len(removed)}" + (" (dry run)" if args.dry_run else "")
    )
    return 0
