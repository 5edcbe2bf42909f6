"""The shape of the code, read from the modules with ``ast`` (nothing is imported):

- no import circle among the modules of ``index/``, ``lsp/`` and ``benchmarks/``
  (imports at module level, inside functions and under ``TYPE_CHECKING`` alike;
  relative imports resolved), and the circle named when there is one;
- no class inside ``index/`` with more than one base (parts are held, not mixed in);
- nothing under ``index/`` imports ``mdseek.lsp``, ``pygls``, ``lsprotocol`` or ``mcp``;
- the front ends (``lsp/``) import the engine only through its door,
  ``mdseek.index.api``, besides the pure helpers of ``text/`` and ``links/``
  and the settings table (``settings.py``);
- the front ends (``lsp/server``, ``lsp/mcp``, ``lsp/cli``) hold a ``Folder``, never
  an ``Engine`` (nor open one);
- no string literal for a search mode or a folder state outside its enum;
- the search options declared once, in ``SearchRequest`` (no signature restates
  two of them but a front end's own input);
- no ``.py`` file in ``index/`` or ``lsp/`` over :data:`MAX_LINES` lines;
- ARCHITECTURE.md's code map names every module.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Each source folder and the import name it installs as (pyproject's package-dir).
PACKAGES = {"index": "mdseek.index", "lsp": "mdseek.lsp", "lsp/_package": "mdseek"}
SCANNED = {**PACKAGES, "benchmarks": "benchmarks"}
PROTOCOL_PACKAGES = ("mdseek.lsp", "pygls", "lsprotocol", "mcp")
# "No file over ~500 lines": 550 leaves room for a docstring's growth without
# letting a second job into a file.
MAX_LINES = 550


@dataclass(frozen=True)
class Module:
    name: str  # dotted, as imported: mdseek.index.text.parse, benchmarks.__main__
    path: Path
    rel: str  # the path from the checkout: index/text/parse.py
    package: bool  # an __init__.py


def modules(root: Path = REPO, folders: dict[str, str] = SCANNED) -> dict[str, Module]:
    """Every module under ``folders`` (source folder -> import name), by dotted name.
    A folder inside another (lsp/_package in lsp/) belongs to the inner one only."""
    found: dict[str, Module] = {}
    for folder, name in folders.items():
        base = root / folder
        inner = [base / f for f in folders if f != folder and (root / f).is_relative_to(base)]
        for path in sorted(base.rglob("*.py")):
            if any(path.is_relative_to(i) for i in inner) or ".venv" in path.parts:
                continue
            parts = list(path.relative_to(base).with_suffix("").parts)
            package = parts[-1] == "__init__"
            dotted = ".".join([name, *(parts[:-1] if package else parts)])
            found[dotted] = Module(dotted, path, path.relative_to(root).as_posix(), package)
    return found


def imports(module: Module) -> list[tuple[str, int]]:
    """Every name ``module`` imports, absolute, with its line: ``import a.b`` gives
    ``a.b``; ``from a import b`` gives ``a.b`` (a module, or a name in ``a``);
    ``from ..x import y`` is resolved against the module's own package."""
    here = module.name if module.package else module.name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = here
                for _ in range(node.level - 1):
                    pkg = pkg.rpartition(".")[0]
                base = ".".join(p for p in (pkg, node.module) if p)
            out += [
                (f"{base}.{a.name}" if a.name != "*" else base, node.lineno) for a in node.names
            ]
    return out


def import_graph(mods: dict[str, Module]) -> dict[str, dict[str, int]]:
    """module -> {module it imports: line}, among ``mods`` only: a name imported
    from a module counts as that module; a package's ``__init__`` counts when
    it is imported itself or a name is taken from it, not for ``from pkg import
    submodule`` (which Python runs first anyway)."""
    graph: dict[str, dict[str, int]] = {m: {} for m in mods}
    for name, module in mods.items():
        for target, line in imports(module):
            while target and target not in mods:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle per strongly connected part of the graph (Tarjan), each the
    shortest from its first module back to it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    parts: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    part = set()
                    while True:
                        m = stack.pop()
                        part.add(m)
                        if m == node:
                            break
                    if len(part) > 1:
                        parts.append(part)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    circles = []
    for part in parts:  # the shortest way from its first module back to it (breadth first)
        first = min(part)
        came: dict[str, str] = {}
        queue = deque([first])
        while first not in came:
            node = queue.popleft()
            for child in sorted(graph[node]):
                if child in part and child not in came:
                    came[child] = node
                    queue.append(child)
        path = [first]
        while len(path) == 1 or path[-1] != first:
            path.append(came[path[-1]])
        circles.append(path[::-1])
    return circles


