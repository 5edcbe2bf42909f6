"""Where the index lives and that it stays there: the user cache by default, no
symlinks, private modes, corrupt/foreign/other-version files set aside or
refused (issue 13, items 3-5). Real SQLite files, the real CLI."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from sandbox import mdseek as cli

from mdseek.index.engine.engine import Engine
from mdseek.index.store import file as store_mod
from mdseek.index.store.location import IndexLocationError
from mdseek.index.store.store import APPLICATION_ID, IndexFileError, Store

from conftest import FIXTURES


@pytest.fixture()
def notes(tmp_path) -> Path:
    """Three short handbook documents, not indexed yet."""
    root = tmp_path / "notes"
    root.mkdir()
    for f in sorted((FIXTURES / "handbook" / "adr").glob("*.md"))[:3]:
        (root / f.name).write_bytes(f.read_bytes())
    return root


def mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def tree(p: Path) -> list[str]:
    return sorted(str(x.relative_to(p)) for x in p.rglob("*"))


# -- where ---------------------------------------------------------------------------------------


def test_default_index_is_in_the_user_cache_not_the_workspace(notes, tmp_path):
    cache = Path(os.environ["XDG_CACHE_HOME"])
    before = tree(notes)
    eng = Engine(notes)
    eng.index(embed=False)
    assert eng.location.kind == "cache"
    assert eng.index_path.parent.parent == cache / "mdseek" / "indexes"
    assert eng.index_path.parent.name.startswith("notes-")
    assert tree(notes) == before  # nothing written into the (maybe synced) folder
    assert eng.status().index_path == str(eng.index_path)
    eng.close()
    # Another folder with the same name gets its own index.
    twin = tmp_path / "elsewhere" / "notes"
    shutil.copytree(notes, twin)
    eng2 = Engine(twin)
    assert eng2.index_path != eng.index_path
    eng2.close()
    # The CLI says where the index is.
    st = cli("status", str(notes))
    assert st.returncode == 0, st.stderr
    assert re.search(rf"^index file: +{re.escape(str(eng.index_path))}$", st.stdout, re.M), (
        st.stdout
    )


def test_workspace_index_used_when_present_and_explicit_path_wins(notes, tmp_path):
    legacy = notes / ".mdseek" / "index.sqlite"
    legacy.parent.mkdir(mode=0o700)  # as mdseek makes it
    Store(legacy).close()
    eng = Engine(notes)
    assert eng.index_path == legacy and eng.location.kind == "workspace"
    eng.close()
    explicit = tmp_path / "my-index.sqlite"
    eng = Engine(notes, index_path=explicit)
    assert eng.index_path == explicit and eng.location.kind == "explicit"
    eng.close()
    run = cli("status", str(notes), "--json", env={"MDSEEK_INDEX": str(explicit)})
    assert run.returncode == 0 and str(explicit) in run.stdout


# -- symlinks (item 3) -------------------------------------------------------------------------


def test_symlinked_index_folder_is_refused(notes, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (notes / ".mdseek").symlink_to(elsewhere, target_is_directory=True)
    run = cli("index", str(notes), "--no-progress")
    assert run.returncode == 1
    assert "symlink" in run.stderr and str(notes / ".mdseek") in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert tree(elsewhere) == []  # nothing created through the link


def test_symlinked_index_file_is_refused_and_its_target_untouched(notes, tmp_path):
    user_file = tmp_path / "diary.txt"
    user_file.write_text("my private diary\n")
    (notes / ".mdseek").mkdir()
    (notes / ".mdseek" / "index.sqlite").symlink_to(user_file)
    run = cli("index", str(notes), "--no-progress")
    assert run.returncode == 1, run.stderr
    assert (
        "symlink" in run.stderr and "index.sqlite" in run.stderr and "Traceback" not in run.stderr
    )
    assert user_file.read_text() == "my private diary\n"
    # The same through --db, and for the WAL beside a real index file.
    run = cli("index", str(notes), "--no-progress", "--db", str(notes / ".mdseek" / "index.sqlite"))
    assert run.returncode == 1 and "symlink" in run.stderr
    db = tmp_path / "idx" / "index.sqlite"
    db.parent.mkdir()
    (db.parent / "index.sqlite-wal").symlink_to(user_file)
    with pytest.raises(IndexLocationError, match="index.sqlite-wal"):
        Engine(notes, index_path=db)
    assert user_file.read_text() == "my private diary\n"


def test_symlinked_cache_folder_is_refused(notes, tmp_path):
    eng = Engine(notes)
    folder = eng.index_path.parent
    eng.close()
    shutil.rmtree(folder)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(IndexLocationError, match=str(folder)):
        Engine(notes)
    assert issubclass(IndexLocationError, IndexFileError)  # what the CLI and server catch
    assert tree(elsewhere) == []


# -- private (item 4) --------------------------------------------------------------------------


def test_index_folder_and_files_are_private(notes):
    old = os.umask(0o022)  # a usual umask: files 0644, folders 0755 unless made private
    try:
        eng = Engine(notes)
        eng.index(embed=False)  # writes: the WAL and SHM exist while the engine is open
        folder = eng.index_path.parent
        files = [eng.index_path, *(folder / f"index.sqlite{s}" for s in ("-wal", "-shm"))]
        assert all(f.exists() for f in files)
        eng.embed_pending()  # takes the embed lock: its file too
        assert mode(folder) == 0o700
        assert {f.name: mode(f) for f in [*files, folder / "index.sqlite.lock"]} == {
            f.name: 0o600 for f in [*files, folder / "index.sqlite.lock"]
        }
        assert mode(folder.parent) == 0o700  # .../mdseek/indexes, created by mdseek
        eng.close()
        # An index in the folder that others can read (0755 folder, 0644 file: as a
        # clone leaves it, or an older mdseek) is not trusted: the cache's is used.
        legacy = notes / ".mdseek"
        legacy.mkdir(mode=0o755)
        shutil.copy(eng.index_path, legacy / "index.sqlite")
        os.chmod(legacy / "index.sqlite", 0o644)
        cached = eng.index_path
        eng = Engine(notes)
        assert eng.index_path == cached and eng.location.kind == "cache"
        assert eng.notices[0].startswith(f"not using the index {legacy / 'index.sqlite'}: ")
        assert "readable or writable by others (mode 755)" in eng.notices[0]
        eng.close()
    finally:
        os.umask(old)


# -- corrupt, foreign, other versions (item 5) --------------------------------------------------


def test_corrupt_index_is_set_aside_and_rebuilt(notes):
    bad = notes / ".mdseek" / "index.sqlite"
    bad.parent.mkdir(mode=0o700)  # as mdseek makes it
    garbage = os.urandom(64 * 1024)
    bad.write_bytes(garbage)
    bad.chmod(0o600)
    run = cli("index", str(notes), "--no-progress")
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    warning = [ln for ln in run.stderr.splitlines() if "moved it to" in ln]
    assert len(warning) == 1 and "not a readable SQLite database" in warning[0]
    kept = [p for p in bad.parent.iterdir() if p.name.startswith("index.sqlite.unreadable-")]
    assert len(kept) == 1 and kept[0].read_bytes() == garbage  # never deleted
    assert kept[0].name in warning[0]
    found = cli("search", str(notes), "postgres job state", "--mode", "lexical", "--json")
    assert found.returncode == 0 and '"path"' in found.stdout


def test_damaged_index_is_found_on_open_and_set_aside(notes, tmp_path):
    path = tmp_path / "index.sqlite"
    eng = Engine(notes, index_path=path)
    eng.index(embed=False)
    eng.close()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 4 * page
    data[2 * page :] = os.urandom(len(data) - 2 * page)  # the header and schema survive
    path.write_bytes(bytes(data))
    run = cli(
        "index", str(notes), "--no-progress", "--db", str(path)
    )  # an explicit path, but mdseek's own file
    assert run.returncode == 0, run.stderr
    assert (
        "is damaged" in run.stderr and "moved it to" in run.stderr and "Traceback" not in run.stderr
    )
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("index.sqlite.damaged-")]
    assert len(aside) == 1 and aside[0].read_bytes() == bytes(data)
    st = cli("status", str(notes), "--db", str(path), "--json")
    assert '"files": 3' in st.stdout


def test_foreign_file_at_an_explicit_path_is_refused_untouched(notes, tmp_path):
    theirs = tmp_path / "app.sqlite"
    db = sqlite3.connect(theirs)
    db.execute("CREATE TABLE invoices(id INTEGER PRIMARY KEY, total REAL)")
    db.execute("INSERT INTO invoices(total) VALUES (12.5)")
    db.commit()
    db.close()
    before = theirs.read_bytes()
    run = cli("index", str(notes), "--no-progress", "--db", str(theirs))
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "not an mdseek index" in run.stderr and str(theirs) in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert theirs.read_bytes() == before and not Path(str(theirs) + "-wal").exists()
    # Random bytes there are not mdseek's either: refused, not moved.
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"\x00" * 100 + os.urandom(4000))
    run = cli("index", str(notes), "--no-progress", "--db", str(junk))
    assert run.returncode == 1 and "not a readable SQLite database" in run.stderr
    assert "Traceback" not in run.stderr and junk.exists()


def test_foreign_file_in_mdseeks_own_folder_is_set_aside(notes):
    own = notes / ".mdseek" / "index.sqlite"
    own.parent.mkdir(mode=0o700)  # as mdseek makes it
    db = sqlite3.connect(own)
    db.execute("CREATE TABLE t(x)")
    db.commit()
    db.close()
    own.chmod(0o600)
    eng = Engine(notes)
    assert eng.notices and "not an mdseek index" in eng.notices[0]
    assert Store(eng.index_path).db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    aside = [p for p in own.parent.iterdir() if p.name.startswith("index.sqlite.foreign-")]
    assert len(aside) == 1
    assert sqlite3.connect(aside[0]).execute("SELECT count(*) FROM t").fetchone()[0] == 0
    eng.close()


def test_index_of_a_newer_mdseek_is_set_aside_even_at_an_explicit_path(notes, tmp_path):
    path = tmp_path / "index.sqlite"
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={store_mod.SCHEMA_VERSION + 5}")
    db.commit()
    db.close()
    run = cli("index", str(notes), "--no-progress", "--db", str(path))
    assert run.returncode == 0, run.stderr
    assert "newer mdseek" in run.stderr and "moved it to" in run.stderr
    assert any(p.name.startswith("index.sqlite.newer-") for p in tmp_path.iterdir())
    st = cli("status", str(notes), "--db", str(path), "--json")
    assert '"files": 3' in st.stdout


def test_older_schema_is_migrated_or_rebuilt(notes, tmp_path, monkeypatch):
    path = tmp_path / "index.sqlite"
    eng = Engine(notes, index_path=path)
    eng.index(embed=False)
    n_docs = len(eng.store.documents.all())
    eng.close()
    v = store_mod.SCHEMA_VERSION
    # A migration that can run in place: the data stays.
    monkeypatch.setattr(store_mod, "SCHEMA_VERSION", v + 1)
    monkeypatch.setitem(store_mod._MIGRATIONS, v + 1, "CREATE TABLE extra (x INTEGER)")
    s = Store(path)
    assert s.migrated_from == v and len(s.documents.all()) == n_docs
    assert s.notice and "migrated" in s.notice
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == v + 1
    s.close()
    # One that cannot: the old index is set aside (kept) and a new one started.
    monkeypatch.setattr(store_mod, "SCHEMA_VERSION", v + 2)
    monkeypatch.setitem(store_mod._MIGRATIONS, v + 2, None)
    s = Store(path)
    assert s.notice and "older mdseek" in s.notice and not s.documents.all()
    assert any(p.name.startswith(f"index.sqlite.schema{v + 1}-") for p in tmp_path.iterdir())
    s.close()


def test_search_meeting_a_damaged_index_says_how_to_recover(notes, tmp_path):
    """A one-shot search skips the quick_check on open (seconds per search at
    100k chunks): damage it meets later is one line saying what to run."""
    path = tmp_path / "index.sqlite"
    eng = Engine(notes, index_path=path)
    eng.index(embed=False)
    eng.close()
    db = sqlite3.connect(path)
    (root,) = db.execute("SELECT rootpage FROM sqlite_master WHERE name='vectors'").fetchone()
    (page,) = db.execute("PRAGMA page_size").fetchone()
    db.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * page : root * page] = b"\xff" * page  # the vectors table's root page
    path.write_bytes(bytes(data))
    found = cli("search", str(notes), "postgres job state", "--db", str(path))
    assert found.returncode == 1 and "Traceback" not in found.stderr, found.stderr
    assert "is damaged" in found.stderr and "`mdseek index " in found.stderr, found.stderr
    assert path.read_bytes() == bytes(data)  # left as it was
    run = cli(
        "index", str(notes), "--no-progress", "--db", str(path)
    )  # checks on open: set aside, rebuilt
    assert run.returncode == 0 and "moved it to" in run.stderr, run.stderr
