"""index/engine/: the parts put together: Engine (one folder, one index file, one
model), the index kept in line with the files, the embedding queue and its lock,
the precision move, both retrievers over the store, search; Folder and the
facade, which the front ends hold.

Never imports: nothing of index/ is above it; like every folder here, never
mdseek.lsp, pygls, lsprotocol or mcp.
(tests/test_architecture.py checks both.)
"""
