"""index/api/: the engine's front door names each thing once, and each name
it promises is there (its lazy table agrees with the imports type checkers
read)."""

from __future__ import annotations

import ast
from pathlib import Path

import mdseek.index.api as api

DOOR = Path(__file__).resolve().parent.parent / "index" / "api" / "__init__.py"


def test_every_name_of_the_door_is_there():
    missing = [n for n in api.__all__ if getattr(api, n, None) is None]
    assert missing == []


def test_the_door_names_what_type_checkers_see():
    """The names under TYPE_CHECKING (what mypy and an editor read) are the
    ones the lazy table serves, each from the module it is imported from."""
    seen = {}
    for node in ast.walk(ast.parse(DOOR.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 2:
            for a in node.names:
                seen[a.name] = node.module
    served = {**api._HOME, **api._MODULES}
    assert sorted(seen) == sorted(api.__all__) == sorted(served)
    wrong = [n for n, home in api._HOME.items() if seen[n] != home]
    assert wrong == []
