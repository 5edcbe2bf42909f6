"""The mdseek engine: parse, chunk, store, embed and retrieve markdown sections.

Nothing here knows about LSP; :mod:`mdseek.lsp` is a thin layer over its
front door, :mod:`mdseek.index.api`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine.engine import Engine, IndexReport, SearchResponse, SearchResult
    from .text.files import FileFilter

__all__ = ["Engine", "FileFilter", "IndexReport", "SearchResponse", "SearchResult"]
_HOME = {"FileFilter": ".text.files"}


def __getattr__(name: str):
    """Lazy: importing one engine module (say, the tokenizer's) loads only that one."""
    if name in __all__:
        return getattr(importlib.import_module(_HOME.get(name, ".engine.engine"), __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
