"""index/links/: links between notes: finding and resolving them (the one
resolver), the edits of a rename or move, tags, Obsidian's block ids. Pure: no
file reading.

Never imports: store/, search/, engine/.
Nor mdseek.lsp, pygls, lsprotocol or mcp.
(tests/test_architecture.py checks both.)
"""
