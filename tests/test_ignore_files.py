"""Ignore files (.gitignore, .ignore, .mdseekignore): what they leave out of
the scan, of every reader's check, of the index after a restart, and of the
link check; the setting that turns them off; their cost on bad input (as
ratios measured side by side, never absolute times). Real files, the real
engine and SQLite."""

from __future__ import annotations

import time
from pathlib import Path

from mdseek.index.engine.engine import Engine
from mdseek.index.text.files import FileFilter, check_file, other_files, scan
from mdseek.index.text.ignore import Ignores

from conftest import write_tree as _tree


def _docs(root: Path) -> Path:
    return _tree(
        root,
        {
            ".gitignore": "_site/\n*.draft.md\n!keep/*.draft.md\n/build.md\n",
            "docs/.gitignore": "!*.draft.md\nold/\n",
            "docs/.mdseekignore": "secret*.md\n",
            ".ignore": "scratch.md\n",
            "a.md": "# A\n\nglacier runbook\n",
            "build.md": "# Build\n\nglacier\n",
            "sub/build.md": "# Sub build\n\nglacier\n",
            "x.draft.md": "# Draft\n\nglacier\n",
            "keep/y.draft.md": "# Kept draft\n\nglacier\n",
            "docs/z.draft.md": "# Docs draft\n\nglacier\n",
            "docs/secret1.md": "# Secret\n\nglacier\n",
            "docs/old/o.md": "# Old\n\nglacier\n",
            "scratch.md": "# Scratch\n\nglacier\n",
            "_site/a.md": "# A copy\n\nglacier runbook\n",
            "_site/deep/b.md": "# B copy\n\nglacier\n",
            "_site/pic.png": "png",
            "pic.png": "png",
        },
    )


KEPT = ["a.md", "docs/z.draft.md", "keep/y.draft.md", "sub/build.md"]


def test_nested_files_negation_and_which_file_says_so(tmp_path):
    root = _docs(tmp_path)
    ig = Ignores(root.resolve())
    assert ig.why("_site/deep/b.md") == "ignored by .gitignore"
    assert ig.why("x.draft.md") == "ignored by .gitignore"
    assert ig.why("keep/y.draft.md") is None  # "!keep/*.draft.md" takes it back
    assert ig.why("docs/z.draft.md") is None  # a deeper file's "!" wins
    assert ig.why("docs/secret1.md") == "ignored by docs/.mdseekignore"
    assert ig.why("docs/old/o.md") == "ignored by docs/.gitignore"
    assert ig.why("scratch.md") == "ignored by .ignore"
    assert ig.why("build.md") == "ignored by .gitignore" and ig.why("sub/build.md") is None
    # A file inside an ignored folder stays ignored, whatever a deeper "!" says.
    _tree(root, {"_site/.gitignore": "!*.md\n"})
    assert Ignores(root.resolve()).why("_site/a.md") == "ignored by .gitignore"


def test_scan_check_file_and_other_files_leave_ignored_files_out(tmp_path):
    root = _docs(tmp_path)
    ignored: list[tuple[str, str]] = []
    assert sorted(f.rel for f in scan(root, FileFilter(), ignored=ignored)) == KEPT
    assert sorted(ignored) == [
        ("_site/a.md", "ignored by .gitignore"),
        ("_site/deep/b.md", "ignored by .gitignore"),
        ("build.md", "ignored by .gitignore"),
        ("docs/old/o.md", "ignored by docs/.gitignore"),
        ("docs/secret1.md", "ignored by docs/.mdseekignore"),
        ("scratch.md", "ignored by .ignore"),
        ("x.draft.md", "ignored by .gitignore"),
    ]
    why: list[str] = []
    assert check_file(root, root / "_site/a.md", FileFilter(), lambda r, w: why.append(w)) is None
    assert why == ["ignored by .gitignore"]
    assert check_file(root, root / "a.md", FileFilter()) is not None
    others = other_files(root, FileFilter())
    assert "pic.png" in others and "_site/pic.png" not in others
    off = FileFilter(ignore_files=False)
    assert len(list(scan(root, off))) == len(KEPT) + 7
    assert check_file(root, root / "_site/a.md", off) is not None


