"""benchmarks/ is split by study (no file over the limit) and reads the index
only through the engine and ``index/store/survey.py``, never by SQL of its own."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MAX_LINES = 550
# Files that open an SQLite database that is not the index, and why.
OWN_DATABASES = {
    "baseline.py": "the plain baseline's own in-memory FTS5 table",
    "hostile_probe.py": "another application's database planted beside a vault",
}
SQLITE = re.compile(r"\bsqlite3\b|\.execute(many|script)?\(|\bstore\.db\b|\bstore\.file\.db\b")
STORE_SQL = re.compile(
    r"\b(from|join|into|update|delete\s+from)\s+(chunks|chunks_fts|vectors|documents|sections"
    r"|passages|meta)\b",
    re.IGNORECASE,
)


def files(root: Path) -> list[Path]:
    return sorted(p for p in (root / "benchmarks").rglob("*.py") if ".work" not in p.parts)


def long_files(root: Path = REPO) -> list[str]:
    out = []
    for p in files(root):
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES:
            out.append(f"{p.relative_to(root).as_posix()}: {n} lines")
    return out


def store_sql(root: Path = REPO) -> list[str]:
    """Lines that reach an SQLite connection outside :data:`OWN_DATABASES`,
    and lines anywhere whose SQL names a table of the index."""
    out = []
    for p in files(root):
        rel = p.relative_to(root / "benchmarks").as_posix()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if (rel not in OWN_DATABASES and SQLITE.search(line)) or STORE_SQL.search(line):
                out.append(f"benchmarks/{rel}:{i}: {line.strip()}")
    return out


def test_no_benchmarks_file_is_over_the_limit():
    found = long_files()
    assert found == [], f"over {MAX_LINES} lines (split by study):\n" + "\n".join(found)


def test_no_benchmarks_file_writes_sql_against_the_index():
    found = store_sql()
    assert found == [], "SQL against the index (use index/store/survey.py):\n" + "\n".join(found)


def test_the_checks_see_each_form(tmp_path: Path):
    b = tmp_path / "benchmarks"
    b.mkdir()
    (b / "fine.py").write_text("from mdseek.index.store import survey\nsurvey.text_hashes(p)\n")
    (b / "raw.py").write_text("import sqlite3\n")
    (b / "conn.py").write_text("eng.store.db.commit()\n")
    (b / "baseline.py").write_text('db.execute("SELECT rowid FROM s")\n')  # its own table
    (b / "sneaky.py").write_text('q = "SELECT min(embedding_text) FROM chunks"\n')
    (b / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert store_sql(tmp_path) == [
        "benchmarks/conn.py:1: eng.store.db.commit()",
        "benchmarks/raw.py:1: import sqlite3",
        'benchmarks/sneaky.py:1: q = "SELECT min(embedding_text) FROM chunks"',
    ]
    assert long_files(tmp_path) == [f"benchmarks/long.py: {MAX_LINES + 1} lines"]
