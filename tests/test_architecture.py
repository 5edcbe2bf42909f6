"""ARCHITECTURE.md's code map names every module: each ``index/*.py`` in the
section on ``index/``, each ``lsp/*.py`` in the section on ``lsp/`` (a module
added without a line there fails here)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def section(text: str, start: str, end: str) -> str:
    a = text.index(start)
    return text[a : text.index(end, a)]


def named(sect: str) -> set[str]:
    """The module names written in backticks: `x.py` (also in `x.py:func`)."""
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*\.py)", sect))


def test_every_module_is_named_in_its_section_of_architecture_md():
    text = (REPO / "ARCHITECTURE.md").read_text()
    sections = {
        "index": section(text, "### `index/`", "### `lsp/`"),
        "lsp": section(text, "### `lsp/`", "### Elsewhere"),
    }
    missing = [
        f"{pkg}/{m.name}"
        for pkg, sect in sections.items()
        for m in sorted((REPO / pkg).glob("*.py"))
        if m.name != "__init__.py" and m.name not in named(sect)
    ]
    assert missing == [], f"ARCHITECTURE.md does not name: {', '.join(missing)}"
