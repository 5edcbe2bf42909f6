"""index/model/: which embedding model, its files and its tokenizer; texts to
vectors (ONNX Runtime, torch only to export), the int8 copy, the model wheel,
threads by demand, the optional reranker.

Never imports: text/, store/, links/, search/, engine/ (the bottom layer: it
knows nothing of markdown or of the index file).
Nor mdseek.lsp, pygls, lsprotocol or mcp.
(tests/test_architecture.py checks both.)
"""
