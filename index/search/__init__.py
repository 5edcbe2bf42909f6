"""index/search/: ranking over a query, with no I/O: the query read once, in-memory
BM25 and vectors, pooling and fusion, the score floor, explain, and what a
client may ask a search for.

Never imports: store/, links/, engine/.
Nor mdseek.lsp, pygls, lsprotocol or mcp.
(tests/test_architecture.py checks both.)
"""