def describe(circle: list[str], mods: dict[str, Module], graph) -> str:
    """``a (index/a.py:3) -> b (index/b.py:9) -> a``: each arrow's import line."""
    steps = [f"{a} ({mods[a].rel}:{graph[a][b]})" for a, b in zip(circle, circle[1:], strict=False)]
    return " -> ".join([*steps, circle[-1]])


def circles_in(root: Path = REPO, folders: dict[str, str] = SCANNED) -> list[str]:
    mods = modules(root, folders)
    graph = import_graph(mods)
    return [describe(c, mods, graph) for c in cycles(graph)]


def test_no_import_circle():
    assert len(modules()) > 80
    found = circles_in()
    assert found == [], "import circles:\n" + "\n".join(found)


def test_the_circle_check_sees_each_form(tmp_path):
    """A circle through a relative import from a subpackage, one through an
    import inside a function, one under TYPE_CHECKING; a plain chain is none."""
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    files = {
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/a.py": "from .sub.b import x\n",
        "pkg/sub/b.py": "def f():\n    from ..a import y\n",
        "pkg/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import d\n",
        "pkg/d.py": "import pkg.c\n",
        "pkg/e.py": "from . import a\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    assert sorted(circles_in(tmp_path, {"pkg": "pkg"})) == [
        "pkg.a (pkg/a.py:1) -> pkg.sub.b (pkg/sub/b.py:2) -> pkg.a",
        "pkg.c (pkg/c.py:3) -> pkg.d (pkg/d.py:1) -> pkg.c",
    ]


