"""The persistent index: one SQLite file per workspace (WAL, versioned schema).

Tables
  documents  one row per indexed file (path relative to the root, size, mtime,
             content hash, title, chunker signature, props: its tags and front
             matter as JSON, what search filters read)
  sections   every section of every document (heading, anchor, breadcrumb, span)
  chunks     every chunk (span, raw text, embedded text, tokens, text_hash)
  chunks_fts FTS5 over (title, headings, body), rowid = chunks.id
  passages   finer texts inside a chunk with a vector of their own (passages.py):
             they score their chunk, never show as a result
  vectors    float32 blobs keyed by (model id, hash of the embedded text): an
             unchanged chunk is never re-embedded, even when its ordinal or its
             file changes; a new model id re-embeds everything.

A document's rows (documents, sections, chunks, chunks_fts) change in one
transaction, so a crash leaves either the old or the new version; a re-indexed
document keeps the rows of its unchanged chunks. Vectors are a content-addressed
cache filled afterwards ("pending" = chunks without a vector for the current
model; a chunk's passages are embedded after every chunk), so an interrupted run resumes where it stopped; a vector whose text no
chunk uses any more is dropped when a document is rewritten (and by a full
reconcile's sweep).

``Store`` is the file (:class:`store.file.IndexFile`: opening, checks,
migrations, setting aside a bad file, transactions on its one writer
connection, reads on read-only connections that never wait for a write, meta)
and the parts that own its tables, each handed that one file:

  store.documents  documents read, a document's rows rewritten in one
                   transaction (store/documents.py, :class:`Documents`)
  store.chunks     sections, chunks and passages read (store/chunks.py, :class:`Chunks`)
  store.postings   FTS5 queries and the postings of the in-memory BM25
                   (store/fts.py, :class:`LexicalPostings`)
  store.vectors    the vector cache (store/vectors.py, :class:`VectorCache`)

No part reads another's state: the chunks_fts rows the documents part writes
reach the postings through a :class:`store.fts.TouchedRows` both are
handed; the vectors a rewrite orphans are dropped through
:func:`store.vectors.drop_unused_in` in the rewrite's transaction.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from .chunks import ChunkRow, Chunks, SectionRow
from .documents import DocRow, Documents
from .file import APPLICATION_ID, SCHEMA_VERSION, IndexFile, is_damage, read_meta
from .fts import LexicalPostings, TouchedRows
from .location import IndexFileError
from .vectors import VectorCache

T = TypeVar("T")

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "ChunkRow",
    "DocRow",
    "IndexFile",
    "IndexFileError",
    "SectionRow",
    "Store",
    "is_damage",
    "read_meta",
]


class Store:
    """One index file and its parts (see the module; see
    :class:`store.file.IndexFile` for opening it). Reads never wait for a
    write; the engine serialises writes with its own lock."""

    def __init__(self, path: str | Path, recover: bool = False, check: bool = True):
        self.file = IndexFile(path, recover=recover, check=check)
        touched = TouchedRows()
        self.documents = Documents(self.file, touched)
        self.chunks = Chunks(self.file)
        self.postings = LexicalPostings(self.file, touched)
        self.vectors = VectorCache(self.file)

    # -- the file as a whole -------------------------------------------------

    @property
    def path(self) -> Path:
        return self.file.path

    @property
    def notice(self) -> str | None:
        """What the user should hear about opening it (set aside, migrated)."""
        return self.file.notice

    @property
    def migrated_from(self) -> int | None:
        return self.file.migrated_from

    @property
    def db(self) -> sqlite3.Connection:
        """The raw writer connection (tests; hold ``file.lock`` to share it)."""
        return self.file.db

    def close(self) -> None:
        self.file.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.file.transaction() as db:
            yield db

    def data_version(self) -> int:
        return self.file.data_version()

    def cached(self, name: str, compute: Callable[[sqlite3.Connection], T]) -> T:
        return self.file.cached(name, compute)

    def get_meta(self, key: str) -> str | None:
        return self.file.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self.file.set_meta(key, value)

    def counts(self) -> dict[str, int]:
        """Rows of each kind: files, chunks, sections, passages."""
        with self.file.reading() as db:
            docs = db.execute("SELECT count(*) FROM documents").fetchone()[0]
            chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            passages = db.execute("SELECT count(*) FROM passages").fetchone()[0]
            sections = db.execute("SELECT count(*) FROM sections").fetchone()[0]
        return {"files": docs, "chunks": chunks, "sections": sections, "passages": passages}
