"""Deliberate breakages (mutants), each applied alone to a temporary copy of
the checkout, with the tests that must catch it run there: a review's "would
the tests notice?" as one command.

    .venv/bin/python scripts/mutants.py                # every mutant
    .venv/bin/python scripts/mutants.py NAME [NAME...] # some of them
    .venv/bin/python scripts/mutants.py --list         # their names and files

For each mutant: the copy gets the mutant's file with its ``old`` text
(exactly once in the file) replaced by ``new``, then its tests run there
(``pytest -x``; the copy's code first on PYTHONPATH, so the tests and every
process they start run the mutated code, not this checkout's). A failing test
(pytest's exit status 1, which includes the session's check that nothing was
written into a user cache) is *caught*; all passing is *missed*. First the
named tests run once on the unmutated copy (``--no-baseline`` skips it): a
test failing there would "catch" anything.

Exit status 0 when every mutant was caught; 1 when one was missed, its old
text is no longer in its file (the code moved: update the mutant), or a run
ended otherwise (a collection error, a timeout). Each mutant's ``old`` text is
kept short so edits nearby leave it alone.

Add a mutant to :data:`MUTANTS` with the test written to catch it (the test's
docstring names the mutant). docs/development.md has the recipe.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str  # relative to the checkout
    old: str  # exactly once in ``file``
    new: str
    tests: tuple[str, ...]  # pytest node ids (or files) that must fail
    what: str  # the breakage, in words


T_PASSAGES = "tests/test_passages.py::"
DISCOUNT = T_PASSAGES + "test_a_passage_row_scores_its_chunk_at_its_cosine_less_the_discount"
SLICE = "self._queue.embed(None, rep, set(take), emb=mover)"
MCP_ERROR = "tests/test_mcp.py::test_a_tools_own_error_is_exactly_mdseeks_line"

MUTANTS = [
    # -- the five of issue 46, each with the test written for it
    Mutant(
        "move-sweeps-each-slice",
        "index/engine/precision_move.py",
        SLICE,
        SLICE + "\n            self._vectors.sweep_vectors(mover.model_id)",
        (
            "tests/test_precision_default.py::"
            "test_after_slice_one_of_several_every_fp32_vector_is_still_there",
        ),
        "the precision move sweeps the old vectors after every slice, not at the switch",
    ),
    Mutant(
        "prune-ignores-the-lock",
        "index/store/prune.py",
        'raise IndexLocationError(f"{index.folder} is in use") from None',
        "pass",
        ("tests/test_trust.py::test_remove_cached_leaves_an_index_another_process_holds",),
        "remove_cached deletes an index another process holds",
    ),
    Mutant(
        "bulk-on-every-thread",
        "index/model/embed.py",
        "in_background(run, n, ",
        "in_background(run, os.cpu_count() or n, ",
        ("tests/test_demand.py::test_each_bulk_batch_runs_on_a_session_of_the_threads_it_records",),
        "a bulk batch records one thread but runs on the all-threads session",
    ),
    Mutant(
        "mcp-keeps-the-sdk-prefix",
        "lsp/mcp/args.py",
        "raise ToolError(str(exc.__cause__)) from exc.__cause__",
        "raise",
        (MCP_ERROR,),
        "a tool's own error keeps \"Error executing tool NAME: \" before mdseek's line",
    ),
    Mutant(
        "passage-bonus-in-best-rows",
        "index/search/dense.py",
        "sims = sims - self.passage_discount",
        "sims = sims + self.passage_discount",
        (DISCOUNT,),
        "best_rows adds the passage discount instead of subtracting it",
    ),
    Mutant(
        "passage-bonus-in-search",
        "index/search/dense.py",
        "scores = scores - self.passage_discount",
        "scores = scores + self.passage_discount",
        (DISCOUNT,),
        "search adds the passage discount instead of subtracting it",
    ),
    Mutant(
        "mcp-server-without-the-test-env",
        "tests/test_mcp.py",
        "env=server_env(),  # the SDK",
        'env={"HF_HUB_OFFLINE": "1"},  # the SDK',
        (MCP_ERROR,),
        "the MCP server started without the test's caches (it writes into the user cache)",
    ),
    # -- other kinds: passages, adoption, rename confinement, fusion, architecture
    Mutant(
        "no-passages",
        "index/text/passages.py",
        "    if not want:\n        return ()",
        "    if want:\n        return ()",
        (T_PASSAGES + "test_each_paragraph_of_a_long_section_is_a_passage",),
        "no chunk gets passages",
    ),
    Mutant(
        "adopt-without-reading-again",
        "index/store/adopt.py",
        "old = None if made_here(loc.path) else _set_aside(loc.path)",
        "old = None",
        (
            "tests/test_trust.py::"
            "test_an_index_planted_in_an_archive_is_read_again_and_only_its_true_vectors_kept",
        ),
        "a workspace index made elsewhere is used as it is",
    ),
    Mutant(
        "rename-out-of-the-workspace",
        "lsp/server/rename.py",
        "if ws.root_for(real) is None:",
        "if False:",
        (
            "tests/test_trust_lsp.py::"
            "test_rename_never_moves_a_file_out_of_the_workspace_through_a_symlink",
        ),
        "a rename's edits and moves are not confined to the workspace folders",
    ),
    Mutant(
        "fusion-weights-swapped",
        "index/search/retrieve.py",
        'return {"dense": w, "lexical": 1.0 - w}',
        'return {"dense": 1.0 - w, "lexical": w}',
        (T_PASSAGES + "test_the_keyword_weight_grows_with_the_match",),
        "the convex fusion gives the keyword side the dense side's weight",
    ),
    Mutant(
        "store-imports-engine",
        "index/store/prune.py",
        "MISSING_DAYS = 30",
        "from ..engine import report as _upward  # noqa: E402, F401\nMISSING_DAYS = 30",
        ("tests/test_architecture.py::test_each_folder_of_the_engine_imports_only_below_it",),
        "store/ imports from engine/, a folder above it",
    ),
]


def copy_checkout(dest: Path) -> Path:
    """The checkout's files as git sees them (tracked and new, not ignored:
    no .venv, no caches), edits included, copied to ``dest``."""
    names = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, names):
        src = REPO / name
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the work tree
        out = dest / name
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out, follow_symlinks=False)
    return dest


def code_tree(copy: Path) -> Path:
    """``mdseek`` laid out as installed, of links into the copy (first on
    PYTHONPATH: it wins over this checkout's editable install)."""
    pkg = copy / ".mutant-code" / "mdseek"
    pkg.mkdir(parents=True)
    for f in (copy / "lsp" / "_package").glob("*.py"):
        (pkg / f.name).symlink_to(f)
    (pkg / "index").symlink_to(copy / "index", target_is_directory=True)
    (pkg / "lsp").symlink_to(copy / "lsp", target_is_directory=True)
    return pkg.parent


def copy_env(copy: Path, code: Path) -> dict[str, str]:
    """This environment with the copy's code first on PYTHONPATH, checked: a
    process started with it imports ``mdseek.index`` from the copy."""
    env = dict(os.environ)
    env.pop("MDSEEK_TEST_SANDBOX", None)  # a run from inside a test session: its own sandbox
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(code), *rest])
    probe = "import os, mdseek.index as m; print(os.path.realpath(m.__file__))"
    got = subprocess.run(
        [sys.executable, "-c", probe], env=env, cwd=copy, capture_output=True, text=True
    ).stdout.strip()
    if not Path(got).is_relative_to(copy.resolve()):
        raise SystemExit(f"mutants: the copy's code is not what runs there ({got})")
    return env


