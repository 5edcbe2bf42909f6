"""index/store/: the SQLite index file: where it lives, opening and checking it,
migrations, documents and chunks, FTS5 and postings, the vector cache, an index
made elsewhere set aside, pruning the user cache, a team's vectors file. A write
is all or nothing.

Never imports: links/, search/, engine/.
Nor mdseek.lsp, pygls, lsprotocol or mcp.
(tests/test_architecture.py checks both.)
"""
