"""The persistent index: one SQLite file per workspace (WAL, versioned schema).

Tables
  documents  one row per indexed file (path relative to the root, size, mtime,
             content hash, title, chunker signature)
  sections   every section of every document (heading, anchor, breadcrumb, span)
  chunks     every chunk (span, raw text, embedded text, tokens, text_hash)
  chunks_fts FTS5 over (title, headings, body), rowid = chunks.id
  passages   finer texts inside a chunk with a vector of their own (chunk.py):
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

``Store`` is one connection to the file, assembled from one class per job:

  store_file.py     opening, checks, migrations, setting aside a bad file,
                    transactions, meta (:class:`IndexFile`)
  store_writes.py   a document's rows rewritten in one transaction (:class:`DocumentWrites`)
  store_reads.py    documents, sections, chunks and counts read (:class:`IndexReads`)
  store_lexical.py  FTS5 queries and the postings of the in-memory BM25
                    (:class:`LexicalPostings`)
  store_vectors.py  the vector cache (:class:`VectorCache`)
"""

from __future__ import annotations

from .location import IndexFileError
from .store_file import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    IndexFile,
    is_damage,
    read_meta,
)
from .store_lexical import LexicalPostings
from .store_reads import ChunkRow, DocRow, IndexReads, SectionRow
from .store_vectors import VectorCache
from .store_writes import DocumentWrites

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


class Store(DocumentWrites, IndexReads, LexicalPostings, VectorCache):
    """A connection to one index file (see :class:`store_file.IndexFile` for
    opening it). Not shared between threads: the engine serialises access with
    its own lock."""
