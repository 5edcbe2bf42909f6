"""Re-parsing only around an edit gives exactly the full parse (hypothesis,
fixed seed, generated markdown and generated edits)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_chunk_fuzz import block, document

from mdseek.index.text.parse import REPARSE_STATS, parse_text, reparse

EXAMPLES = int(os.environ.get("MDSEEK_FUZZ_EXAMPLES", "150"))

EDIT_LINES = st.sampled_from(
    [
        "",
        "plain words here",
        "# New heading",
        "## Sub",
        "```",
        "~~~python",
        "---",
        "***",
        "===",
        "[r9]: ./x.md",
        "<div>",
        "</div>",
        "    indented code",
        "| a | b |",
        "|---|---|",
        "- item",
        "> quote",
        "title: x",
        "<!--",
        "-->",
        "1. first",
    ]
)


@st.composite
def edited(draw):
    md = draw(document())
    lines = md.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines)))
        op = draw(st.sampled_from(["insert", "insert", "delete", "replace", "append", "block"]))
        if op == "insert":
            lines.insert(i, draw(EDIT_LINES))
        elif op == "delete" and lines:
            del lines[min(i, len(lines) - 1) : min(len(lines), i + draw(st.integers(1, 4)))]
        elif op == "replace" and lines:
            lines[min(i, len(lines) - 1)] = draw(EDIT_LINES)
        elif op == "append" and lines:
            lines[min(i, len(lines) - 1)] += " more words"
        else:
            lines[i:i] = draw(block()).split("\n")
    return md, "\n".join(lines)


def shape(doc):
    return (
        doc.text,
        doc.title,
        doc.headings,
        doc.blocks,
        doc.sections,
        doc.body_start_line,
        doc.line_count,
        doc.front_matter,
    )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(pair=edited())
def test_reparse_equals_full_parse(pair):
    before, after = pair
    old = parse_text(before, "gen.md")
    assert shape(reparse(old, after)) == shape(parse_text(after, "gen.md"))


def test_reparse_of_one_line_edit_in_a_big_file():
    sections = [f"## Part {i}\n\nwords of part {i}.\n\n```\ncode {i}\n```\n" for i in range(300)]
    md = "---\ntitle: Big\n---\n# Big\n\n" + "\n".join(sections)
    old = parse_text(md, "big.md")
    for edit, how in (
        (md.replace("words of part 150.", "words of part 150, edited."), "partial"),
        (md.replace("code 150\n```", "code 150"), "full"),  # an unclosed fence swallows the rest
        (
            md.replace("## Part 10\n", "## Part 10\n\n[ref]: ./x.md\n"),
            "full",
        ),  # references change headings
        (md.replace("## Part 299\n", "Part 299\n---\n"), "partial"),
        (md.replace("title: Big", "title: Bigger"), "full"),
    ):
        before = dict(REPARSE_STATS)
        assert shape(reparse(old, edit, 0)) == shape(parse_text(edit, "big.md"))
        assert REPARSE_STATS[how] == before[how] + 1, how
