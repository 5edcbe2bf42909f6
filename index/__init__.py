"""The mdseek engine: parse, chunk, store, embed and retrieve markdown sections.

Nothing here knows about LSP; :mod:`mdseek.lsp` is a thin layer over
:class:`~mdseek.index.engine.Engine`.
"""

from .engine import Engine, IndexReport, SearchResponse, SearchResult
from .files import FileFilter

__all__ = ["Engine", "FileFilter", "IndexReport", "SearchResponse", "SearchResult"]
