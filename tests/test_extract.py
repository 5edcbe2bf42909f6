"""Extract a section to a new note and inline it back (index/links/extract.py),
on small hand-written folders: the new note's text, the stub, every link that
follows, the refusals, and extract-then-inline giving back every file's bytes.
Expected values are written by hand."""

from __future__ import annotations

import pytest
from test_rename import Corpus, apply

from mdseek.index.links.edits import Outcome, RenameError
from mdseek.index.links.extract import extract_section, inline_note, inline_target
from mdseek.index.text.parse import parse_text

SRC = """# Database

Intro, see [promotion](#replica-promotion) and [lag](#lag).

## Replica promotion

Promote the replica. Back to [the intro](#database), on to [lag](#lag).

### Checks

Check the lag first.

## Lag

Keep it low.
"""

OTHER = """# Drill

Follow [the steps](db.md#replica-promotion), then [checks](./db.md#checks).
Also [the whole runbook](db.md).
"""

NEW = """# Replica promotion

Promote the replica. Back to [the intro](db.md#database), on to [lag](db.md#lag).

## Checks

Check the lag first.
"""

SRC_AFTER = """# Database

Intro, see [promotion](replica-promotion.md#replica-promotion) and [lag](#lag).

## [Replica promotion](replica-promotion.md)

## Lag

Keep it low.
"""

OTHER_AFTER = """# Drill

Follow [the steps](replica-promotion.md#replica-promotion), then [checks](./replica-promotion.md#checks).
Also [the whole runbook](db.md).
"""


def applied(files: dict[str, str], out: Outcome) -> dict[str, str]:
    """The folder once a client applied the outcome (created, edited, deleted)."""
    files = dict(files)
    for rel, text in out.creates:
        assert rel not in files
        files[rel] = text
    for rel, edits in out.edits.items():
        files[rel] = apply(files[rel], edits)
    for rel in out.deletes:
        del files[rel]
    assert not out.skipped
    return files


def heading(doc, text: str):
    return next(h for h in doc.headings if h.text == text)


def extract(files: dict[str, str], rel: str, text: str, wiki: bool = False):
    c = Corpus(files)
    doc = c.doc(rel)
    return extract_section(c, rel, doc, heading(doc, text), wiki)


def inline(files: dict[str, str], rel: str, line: int, col: int) -> dict[str, str]:
    c = Corpus(files)
    doc = c.doc(rel)
    it = inline_target(c, rel, doc, line, col)
    assert it is not None
    return applied(files, inline_note(c, rel, doc, it))


def test_extract_moves_the_section_and_every_link_follows():
    files = {"db.md": SRC, "drill.md": OTHER}
    dst, out = extract(files, "db.md", "Replica promotion")
    assert dst == "replica-promotion.md"
    after = applied(files, out)
    assert after == {"db.md": SRC_AFTER, "drill.md": OTHER_AFTER, "replica-promotion.md": NEW}


def test_inline_puts_it_back_byte_for_byte():
    files = {"db.md": SRC, "drill.md": OTHER}
    after = applied(files, extract(files, "db.md", "Replica promotion")[1])
    stub = SRC_AFTER.split("\n").index("## [Replica promotion](replica-promotion.md)")
    assert inline(after, "db.md", stub, 5) == files


def test_round_trip_in_a_subfolder_with_wiki_links_and_a_setext_title():
    src = "Runbook\n=======\n\n[[#Failover]] and [[#Failover|there]].\n\nFailover\n--------\n\nPromote. See [[other]].\n\n### Deep\n\nText.\n"
    files = {"ops/db.md": src, "other.md": "# Other\n\nSee [[db#Deep]] and [[db#Failover]].\n"}
    dst, out = extract(files, "ops/db.md", "Failover", wiki=True)
    assert dst == "ops/Failover.md"
    after = applied(files, out)
    assert (
        after["ops/Failover.md"]
        == "Failover\n========\n\nPromote. See [[other]].\n\n## Deep\n\nText.\n"
    )
    assert after["ops/db.md"] == (
        "Runbook\n=======\n\n[[Failover#Failover]] and [[Failover#Failover|there]].\n\n## [[Failover]]\n"
    )
    assert after["other.md"] == "# Other\n\nSee [[Failover#Deep]] and [[Failover#Failover]].\n"
    assert inline(after, "ops/db.md", 5, 4) == files


def test_extract_refuses_an_existing_file():
    files = {"db.md": SRC, "replica-promotion.md": "# Mine\n"}
    with pytest.raises(RenameError, match=r"^replica-promotion.md already exists"):
        extract(files, "db.md", "Replica promotion")


def test_inline_only_where_the_one_whole_link_stands_alone():
    files = {"db.md": SRC, "drill.md": OTHER}
    after = applied(files, extract(files, "db.md", "Replica promotion")[1])
    c = Corpus(after)
    doc = c.doc("db.md")
    assert inline_target(c, "db.md", doc, 2, 13) is None  # a link with an anchor
    twice = dict(after, **{"x.md": "# X\n\n[again](replica-promotion.md)\n"})
    c = Corpus(twice)
    assert inline_target(c, "db.md", c.doc("db.md"), 4, 5) is None  # two links name it whole
    assert inline_target(c, "x.md", c.doc("x.md"), 2, 3) is None
    fm = dict(
        after, **{"replica-promotion.md": "---\ntags: [a]\n---\n" + after["replica-promotion.md"]}
    )
    c = Corpus(fm)
    assert inline_target(c, "db.md", c.doc("db.md"), 4, 5) is None  # front matter


def test_a_link_on_a_line_of_its_own_goes_one_level_under_its_section():
    files = {"a.md": "# A\n\n## Part\n\n[Note](n.md)\n\nafter\n", "n.md": "# Note\n\n## Sub\n\nx\n"}
    got = inline(files, "a.md", 4, 1)
    assert got == {"a.md": "# A\n\n## Part\n\n### Note\n\n#### Sub\n\nx\n\nafter\n"}
    assert parse_text(got["a.md"]).headings[2].level == 3


def test_a_heading_that_names_no_file_is_refused():
    files = {"db.md": "# DB\n\n## ..\n\ntext\n"}
    for wiki in (False, True):
        with pytest.raises(RenameError, match=r"^the heading '\.\.' gives no file name$"):
            extract(files, "db.md", "..", wiki=wiki)