def run_tests(copy: Path, code: Path, tests: tuple[str, ...], timeout: float) -> tuple[int, str]:
    """pytest's exit status and its last lines, the tests run in ``copy``."""
    env = copy_env(copy, code)
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    try:
        run = subprocess.run(
            cmd, cwd=copy, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {timeout:.0f} s"
    lines = [ln for ln in run.stdout.splitlines() if ln.strip()]
    leaked = ["written outside the sandbox"] if "outside the sandbox" in run.stdout else []
    tail = leaked + lines[-1:]
    return run.returncode, " | ".join(tail)


def apply(copy: Path, m: Mutant) -> str | None:
    """Put the mutant in the copy; why not, if it cannot be (its old text moved)."""
    path = copy / m.file
    text = path.read_text()
    n = text.count(m.old)
    if n != 1:
        return f"its old text is in {m.file} {n} times, not once: update the mutant"
    path.write_text(text.replace(m.old, m.new))
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="mutants to run (default: all)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per pytest run")
    args = ap.parse_args(argv)
    by_name = {m.name: m for m in MUTANTS}
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:32} {m.file}: {m.what}")
        return 0
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        ap.error(f"no mutant named {', '.join(unknown)} (--list shows them)")
    chosen = [by_name[n] for n in args.names] if args.names else MUTANTS
    work = Path(tempfile.mkdtemp(prefix="mdseek-mutants-"))
    bad = 0
    try:
        clean = copy_checkout(work / "clean")
        if not args.no_baseline:
            tests = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
            t0 = time.monotonic()
            code, tail = run_tests(clean, code_tree(clean), tests, args.timeout)
            print(f"baseline  {len(tests)} tests, unmutated: exit {code} ({tail}) "
                  f"{time.monotonic() - t0:.0f} s", flush=True)  # fmt: skip
            if code != 0:
                print("the tests fail without a mutant: fix them first")
                return 1
        for m in chosen:
            copy = work / m.name
            shutil.copytree(
                clean, copy, symlinks=True, ignore=shutil.ignore_patterns(".mutant-code")
            )
            why = apply(copy, m)
            if why:
                print(f"STALE     {m.name}: {why}", flush=True)
                bad += 1
                continue
            t0 = time.monotonic()
            code, tail = run_tests(copy, code_tree(copy), m.tests, args.timeout)
            verdict = {0: "MISSED", 1: "caught"}.get(code, "ERROR")
            bad += verdict != "caught"
            print(f"{verdict:9} {m.name} ({m.what}): exit {code}, {tail} "
                  f"[{time.monotonic() - t0:.0f} s]", flush=True)  # fmt: skip
            shutil.rmtree(copy, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(chosen) - bad} of {len(chosen)} mutants caught")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