def test_an_index_drops_newly_ignored_files_on_restart_and_status_counts_them(tmp_path):
    root = _tree(
        tmp_path / "ws",
        {"a.md": "# A\n\nglacier runbook\n", "_site/a.md": "# A copy\n\nglacier runbook\n"},
    )
    eng = Engine(root)
    try:
        eng.index()
        assert {r.path for r in eng.search("glacier runbook", mode="lexical").results} == {
            "a.md",
            "_site/a.md",
        }
        assert eng.status().ignored_files == 0
    finally:
        eng.close()
    (root / ".gitignore").write_text("_site/\n")
    eng = Engine(root)  # a restart: the reconcile finds the file ignored now
    try:
        rep = eng.index()
        assert rep.removed == 1 and rep.ignored == [("_site/a.md", "ignored by .gitignore")]
        assert [r.path for r in eng.search("glacier runbook", mode="lexical").results] == ["a.md"]
        st = eng.status()
        assert (st.ignored_files, st.ignored_by) == (1, {".gitignore": 1})
        assert eng.index_file(root / "_site/a.md").files == 0  # a save of it: not indexed
    finally:
        eng.close()


def _time(fn, reps: int) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, time.perf_counter() - t0)
    return best


def test_a_10000_line_gitignore_costs_ten_times_a_1000_line_one(tmp_path):
    """Linear in the lines: reading 10x the lines, then checking paths, costs
    about 10x (a bound of 30x: a ratio measured side by side, so a loaded
    machine slows both; the best of two fresh copies each)."""
    times: dict[int, float] = {}
    for n in (1000, 10_000):
        lines = [f"gen{i}/*.md" if i % 2 else f"!other{i}.txt" for i in range(n)]
        for copy in range(2):
            root = _tree(
                tmp_path / f"{n}-{copy}",
                {".gitignore": "\n".join(lines) + "\n", "gen7/c.md": "x"},
            ).resolve()
            t0 = time.perf_counter()
            ig = Ignores(root)  # the first check reads and compiles the file
            for i in range(50):
                ig.why(f"a/n{i}.md")
            took = time.perf_counter() - t0
            times[n] = min(times.get(n, took), took)
            assert ig.why("gen7/c.md") == "ignored by .gitignore"
            assert ig.why("a/other7.txt") is None
    assert times[10_000] / times[1000] < 30, times


def test_pathological_patterns_stay_linear_in_the_name(tmp_path):
    """``*a*a*a*a*a*b`` against ``aaa...``: plain regex translation backtracks
    (a 200-character name took pathspec's own pattern 174 s); here a name 8x
    longer costs at most about 8x (bound 32x, side by side)."""
    _tree(tmp_path, {".gitignore": "*a*a*a*a*a*b\n[a-z]*a*a*?*a*c\n**/*a*a*a*/**/*b*b*d\n"})
    ig = Ignores(tmp_path.resolve())
    short, long = "a" * 250, "a" * 2000
    assert ig.why("x/" + short) is None and ig.why("x/" + short + "b") == "ignored by .gitignore"
    t_short = _time(lambda: ig.why("x/" + short), 200)
    t_long = _time(lambda: ig.why("x/" + long), 200)
    assert t_long / t_short < 32, (t_short, t_long)


def test_the_command_line_counts_ignored_files_and_the_flag_turns_them_off(tmp_path):
    import json

    from sandbox import mdseek

    root = _tree(
        tmp_path / "ws",
        {
            ".gitignore": "_site/\n",
            "a.md": "# A\n\nglacier\n",
            "_site/a.md": "# A copy\n\nglacier\n",
        },
    )

    r = mdseek("index", str(root), "--no-progress")
    assert r.returncode == 0 and "1 ignored" in r.stdout, r
    st = json.loads(mdseek("status", str(root), "--json").stdout)
    assert (st["files"], st["ignored_files"], st["ignored_by"]) == (1, 1, {".gitignore": 1})
    r = mdseek("search", str(root), "glacier", "--mode", "lexical", "--json", "--no-progress")
    assert [x["path"] for x in json.loads(r.stdout)["results"]] == ["a.md"]
    r = mdseek("search", str(root), "glacier", "--no-ignore-files", "--mode", "lexical")
    assert r.returncode != 0 and "--no-ignore-files" not in r.stderr and "ignore files" in r.stderr
    r = mdseek("index", str(root), "--no-progress", "--no-ignore-files")
    assert r.returncode == 0 and "0 ignored" in r.stdout, r
    r = mdseek("search", str(root), "glacier", "--mode", "lexical", "--json", "--no-progress")
    assert sorted(x["path"] for x in json.loads(r.stdout)["results"]) == ["_site/a.md", "a.md"]
