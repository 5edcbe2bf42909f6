"""index/text/: a folder's files as text: which files are indexed, markdown parsed
into headings and sections, the nested blocks, front-matter aliases, chunks
sized in the model's tokens, snippets, coverage.

Never imports: store/, links/, search/, engine/ (of model/ it uses the tokenizer
only).
Nor mdseek.lsp, pygls, lsprotocol or mcp.
(tests/test_architecture.py checks both.)
"""
