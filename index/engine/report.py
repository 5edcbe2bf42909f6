"""What an indexing run reports (:class:`IndexReport`) and how it reports
progress (:data:`Progress`): shared by the engine's parts that read files and
make vectors, and by the front ends that show them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

# (stage, done, total); stages: "parse" (files), "model", "wait", "embed" (chunks),
# "passages", "tokens" (of the texts embedded; each embedding pass tells the three
# totals with done 0 first)
Progress = Callable[[str, int, int], None]


@dataclass
class IndexReport:
    files: int = 0  # files in the workspace that are indexed
    indexed: int = 0  # files (re)chunked this run
    unchanged: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)  # left out by ignore files
    chunks: int = 0  # chunks in the index after the run
    chunks_written: int = 0  # chunks (re)written this run
    embedded: int = 0  # texts embedded this run: chunks, then passages
    embedded_passages: int = 0  # of which passages (parts of a long chunk, each its own vector)
    pending: int = 0  # chunks still without a vector
    seconds: float = 0.0
    embed_seconds: float = 0.0
    chunk_seconds: float = 0.0  # parsing and chunking
    write_seconds: float = 0.0  # SQLite writes of documents
    lexical_only_reason: str | None = None
    interrupted: bool = False  # embedding was cancelled; the rest is pending
    lock_wait_seconds: float = 0.0  # waited for another process embedding into this index
    vectors_taken: int = 0  # vectors taken from a team's vectors file (Engine.index(vectors=...))
    precision_from_vectors: str | None = None  # that file's precision, taken by a new index

    def to_dict(self) -> dict:
        return asdict(self)
