"""The plain baseline: what a developer builds in an afternoon, as a row beside
mdseek on every corpus so that a regression below it shows at once.

One vector per heading section (the section's own text, heading line included;
the model reads its first window), FTS5 BM25 over every query word (porter
stemming, one column), each retriever's 100 best sections fused by reciprocal
rank fusion with k = 60. Same sections (mdseek's parser) and same model as
mdseek, nothing else shared.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

import numpy as np

from mdseek.index.text.files import FileFilter, scan
from mdseek.index.text.parse import parse_bytes

Hit = tuple[str, int, int]  # (doc id = path without .md, start line, end line)


class PlainBaseline:
    def __init__(self, root: Path, embed, cache: Path | None = None):
        """``embed``: list of texts -> unit vectors; ``cache``: an .npz keeping them."""
        self.items: list[Hit] = []
        texts: list[str] = []
        for f in scan(root, FileFilter()):
            doc = parse_bytes(f.path.read_bytes(), f.rel)
            lines = doc.text.split("\n")
            for s in doc.sections:
                text = "\n".join(lines[s.start_line : s.end_line]).strip()
                if text:
                    self.items.append((f.rel.removesuffix(".md"), s.start_line, s.end_line))
                    texts.append(text)
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE s USING fts5(text, tokenize = 'porter unicode61')")
        self.db.executemany("INSERT INTO s(rowid, text) VALUES (?, ?)", enumerate(texts))
        self.vectors = _cached_embed(texts, embed, cache)

    def lexical(self, query: str, k: int = 100) -> list[int]:
        words = {w: None for w in re.findall(r"\w+", query.lower())}
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self.db.execute(
            "SELECT rowid FROM s WHERE s MATCH ? ORDER BY bm25(s) LIMIT ?", (match, k)
        ).fetchall()
        return [r[0] for r in rows]

    def dense(self, qvec: np.ndarray, k: int = 100) -> list[int]:
        return [int(i) for i in np.argsort(-(self.vectors @ qvec), kind="stable")[:k]]

    def search(
        self, query: str, qvec: np.ndarray, mode: str = "hybrid", limit: int = 100
    ) -> list[Hit]:
        lists = []
        if mode in ("hybrid", "lexical"):
            lists.append(self.lexical(query))
        if mode in ("hybrid", "dense"):
            lists.append(self.dense(qvec))
        fused: dict[int, float] = {}
        for ranked in lists:
            for rank, i in enumerate(ranked, start=1):
                fused[i] = fused.get(i, 0.0) + 1.0 / (60 + rank)
        order = sorted(fused, key=lambda i: -fused[i])
        return [self.items[i] for i in order[:limit]]

    def close(self) -> None:
        self.db.close()


def _cached_embed(texts: list[str], embed, cache: Path | None) -> np.ndarray:
    keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
    known: dict[str, np.ndarray] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as z:
            known = dict(zip(z["keys"].tolist(), z["vecs"], strict=True))
    todo = [i for i, k in enumerate(keys) if k not in known]
    if todo:
        for i, v in zip(todo, embed([texts[i] for i in todo]), strict=True):
            known[keys[i]] = v
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez(cache, keys=np.array(keys), vecs=np.stack([known[k] for k in keys]))
    return np.stack([known[k] for k in keys]).astype(np.float32)