def bases_over_one(root: Path = REPO) -> list[str]:
    found = []
    for module in modules(root, {"index": "mdseek.index"}).values():
        for node in ast.walk(ast.parse(module.path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and len(node.bases) > 1:
                bases = ", ".join(ast.unparse(b) for b in node.bases)
                found.append(f"{module.rel}:{node.lineno}: {node.name}({bases})")
    return found


def test_no_class_in_the_engine_has_more_than_one_base():
    found = bases_over_one()
    assert found == [], "classes with more than one base:\n" + "\n".join(found)


def protocol_imports(root: Path = REPO) -> list[str]:
    """Every import of a protocol package by a module under ``index/`` (absolute,
    relative climbing out of it, or inside a function)."""
    found = []
    for module in modules(root, {"index": "mdseek.index"}).values():
        for name, line in imports(module):
            if any(name == p or name.startswith(p + ".") for p in PROTOCOL_PACKAGES):
                found.append(f"{module.rel}:{line}: {name}")
    return found


def test_the_engine_imports_nothing_of_the_protocols(tmp_path):
    assert protocol_imports() == []
    # the check sees each way a module could reach a protocol layer
    (tmp_path / "index" / "sub").mkdir(parents=True)
    (tmp_path / "index" / "a.py").write_text("import pygls.server\nfrom lsprotocol import types\n")
    (tmp_path / "index" / "sub" / "b.py").write_text(
        "def f():\n    from mdseek.lsp import cli\n    from ...lsp.roots import Root\n"
    )
    (tmp_path / "index" / "c.py").write_text(
        "import mcp\nfrom mdseek.index import parse\nimport mcpx\nfrom .. import lsp\n"
    )
    assert sorted(protocol_imports(tmp_path)) == [
        "index/a.py:1: pygls.server",
        "index/a.py:2: lsprotocol.types",
        "index/c.py:1: mcp",
        "index/c.py:4: mdseek.lsp",
        "index/sub/b.py:2: mdseek.lsp.cli",
        "index/sub/b.py:3: mdseek.lsp.roots.Root",
    ]


# What a front end may import of the engine: its door, and the pure helpers
# (settings.py: the settings table, data that imports nothing of mdseek).
FRONT_DOOR = (
    "mdseek.index.api",
    "mdseek.index.text",
    "mdseek.index.links",
)


def past_the_door(root: Path = REPO) -> list[str]:
    """Every import of the engine by a module under ``lsp/`` that is not
    :data:`FRONT_DOOR` (absolute, inside a function, or the lazy
    ``mdseek.index`` itself)."""
    found = []
    for module in modules(root, {"lsp": "mdseek.lsp"}).values():
        for name, line in imports(module):
            engine = name == "mdseek.index" or name.startswith("mdseek.index.")
            if engine and not any(name == d or name.startswith(d + ".") for d in FRONT_DOOR):
                found.append(f"{module.rel}:{line}: {name}")
    return found


def test_the_front_ends_import_the_engine_through_its_door(tmp_path):
    found = past_the_door()
    assert found == [], "front ends past mdseek.index.api:\n" + "\n".join(found)
    # the check sees each way a front end could reach past the door
    (tmp_path / "lsp" / "cli").mkdir(parents=True)
    (tmp_path / "lsp" / "a.py").write_text(
        "from mdseek.index.api import Folder\nfrom mdseek.index.text.files import scan\n"
        "from mdseek.index.engine.folder import Folder\n"
    )
    (tmp_path / "lsp" / "cli" / "b.py").write_text(
        "def f():\n    import mdseek.index.store.store\n    from mdseek.index import api, engine\n"
        "    from mdseek.index.links import links\nimport mdseek.index\n"
    )
    assert sorted(past_the_door(tmp_path)) == [
        "lsp/a.py:3: mdseek.index.engine.folder.Folder",
        "lsp/cli/b.py:2: mdseek.index.store.store",
        "lsp/cli/b.py:3: mdseek.index.engine",
        "lsp/cli/b.py:5: mdseek.index",
    ]


# The three front ends, each held to the same rule.
FRONT_ENDS = ("lsp/server/", "lsp/mcp/", "lsp/cli/")
# What opens or is an Engine (the command line's one-shot index is Folder.open_now
# and Folder.index_now).
ENGINE_NAMES = ("Engine", "open_engine")


def front_ends_holding_an_engine(root: Path = REPO) -> list[str]:
    """Each import of an ``Engine`` (or of what opens one) by the language
    server, the MCP server or the command line: they all hold a ``Folder``."""
    found = []
    for module in modules(root, {"lsp": "mdseek.lsp"}).values():
        if module.rel.startswith(FRONT_ENDS):
            found += [
                f"{module.rel}:{line}: {name}"
                for name, line in imports(module)
                if name.rpartition(".")[2] in ENGINE_NAMES
            ]
    return found


def test_the_front_ends_hold_a_folder_not_an_engine(tmp_path):
    found = front_ends_holding_an_engine()
    assert found == [], "a front end holding an Engine:\n" + "\n".join(found)
    for end in ("mcp", "cli", "server"):
        (tmp_path / "lsp" / end).mkdir(parents=True)
    (tmp_path / "lsp" / "mcp" / "a.py").write_text(
        "from mdseek.index.api import EngineOptions, Folder\nfrom mdseek.index.api import Engine\n"
    )
    (tmp_path / "lsp" / "cli" / "b.py").write_text(
        "def f():\n    from mdseek.index.api import open_engine\n"
    )
    (tmp_path / "lsp" / "server" / "c.py").write_text("import mdseek.index.api.Engine\n")
    (tmp_path / "lsp" / "x.py").write_text("from mdseek.index.api import Engine\n")
    assert sorted(front_ends_holding_an_engine(tmp_path)) == [
        "lsp/cli/b.py:2: mdseek.index.api.open_engine",
        "lsp/mcp/a.py:2: mdseek.index.api.Engine",
        "lsp/server/c.py:1: mdseek.index.api.Engine",
    ]


def long_files(root: Path = REPO) -> list[str]:
    found = []
    for module in modules(root, PACKAGES).values():
        n = len(module.path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            found.append(f"{module.rel}: {n} lines")
    return found


def test_no_file_is_over_the_limit():
    found = long_files()
    assert found == [], f"over {MAX_LINES} lines:\n" + "\n".join(found)


# The engine's folders, bottom first: a folder imports only from folders
# before it in this order (ARCHITECTURE.md, "Who may import whom").
# A module beside the folders counts as a folder of its own name (settings.py: "settings",
# the settings table, pure data at the bottom).
LAYERS = [("settings",), ("model",), ("text",), ("store", "links", "search"), ("engine",), ("api",)]


def upward_imports(root: Path = REPO) -> list[str]:
    """Each import of a folder of index/ by a folder beside or below it, and
    each module outside the folders of LAYERS."""
    rank = {folder: i for i, layer in enumerate(LAYERS) for folder in layer}
    mods = modules(root, {"index": "mdseek.index"})
    graph = import_graph(mods)
    found = []
    for name, targets in graph.items():
        where = Path(mods[name].rel).parts  # ("index", "store", "file.py")
        if len(where) == 2:  # ("index", "settings.py")
            where = ("index", Path(where[1]).stem, where[1])
        if len(where) < 3 or where[1] not in rank:
            if name != "mdseek.index":
                found.append(f"{mods[name].rel}: not in a folder of LAYERS")
            continue
        here = where[1]
        for target, line in targets.items():
            there = target.split(".")[2:3]  # mdseek.index.<folder>...
            if there and there[0] != here and rank.get(there[0], len(LAYERS)) >= rank[here]:
                found.append(f"{mods[name].rel}:{line}: {here}/ imports {there[0]}/")
    return found


def test_each_folder_of_the_engine_imports_only_below_it():
    found = upward_imports()
    assert found == [], "imports against LAYERS:\n" + "\n".join(found)


def section(text: str, start: str, end: str) -> str:
    a = text.index(start)
    return text[a : text.index(end, a)]


def named(sect: str) -> set[str]:
    """The module paths written in backticks: `x.py`, `store/file.py` (also in `x.py:func`)."""
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_/]*\.py)", sect))


def test_every_module_is_named_in_its_section_of_architecture_md():
    """Each module of index/ by its path there (`store/file.py`), each of lsp/
    by its path there (`server/app.py`, `cli/search.py`), in its section of the code map."""
    text = (REPO / "ARCHITECTURE.md").read_text()
    sections = {
        "index": section(text, "### `index/`", "### `lsp/`"),
        "lsp": section(text, "### `lsp/`", "### Elsewhere"),
    }
    missing = [
        f"{pkg}/{rel}"
        for pkg, sect in sections.items()
        for m in sorted((REPO / pkg).rglob("*.py"))
        if m.name != "__init__.py"
        and "_package" not in m.parts
        and (rel := m.relative_to(REPO / pkg).as_posix()) not in named(sect)
    ]
    assert missing == [], f"ARCHITECTURE.md does not name: {', '.join(missing)}"


# The words of a search mode and of a folder's state, written once: in their
# enums (settings.py's Mode, engine/status.py's FolderState). "error" is a
# state's word but also JSON-RPC's and a log level's: it is checked where it
# is compared with a state. The retrievers' names ("lexical", "dense" as keys of
# a ranking's lists) are not modes.
MODE_WORDS = ("hybrid", "lexical", "dense")
STATE_WORDS = ("starting", "indexing", "ready", "lexical-only", "error", "no folder")
ENUMS = {("index/settings.py", "Mode"), ("index/engine/status.py", "FolderState")}
_KINDS = ("mode", "state")


def _named(node: ast.AST) -> str:
    """The last name of ``x``, ``a.x``, ``x()``: what a value is compared with or set to."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _about(name: str) -> bool:
    return any(name == k or name.endswith("_" + k) or name == k + "s" for k in _KINDS)


def mode_and_state_literals(root: Path = REPO) -> list[str]:
    """Each string literal naming a mode or a state outside its enum: in a front
    end (``lsp/``) any one but a docstring (and a lone "error"); in the engine one
    compared with, passed as, defaulting or assigned to a ``mode`` or a ``state``."""
    found = []
    for module in modules(root, PACKAGES).values():
        tree = ast.parse(module.path.read_text(encoding="utf-8"))
        skip: set[int] = set()
        parents: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
            if isinstance(node, ast.ClassDef) and (module.rel, node.name) in ENUMS:
                skip |= {id(n) for n in ast.walk(node)}
            body = getattr(node, "body", None)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                if body and isinstance(body[0], ast.Expr):
                    skip.add(id(body[0].value))  # a docstring
        front = module.rel.startswith("lsp/")
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or id(node) in skip:
                continue
            if node.value not in MODE_WORDS + STATE_WORDS:
                continue
            parent = parents.get(id(node))
            if front and node.value != "error":
                hit = True
            elif isinstance(parent, ast.Compare):
                hit = any(_about(_named(x)) for x in (parent.left, *parent.comparators))
            elif isinstance(parent, ast.keyword):
                hit = _about(parent.arg or "")
            elif isinstance(parent, ast.arguments):
                pos = parent.posonlyargs + parent.args
                named = dict(
                    zip(
                        [a.arg for a in pos[len(pos) - len(parent.defaults) :]],
                        parent.defaults,
                        strict=True,
                    )
                )
                named |= {
                    a.arg: d
                    for a, d in zip(parent.kwonlyargs, parent.kw_defaults, strict=True)
                    if d
                }
                hit = any(d is node and _about(a) for a, d in named.items())
            elif isinstance(parent, (ast.Assign, ast.AnnAssign)):
                targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                hit = any(_about(_named(t)) for t in targets)
            else:
                hit = False
            if hit:
                found.append(f"{module.rel}:{node.lineno}: {node.value!r}")
    return found


def test_no_mode_or_state_is_written_outside_its_enum(tmp_path):
    found = mode_and_state_literals()
    assert found == [], "a mode or a state as a string (use Mode, FolderState):\n" + "\n".join(
        found
    )
    # the check sees each way a word could stand for a mode or a state
    (tmp_path / "lsp").mkdir()
    (tmp_path / "index" / "engine").mkdir(parents=True)
    (tmp_path / "lsp" / "a.py").write_text(
        '"""hybrid"""\nMODE = "hybrid"\nsend({"error": 1})\nif x.state == "error": pass\n'
    )
    (tmp_path / "index" / "engine" / "status.py").write_text(
        'class FolderState:\n    READY = "ready"\n\n\nclass Other:\n    def f(self):\n        self.state = "ready"\n'
    )
    (tmp_path / "index" / "b.py").write_text(
        'def f(mode="dense", *, state="ready"):\n    lists["dense"] = 1\n'
        '    if self.state != "indexing" or folder_state() == "error": pass\n'
        '    g(mode="lexical")\n    self.mode = "hybrid"\n'
    )
    assert sorted(mode_and_state_literals(tmp_path)) == [
        "index/b.py:1: 'dense'",
        "index/b.py:1: 'ready'",
        "index/b.py:3: 'error'",
        "index/b.py:3: 'indexing'",
        "index/b.py:4: 'lexical'",
        "index/b.py:5: 'hybrid'",
        "index/engine/status.py:7: 'ready'",
        "lsp/a.py:2: 'hybrid'",
        "lsp/a.py:4: 'error'",
    ]


# Where a search option may be declared as a parameter: a front end's own input
# (MCP's tool: its signature is its schema). Everything else takes the request.
OPTION_INPUTS = {("lsp/mcp/server.py", "search")}


def search_options(root: Path = REPO) -> set[str]:
    """The fields of ``SearchRequest`` but its query (read from the class), and
    ``prefix_last``, how its text is read."""
    tree = ast.parse((root / "index/search/requests.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "SearchRequest")
    fields = {
        n.target.id
        for n in cls.body
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
    }
    return (fields - {"query"}) | {"prefix_last"}


def restated_search_options(root: Path = REPO) -> list[str]:
    """Each function of ``index/`` or ``lsp/`` whose parameters name two or more
    search options: a signature that restates the request instead of taking it."""
    options = search_options(root)
    found = []
    for module in modules(root, PACKAGES).values():
        for node in ast.walk(ast.parse(module.path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = node.args
            named = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} & options
            if len(named) >= 2 and (module.rel, node.name) not in OPTION_INPUTS:
                found.append(f"{module.rel}:{node.lineno}: {node.name}({', '.join(sorted(named))})")
    return found


def test_the_search_options_are_declared_once(tmp_path):
    """In ``SearchRequest``: a layer takes the request whole, so a new option
    touches the request, the searcher that reads it and a line per front end."""
    assert {"limit", "mode", "paths", "explain", "filter"} <= search_options()
    found = restated_search_options()
    assert found == [], "search options restated (take the SearchRequest):\n" + "\n".join(found)
    # the check sees a restatement in a method, an async function, keyword-only
    (tmp_path / "index" / "search").mkdir(parents=True)
    (tmp_path / "lsp" / "mcp").mkdir(parents=True)
    (tmp_path / "index" / "search" / "requests.py").write_text(
        "class SearchRequest:\n    query: str\n    limit: int = 10\n    mode: str = 'x'\n"
    )
    (tmp_path / "index" / "a.py").write_text(
        "class S:\n    def search(self, q, limit=10, *, mode=None): pass\ndef one(q, limit): pass\n"
    )
    (tmp_path / "lsp" / "b.py").write_text("async def search(ws, text, prefix_last, limit): pass\n")
    (tmp_path / "lsp" / "mcp" / "server.py").write_text("def search(query, limit, mode): pass\n")
    assert sorted(restated_search_options(tmp_path)) == [
        "index/a.py:2: search(limit, mode)",
        "lsp/b.py:1: search(limit, prefix_last)",
    ]
