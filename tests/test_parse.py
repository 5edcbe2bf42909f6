"""Parsing: headings from markdown-it tokens only, titles, anchors, line numbers."""

from __future__ import annotations

import logging

from mdseek.index.text.parse import parse_bytes, parse_text
from mdseek.index.text.slug import Slugger, github_slug


def headings(md: str) -> list[tuple[int, str, int]]:
    return [(h.level, h.text, h.line) for h in parse_text(md).headings]


def test_atx_and_setext_levels_and_lines():
    md = "# One\n\ntext\n\nTwo\n===\n\nThree\n---\n\n###### Six\n"
    assert headings(md) == [(1, "One", 0), (1, "Two", 4), (2, "Three", 7), (6, "Six", 10)]
    h = parse_text(md).headings
    assert (h[1].line, h[1].end_line) == (4, 6)  # setext: text + underline


def test_hash_lines_that_are_not_headings():
    md = "\n".join(
        [
            "# Real",
            "```bash",
            "# a shell comment",
            "## not a heading",
            "```",
            "~~~",
            "# tilde fence",
            "~~~",
            "````markdown",
            "```",
            "# inside nested fence",
            "```",
            "````",
            "",
            "    # indented code",
            "",
            "<!--",
            "## Hidden heading",
            "-->",
            "",
            "#hashtag without space",
            "",
            "## Also real",
        ]
    )
    assert headings(md) == [(1, "Real", 0), (2, "Also real", 22)]


def test_unclosed_fence_runs_to_end():
    md = "# A\n```\n# inside\n## still inside\n"
    assert headings(md) == [(1, "A", 0)]
    doc = parse_text(md)
    assert doc.blocks[-1].kind == "fence" and doc.blocks[-1].end_line == 4


def test_headings_in_blockquotes_and_lists_are_body_text():
    md = "# Doc\n\n> ## Quoted\n\n- ## Listed\n\n## Real\n"
    doc = parse_text(md)
    assert [h.text for h in doc.headings] == ["Doc", "Real"]
    assert [s.title for s in doc.sections] == ["Doc", "Real"]


def test_title_precedence():
    fm = "---\ntitle: From Front Matter\n---\n# Heading Title\n"
    assert parse_text(fm, "x.md").title == "From Front Matter"
    assert parse_text("# Heading Title\n\nbody\n", "x.md").title == "Heading Title"
    assert parse_text("## Not a title\n", "dir/file-name.md").title == "file-name"
    assert parse_text("just text\n", "notes/plain.md").title == "plain"


def test_front_matter_is_neither_heading_nor_body():
    md = "---\ntitle: T\ntags: [a]\n# not: heading\n---\nbody\n"
    doc = parse_text(md)
    assert doc.headings == [] and doc.body_start_line == 5
    assert doc.sections[0].start_line == 5


def test_bad_front_matter_yaml_is_ignored(caplog):
    with caplog.at_level(logging.WARNING):
        doc = parse_text("---\ntitle: [unclosed\n---\n# H\n", "x.md")
    assert doc.title == "H"


def test_breadcrumb_skips_title_h1():
    doc = parse_text("# Guide\n\n## Setup\n\n### Linux\n\n## Use\n", "g.md")
    assert [s.breadcrumb for s in doc.sections] == [
        "Guide",
        "Guide > Setup",
        "Guide > Setup > Linux",
        "Guide > Use",
    ]
    doc = parse_text("---\ntitle: Handbook\n---\n# Intro\n## Part\n")
    assert doc.sections[1].breadcrumb == "Handbook > Intro > Part"


def test_github_slugs():
    assert github_slug("Promote the replica") == "promote-the-replica"
    assert github_slug('Rollback — step 2: "undo" the migrate command') == (
        "rollback--step-2-undo-the-migrate-command"
    )
    assert github_slug("Café budget") == "café-budget"
    assert github_slug("snake_case and-dash!") == "snake_case-and-dash"
    s = Slugger()
    assert [s.slug("Verification") for _ in range(3)] == [
        "verification",
        "verification-1",
        "verification-2",
    ]
    # inline markup is removed before slugging, like a rendered heading
    doc = parse_text("## Run `migrate` *now*\n")
    assert doc.headings[0].text == "Run migrate now" and doc.headings[0].slug == "run-migrate-now"


def test_line_endings_and_bom_keep_line_numbers():
    lf = "# A\n\ntext\n\n## B\n\nmore\n"
    for variant in (lf, lf.replace("\n", "\r\n"), lf.replace("\n", "\r"), "\ufeff" + lf):
        doc = parse_bytes(variant.encode("utf-8"), "x.md")
        assert [(h.text, h.line) for h in doc.headings] == [("A", 0), ("B", 4)], repr(variant)
    doc = parse_bytes(b"\xef\xbb\xbf# T\n", "x.md")
    assert doc.title == "T"


def test_invalid_utf8_is_replaced_and_logged(caplog):
    """A few bad bytes in a UTF-8 file (it holds UTF-8's multibyte "é") are
    replaced and logged; bytes that are all valid cp1252 and not UTF-8 are read
    as cp1252 (a Latin-1 note), logged too."""
    with caplog.at_level(logging.WARNING):
        doc = parse_bytes(b"# Caf\xc3\xa9\n\nbad \xff\xfe bytes\n", "bad.md")
    assert doc.decode_errors == 2 and doc.text.count("\ufffd") == 2
    assert doc.headings[0].text == "Café"
    assert any("invalid UTF-8" in r.message for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        doc = parse_bytes(b"# Caf\xe9\n\nbad \xff\xfe bytes\n", "latin.md")
    assert doc.decode_errors == 0 and doc.headings[0].text == "Café"
    assert "bad \xff\xfe bytes" in doc.text
    assert any("read as cp1252" in r.message for r in caplog.records)


def test_empty_and_headingless_files():
    assert parse_text("", "e.md").sections == []
    assert parse_text("\n\n  \n", "e.md").headings == []
    doc = parse_text("para one\n\npara two\n", "p.md")
    assert len(doc.sections) == 1 and doc.sections[0].heading is None
    assert (doc.sections[0].start_line, doc.sections[0].end_line) == (0, 3)
