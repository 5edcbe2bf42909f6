"""mdseek: find markdown sections by meaning.

The engine is :mod:`mdseek.index` (parse, chunk, store, embed, retrieve; no LSP),
the protocol layer and command line are :mod:`mdseek.lsp`.
"""

__version__ = "0.1.0"
