#!/usr/bin/env python3
"""Move mdseek's flat ``index/*.py`` into folders by job (issue 31), in one go.

Run at the root of a clean checkout (commit or stash first; the script refuses
a dirty tree and an index/ already laid out):

    python /work/notes/relayout.py --dry-run   # the plan; changes nothing
    python /work/notes/relayout.py             # git mv + import rewrites + __init__s
    .venv/bin/ruff check . && .venv/bin/mypy index lsp && .venv/bin/python -m pytest -q -n 2

What it does:
1. every ``index/<old>.py`` named in :data:`MOVES` is ``git mv``-ed to
   ``index/<folder>/<new>.py``; a module of index/ missing from the table stops
   the script before anything changes (add it to MOVES, or to STAY);
2. imports are rewritten in index/, lsp/, benchmarks/, tests/, scripts/:
   relative ones inside index/ (``from .x import``, ``from . import x``) recomputed
   from the module's new place, ``from mdseek.index import x`` split per module,
   and every text ``mdseek.index.<old>`` (absolute imports, ``mock.patch`` and
   ``monkeypatch.setattr`` strings, ``-m`` arguments, logger names, docstrings)
   and every path ``index/<old>.py`` (comments, docs) -- also in .ci/setup,
   README.md, docs/, benchmarks/README.md, the VS Code client's sources;
   the lazy names of ``index/__init__.py`` (``".engine"``, ``".files"``) too;
3. each new folder gets an ``__init__.py`` whose docstring says what it owns and
   what it must never import (:data:`FOLDERS`);
4. pyproject's ``packages`` lists the new subpackages;
5. ruff sorts the imports of the files it touched and formats them.
ARCHITECTURE.md (already written for this layout) is not rewritten.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

# -- the mapping: edit here ----------------------------------------------------------
# old module of index/ -> "folder.new_name". A module created since (say, by the
# composition of Engine and Store) is reported and stops the run: add a line.
MOVES: dict[str, str] = {
    # store/: the SQLite index file and what lives beside it
    "store": "store.store",
    "store_file": "store.file",
    "store_reads": "store.reads",
    "store_writes": "store.writes",
    "store_lexical": "store.fts",
    "store_vectors": "store.vectors",
    "location": "store.location",
    "adopt": "store.adopt",
    "prune": "store.prune",
    "vectors_file": "store.vectors_file",
    # model/: which model, its files, and turning texts into vectors
    "model": "model.model",
    "packaged": "model.packaged",
    "onnx_encoder": "model.onnx_encoder",
    "onnx_export": "model.onnx_export",
    "onnx_int8": "model.onnx_int8",
    "embed": "model.embed",
    "demand": "model.demand",
    "rerank": "model.rerank",
    "private": "model.private",
    # text/: from a folder's files to sections and chunks
    "files": "text.files",
    "parse": "text.parse",
    "structure": "text.structure",
    "aliases": "text.aliases",
    "chunk": "text.chunk",
    "snippet": "text.snippet",
    "coverage": "text.coverage",
    # links/: links between notes and the edits that keep them whole
    "links": "links.links",
    "rename": "links.rename",
    "tags": "links.tags",
    "obsidian": "links.obsidian",
    # search/: pure ranking over a query
    "query": "search.query",
    "lexical": "search.lexical",
    "dense": "search.dense",
    "retrieve": "search.retrieve",
    "requests": "search.requests",
    # engine/: the parts put together, and what the front ends hold
    "engine": "engine.engine",
    "engine_base": "engine.base",
    "reconcile": "engine.reconcile",
    "embed_queue": "engine.embed_queue",
    "embed_lock": "engine.embed_lock",
    "precision_move": "engine.precision_move",
    "lexical_side": "engine.lexical_side",
    "dense_side": "engine.dense_side",
    "search": "engine.searcher",
    "stats": "engine.stats",
    "facade": "engine.facade",
    "folder": "engine.folder",
}
# Modules that stay at index/ top level.
STAY = {"__init__"}
# Suggested folder for a module MOVES does not name, by its name (only printed).
HINTS = [
    (r"^store_|_store$|^documents|^postings|^vectors", "store"),
    (r"^engine_|_side$|^searcher|^reconcil|^embed_queue|^parts", "engine"),
    (r"^onnx_|^embed|^model", "model"),
    (r"^parse|^chunk|^text", "text"),
    (r"^link|^rename|^tag|^alias", "links"),
    (r"^query|^lexical|^dense|^fusion|^retriev|^explain|^rank", "search"),
]

# Each folder: what it owns and what it must never import (its __init__'s docstring).
FOLDERS: dict[str, tuple[str, str]] = {
    "model": (
        "which embedding model, its files and its tokenizer; texts to vectors "
        "(ONNX Runtime, torch only to export), the int8 copy, the model wheel, "
        "threads by demand, the optional reranker.",
        "text/, store/, links/, search/, engine/ (the bottom layer: it knows "
        "nothing of markdown or of the index file).",
    ),
    "text": (
        "a folder's files as text: which files are indexed, markdown parsed into "
        "headings and sections, the nested blocks, front-matter aliases, chunks "
        "sized in the model's tokens, snippets, coverage.",
        "store/, links/, search/, engine/ (of model/ it uses the tokenizer only).",
    ),
    "store": (
        "the SQLite index file: where it lives, opening and checking it, "
        "migrations, documents and chunks, FTS5 and postings, the vector cache, "
        "an index made elsewhere set aside, pruning the user cache, a team's "
        "vectors file. A write is all or nothing.",
        "links/, search/, engine/.",
    ),
    "links": (
        "links between notes: finding and resolving them (the one resolver), the "
        "edits of a rename or move, tags, Obsidian's block ids. Pure: no file reading.",
        "store/, search/, engine/.",
    ),
    "search": (
        "ranking over a query, with no I/O: the query read once, in-memory BM25 "
        "and vectors, pooling and fusion, the score floor, explain, and what a "
        "client may ask a search for.",
        "store/, links/, engine/.",
    ),
    "engine": (
        "the parts put together: Engine (one folder, one index file, one model), "
        "the index kept in line with the files, the embedding queue and its lock, "
        "the precision move, both retrievers over the store, search; Folder and "
        "the facade, which the front ends hold.",
        "nothing of index/ is above it; like every folder here, never mdseek.lsp, "
        "pygls, lsprotocol or mcp.",
    ),
}

# Text files (besides *.py in PY_DIRS) whose `mdseek.index.x` and `index/x.py` are rewritten.
PY_DIRS = ("index", "lsp", "benchmarks", "tests", "scripts")
TEXT_FILES = (
    "README.md",
    "CONTRIBUTING.md",
    ".ci/setup",
    ".ci/run",
    "benchmarks/README.md",
)
TEXT_GLOBS = (
    "docs/**/*.md",
    "vscode-client/src/**/*.ts",
    "lsp/editors/**/*",
    "scripts/*.sh",
)
SKIP = ("ARCHITECTURE.md",)  # written for the new layout already


def run(*cmd: str, check: bool = True) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode:
        sys.exit(f"relayout: {' '.join(cmd)} failed: {r.stderr.strip()}")
    return r.stdout


def new_abs(old: str) -> str:
    return f"mdseek.index.{MOVES[old]}"


def package_of(module: str, is_package: bool) -> list[str]:
    parts = module.split(".")
    return parts if is_package else parts[:-1]


def relative(from_pkg: list[str], target: str) -> str:
    """``target`` (absolute dotted) as a relative import from package ``from_pkg``."""
    t = target.split(".")
    common = 0
    while common < min(len(from_pkg), len(t)) and from_pkg[common] == t[common]:
        common += 1
    return "." * (1 + len(from_pkg) - common) + ".".join(t[common:])


def import_lines(
    prefix_of, names: list[ast.alias], node_base: str, indent: str
) -> list[str]:
    """``from <base> import a, b`` where some names are old modules of index/:
    one statement per new place (a module's new name aliased to the old one)."""
    groups: dict[str, list[str]] = {}
    for a in names:
        if a.name in MOVES:
            new = MOVES[a.name]
            folder, _, tail = new.rpartition(".")
            where = prefix_of(f"mdseek.index.{folder}")
            bound = a.asname or a.name
            groups.setdefault(where, []).append(
                tail if tail == bound else f"{tail} as {bound}"
            )
        else:
            bound = f"{a.name} as {a.asname}" if a.asname else a.name
            groups.setdefault(node_base, []).append(bound)
    return [
        f"{indent}from {where} import {', '.join(ns)}" for where, ns in groups.items()
    ]


def rewrite_imports(path: Path, src: str, new_module: str | None, is_pkg: bool) -> str:
    """``src`` (the text of ``path``) with its import statements of index/
    modules rewritten, statement by statement; ``new_module`` is the module's
    new dotted name if it is a module of index/ (whose relative imports change)."""
    tree = ast.parse(src, str(path))
    lines = src.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []  # (first line, last line, new text), 0-based
    in_index = new_module is not None
    new_pkg = package_of(new_module, is_pkg) if new_module else []

    def prefix_of(target: str) -> str:
        return relative(new_pkg, target)

    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
        if node.level and in_index:
            if node.level != 1:
                sys.exit(
                    f"relayout: {path}:{node.lineno}: an import climbing out of index/"
                )
            if node.module:
                mod = node.module.split(".")[0]
                if mod not in MOVES:
                    sys.exit(
                        f"relayout: {path}:{node.lineno}: .{node.module} is not in MOVES"
                    )
                target = new_abs(mod) + node.module[len(mod) :]
                names = ", ".join(
                    f"{a.name} as {a.asname}" if a.asname else a.name
                    for a in node.names
                )
                text = [f"{indent}from {relative(new_pkg, target)} import {names}"]
            else:  # from . import x, y
                text = import_lines(
                    prefix_of, node.names, relative(new_pkg, "mdseek.index"), indent
                )
        elif node.level == 0 and node.module == "mdseek.index":
            if not any(a.name in MOVES for a in node.names):
                continue
            text = import_lines(lambda t: t, node.names, "mdseek.index", indent)
        else:
            continue
        edits.append((node.lineno - 1, node.end_lineno - 1, "\n".join(text) + "\n"))
    for first, last, text in sorted(edits, reverse=True):
        tail = lines[last][len(lines[last].rstrip("\n")) :]
        lines[first : last + 1] = [text if tail else text.rstrip("\n")]
    out = "".join(lines)
    if path.as_posix().endswith(
        "index/__init__.py"
    ):  # the lazy names: ".engine", ".files"
        out = re.sub(
            r"([\"'])\.(\w+)\1",
            lambda m: f"{m[1]}.{MOVES[m[2]]}{m[1]}" if m[2] in MOVES else m[0],
            out,
        )
    return out


DOTTED = re.compile(r"\bmdseek\.index\.(\w+)\b")
PATHS = re.compile(r"(?<![\w/.])index/(\w+)\.py\b")


# Bare file names in prose ("`store_file.py`", a docstring's table) for the
# modules whose name changes and is unmistakable: written as folder/new.py.
RENAMED = {o: n for o, n in MOVES.items() if "_" in o and o != n.rpartition(".")[2]}
BARE = re.compile(r"(?<![\w/.])(" + "|".join(map(re.escape, RENAMED)) + r")\.py\b")


def rewrite_text(text: str) -> str:
    text = DOTTED.sub(lambda m: new_abs(m[1]) if m[1] in MOVES else m[0], text)
    text = PATHS.sub(
        lambda m: (
            f"index/{MOVES[m[1]].replace('.', '/')}.py" if m[1] in MOVES else m[0]
        ),
        text,
    )
    return BARE.sub(lambda m: RENAMED[m[1]].replace(".", "/") + ".py", text)


def init_text(folder: str) -> str:
    owns, never = FOLDERS[folder]
    body = textwrap.fill(f"index/{folder}/: {owns}", 80)
    body += "\n\n" + textwrap.fill(f"Never imports: {never}", 80)
    if folder != "engine":
        body += "\n" + textwrap.fill("Nor mdseek.lsp, pygls, lsprotocol or mcp.", 80)
    body += "\n(tests/test_architecture.py checks both.)"
    return f'"""{body}\n"""\n'


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--dry-run", action="store_true", help="print the plan, change nothing"
    )
    ap.add_argument(
        "--allow-dirty", action="store_true", help="skip the clean-tree check"
    )
    args = ap.parse_args()
    root = Path.cwd()
    index = root / "index"
    if not (index / "__init__.py").is_file() or not (root / "pyproject.toml").is_file():
        sys.exit("relayout: run me at the root of an mdseek checkout")
    laid = [f for f in FOLDERS if (index / f).is_dir()]
    if laid:
        sys.exit(f"relayout: index/ is laid out already ({', '.join(laid)}/ exist)")
    if (
        not args.allow_dirty
        and run("git", "status", "--porcelain", "--untracked-files=no").strip()
    ):
        sys.exit(
            "relayout: the tree has changes; commit or stash them first (or --allow-dirty)"
        )

    present = sorted(p.stem for p in index.glob("*.py"))
    unknown = [m for m in present if m not in MOVES and m not in STAY]
    if unknown:
        print(
            "relayout: modules of index/ that MOVES does not place (nothing was changed):"
        )
        for m in unknown:
            hint = next((f for pat, f in HINTS if re.search(pat, m)), None)
            print(
                f'    "{m}": "{hint or "?"}.{m}",'
                + ("" if hint else "  # pick a folder")
            )
        print(f"add them to MOVES at the top of {__file__} and run again")
        return 2
    gone = sorted(m for m in MOVES if m not in present)
    if gone:
        print(f"relayout: in MOVES but not in index/ (ignored): {', '.join(gone)}")
    moves = {m: new for m, new in MOVES.items() if m in present}
    folders = sorted({new.split(".")[0] for new in moves.values()})
    unknown_folders = [f for f in folders if f not in FOLDERS]
    if unknown_folders:
        sys.exit(f"relayout: no docstring in FOLDERS for {', '.join(unknown_folders)}")
    for old, new in moves.items():
        print(f"index/{old}.py -> index/{new.replace('.', '/')}.py")
    if args.dry_run:
        return 0

    # 1. rewrite the sources in place (old paths), then move them
    touched: set[Path] = set()
    for d in PY_DIRS:
        for path in sorted((root / d).rglob("*.py")):
            if ".venv" in path.parts or "node_modules" in path.parts:
                continue
            rel = path.relative_to(root)
            new_mod = None
            is_pkg = path.name == "__init__.py"
            if rel.parts[0] == "index" and len(rel.parts) == 2:
                new_mod = "mdseek.index" if is_pkg else new_abs(path.stem)
            src = path.read_text(encoding="utf-8")
            # dotted names first: the import rewrite then writes new names it must not see
            out = rewrite_imports(path, rewrite_text(src), new_mod, is_pkg)
            if out != src:
                path.write_text(out, encoding="utf-8")
                touched.add(path)
    texts = [root / f for f in TEXT_FILES] + [
        p for g in TEXT_GLOBS for p in root.glob(g)
    ]
    for path in texts:
        if not path.is_file() or path.name in SKIP:
            continue
        src = path.read_text(encoding="utf-8")
        out = rewrite_text(src)
        if out != src:
            path.write_text(out, encoding="utf-8")
            print(f"rewrote {path.relative_to(root)}")
    for folder in folders:
        (index / folder).mkdir()
        (index / folder / "__init__.py").write_text(init_text(folder), encoding="utf-8")
        run("git", "add", f"index/{folder}/__init__.py")
    moved: dict[Path, Path] = {}
    for old, new in moves.items():
        dest = index / (new.replace(".", "/") + ".py")
        run("git", "mv", f"index/{old}.py", str(dest.relative_to(root)))
        moved[index / f"{old}.py"] = dest
    touched = {moved.get(p, p) for p in touched} | set(moved.values())

    # 4. pyproject's package list
    pp = root / "pyproject.toml"
    text = pp.read_text(encoding="utf-8")
    m = re.search(r"^packages = \[(.*)\]$", text, re.M)
    if m:
        listed = [s.strip().strip('"') for s in m[1].split(",") if s.strip()]
        listed += [
            f"mdseek.index.{f}" for f in folders if f"mdseek.index.{f}" not in listed
        ]
        new_line = "packages = [" + ", ".join(f'"{p}"' for p in listed) + "]"
        if len(new_line) > 100:
            new_line = "packages = [\n" + "".join(f'  "{p}",\n' for p in listed) + "]"
        pp.write_text(text[: m.start()] + new_line + text[m.end() :], encoding="utf-8")
    else:
        print("relayout: pyproject.toml lists no packages; check [tool.setuptools]")

    # 5. imports sorted, formatted
    files = sorted(str(p.relative_to(root)) for p in touched)
    ruff = (
        str(root / ".venv/bin/ruff") if (root / ".venv/bin/ruff").exists() else "ruff"
    )
    run(ruff, "check", "--fix", "--select", "I", "--quiet", *files, check=False)
    run(ruff, "format", "--quiet", *files, check=False)
    run(
        "git", "add", "--update", "."
    )  # staged, so that `git diff --cached -M` shows it all
    print(
        "relayout: left as they were: bare module names in prose and Sphinx "
        "references (`:func:`store_file.guard``); list them with\n"
        "    git grep -nwE '" + "|".join(sorted(RENAMED)) + "' -- '*.py' '*.md'"
    )
    print(
        f"relayout: {len(moves)} modules moved into {', '.join(f + '/' for f in folders)}; "
        f"{len(files)} Python files rewritten. Next: ruff check ., mypy index lsp, the tests."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
