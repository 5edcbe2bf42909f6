"""The sections, chunks and passages of the index, read (``store.chunks``):
as rows, what ranking needs of a candidate, a document's text hashes.
They are written with their document (:mod:`store.documents`); read on a
reader connection (:meth:`IndexFile.reading`), never waiting for a write."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from .file import IndexFile, path_in, path_out, rows_in, with_path


@dataclass(frozen=True)
class SectionRow:
    doc_id: int
    path: str
    title: str
    ordinal: int
    level: int
    heading: str
    slug: str
    breadcrumb: str
    start_line: int
    end_line: int
    heading_end_line: int


@dataclass(frozen=True)
class ChunkRow:
    id: int
    doc_id: int
    path: str
    ordinal: int
    heading: str
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    text: str
    embedding_text: str
    tokens: int
    text_hash: str
    section_first: int
    section_last: int


class Chunks:
    """Sections, chunks and passages of one index file, read (see the module)."""

    def __init__(self, file: IndexFile):
        self._file = file

    _SECTION_SQL = (
        "SELECT s.doc_id, d.path, d.title, s.ordinal, s.level, s.heading, s.slug, s.breadcrumb,"
        " s.start_line, s.end_line, s.heading_end_line FROM sections s"
        " JOIN documents d ON d.id = s.doc_id"
    )

    def sections(self, keys: Iterable[tuple[int, int]]) -> dict[tuple[int, int], SectionRow]:
        keys = list(keys)
        out: dict[tuple[int, int], SectionRow] = {}
        with self._file.reading() as db:
            for i in range(0, len(keys), 200):
                part = keys[i : i + 200]
                cond = " OR ".join("(s.doc_id=? AND s.ordinal=?)" for _ in part)
                args = [v for k in part for v in k]
                for r in db.execute(self._SECTION_SQL + f" WHERE {cond}", args).fetchall():
                    row = SectionRow(*with_path(r, 1))
                    out[(row.doc_id, row.ordinal)] = row
        return out

    def document_sections(self, path: str) -> list[SectionRow]:
        with self._file.reading() as db:
            rows = db.execute(
                self._SECTION_SQL + " WHERE d.path=? ORDER BY s.ordinal", (path_in(path),)
            ).fetchall()
        return [SectionRow(*with_path(r, 1)) for r in rows]

    _CHUNK_SQL = (
        "SELECT c.id, c.doc_id, d.path, c.ordinal, c.heading, c.heading_path, c.start_line,"
        " c.end_line, c.text, c.embedding_text, c.tokens, c.text_hash, c.section_first,"
        " c.section_last FROM chunks c JOIN documents d ON d.id = c.doc_id"
    )

    @staticmethod
    def _chunk(r: tuple) -> ChunkRow:
        vals = with_path(r, 2)
        vals[5] = tuple(json.loads(vals[5]))
        return ChunkRow(*vals)

    def _where_in(self, sql: str, ids: Iterable[int]) -> list[tuple]:
        """Rows of ``sql`` ending in ``IN`` (the list is appended), :func:`rows_in`."""
        with self._file.reading() as db:
            return rows_in(db, f"{sql} {{in}}", list(ids))

    def spans(self, ids: Iterable[int]) -> dict[int, tuple[int, str, int, int]]:
        """chunk id -> (doc id, path, first section, last section): what ranking
        needs of a candidate (no text)."""
        sql = (
            "SELECT c.id, c.doc_id, d.path, c.section_first, c.section_last FROM chunks c"
            " JOIN documents d ON d.id = c.doc_id WHERE c.id IN"
        )
        return {
            int(r[0]): (int(r[1]), path_out(r[2]), int(r[3]), int(r[4]))
            for r in self._where_in(sql, ids)
        }

    def versioned_spans(self, ids: Iterable[int]) -> dict[int, tuple[int, str, int, int, str]]:
        """chunk id -> (doc id, path, first section, last section, the document's
        version: :meth:`versions`), read together."""
        sql = (
            "SELECT c.id, c.doc_id, d.path, c.section_first, c.section_last, d.hash, d.indexed_at"
            " FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE c.id IN"
        )
        return {
            int(r[0]): (
                int(r[1]),
                path_out(r[2]),
                int(r[3]),
                int(r[4]),
                f"{r[2]!r}:{r[5]}@{r[6]!r}",
            )
            for r in self._where_in(sql, ids)
        }

    def versions(self, doc_ids: Iterable[int]) -> dict[int, str]:
        """doc id -> its version: its path, content hash and when it was indexed
        (a document's chunks and sections stay as read while it stays the same)."""
        sql = "SELECT id, path, hash, indexed_at FROM documents WHERE id IN"
        return {int(r[0]): f"{r[1]!r}:{r[2]}@{r[3]!r}" for r in self._where_in(sql, doc_ids)}

    def section_chunks(
        self, keys: Iterable[tuple[int, int, int]]
    ) -> dict[tuple[int, int, int], list[tuple[int, str, str]]]:
        """(doc id, first section, last section) -> the (id, heading, text) of
        each chunk spanning those sections, in order: only those chunks read."""
        keys = sorted(set(keys))
        out: dict[tuple[int, int, int], list[tuple[int, str, str]]] = {}
        sql = (
            "SELECT doc_id, section_first, section_last, id, heading, text FROM chunks"
            " WHERE (doc_id, section_first, section_last) IN (VALUES {marks}) ORDER BY ordinal"
        )
        with self._file.reading() as db:
            for i in range(0, len(keys), 300):
                part = keys[i : i + 300]
                marks = ",".join(["(?,?,?)"] * len(part))
                args = [v for k in part for v in k]
                for r in db.execute(sql.format(marks=marks), args).fetchall():
                    out.setdefault((int(r[0]), int(r[1]), int(r[2])), []).append(
                        (int(r[3]), r[4], r[5])
                    )
        return out

    def document_section_chunks(
        self, path: str, texts: bool = True
    ) -> dict[tuple[str, int, int], list[tuple[int, str, str]]]:
        """(path, first section, last section) -> the (id, heading, text) of each
        chunk of one document spanning those sections, in order (no other column;
        without ``texts``, each text's hash in its place)."""
        sql = (
            "SELECT d.path, c.section_first, c.section_last, c.id, c.heading,"
            f" c.{'text' if texts else 'text_hash'} FROM chunks c"
            " JOIN documents d ON d.id = c.doc_id WHERE d.path=? ORDER BY c.ordinal"
        )
        out: dict[tuple[str, int, int], list[tuple[int, str, str]]] = {}
        with self._file.reading() as db:
            for r in db.execute(sql, (path_in(path),)).fetchall():
                key = (path_out(r[0]), int(r[1]), int(r[2]))
                out.setdefault(key, []).append((int(r[3]), r[4], r[5]))
        return out

    def texts(self, ids: Iterable[int]) -> dict[int, str]:
        return {
            int(a): b for a, b in self._where_in("SELECT id, text FROM chunks WHERE id IN", ids)
        }

    def document_chunks(self, path: str) -> list[ChunkRow]:
        with self._file.reading() as db:
            rows = db.execute(
                self._CHUNK_SQL + " WHERE d.path=? ORDER BY c.ordinal", (path_in(path),)
            ).fetchall()
        return [self._chunk(r) for r in rows]

    def document_hashes(self, path: str, passages: bool = True) -> set[str]:
        """Text hashes of one document's chunks and (unless ``passages`` is
        False) their passages."""
        sql = "SELECT c.text_hash FROM chunks c JOIN documents d ON d.id = c.doc_id WHERE d.path=?"
        args: tuple = (path_in(path),)
        if passages:
            sql += (
                " UNION SELECT p.text_hash FROM passages p JOIN chunks c ON c.id = p.chunk_id"
                " JOIN documents d ON d.id = c.doc_id WHERE d.path=?"
            )
            args = (path_in(path), path_in(path))
        with self._file.reading() as db:
            return {r[0] for r in db.execute(sql, args).fetchall()}

    def first_lines(self, ids: Iterable[int]) -> dict[int, int]:
        """chunk id -> its first line (0-based)."""
        return {
            int(a): int(b)
            for a, b in self._where_in("SELECT id, start_line FROM chunks WHERE id IN", ids)
        }

    def passage_places(self, passage_ids: Iterable[int]) -> dict[int, tuple[int, int, int]]:
        """Passage id -> (chunk id, start, end: character offsets into the chunk's text)."""
        return {
            int(r[0]): (int(r[1]), int(r[2]), int(r[3]))
            for r in self._where_in(
                "SELECT id, chunk_id, start_char, end_char FROM passages WHERE id IN",
                passage_ids,
            )
        }

    def count(self) -> int:
        with self._file.reading() as db:
            return int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])
