"""Chunk invariants (hypothesis-generated markdown plus nasty cases), sized in the
model's own tokens, and the premise: the default model really truncates."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from chunk_checks import assert_tiles
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox import server_env

from mdseek.index.text.parse import parse_text

from conftest import FIXTURES

WORDS = st.sampled_from(
    "the replica database failover queue backlog certificate rotation pager on-call "
    "Postgres Redis Kubernetes deploy rollback café naïve 東京 émoji 🚀 x_y a-b "
    "(paren) [bracket] *star* `code` 42 3.14 e.g. end. why? yes!".split()
)


@st.composite
def paragraph(draw, max_words=400):
    n = draw(st.integers(1, max_words))
    words = draw(st.lists(WORDS, min_size=n, max_size=n))
    return " ".join(words) + draw(st.sampled_from([".", "", "?"]))


@st.composite
def fence(draw):
    marker = draw(st.sampled_from(["```", "~~~", "````"]))
    info = draw(st.sampled_from(["", "bash", "python title=x.py", "yaml"]))
    n = draw(st.integers(0, 150))
    body = [
        draw(st.sampled_from(["# comment", "## not a heading", "x = 1", "echo hi", "", "  - k: v"]))
        + f" {i}"
        for i in range(n)
    ]
    if marker == "````":
        body = ["```", "# nested", "```"] + body
    closed = draw(st.booleans())
    return "\n".join([marker + info, *body] + ([marker] if closed else []))


@st.composite
def block(draw):
    kind = draw(
        st.sampled_from(["h", "h", "p", "p", "p", "fence", "list", "setext", "quote", "html"])
    )
    if kind == "h":
        return "#" * draw(st.integers(1, 6)) + " " + draw(paragraph(max_words=6)).rstrip(".?")
    if kind == "setext":
        return (
            draw(paragraph(max_words=5)).rstrip(".?") + "\n" + draw(st.sampled_from(["===", "---"]))
        )
    if kind == "p":
        return draw(paragraph())
    if kind == "fence":
        return draw(fence())
    if kind == "list":
        items = draw(st.lists(paragraph(max_words=60), min_size=1, max_size=12))
        return "\n".join("- " + i for i in items)
    if kind == "quote":
        return "> " + draw(paragraph(max_words=80))
    return "<!--\n## Hidden heading\n-->"


@st.composite
def document(draw):
    blocks = draw(st.lists(block(), min_size=0, max_size=14))
    fm = draw(st.sampled_from(["", "---\ntitle: Generated\n---\n"]))
    return fm + "\n\n".join(blocks) + draw(st.sampled_from(["", "\n", "\n\n"]))


def check_invariants(md: str, chunker, tokenizer) -> list:
    doc = parse_text(md, "gen.md")
    chunks = chunker.chunk(doc)
    text = doc.text
    # 1. spans tile the body: consecutive, non-overlapping, no non-blank text outside
    assert_tiles(doc, chunks)
    # line spans are consistent with offsets and ordered
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert a.end_line <= b.start_line + 1 and a.start_line <= b.start_line
    # 2. every embedded text fits the window (recounted with the real tokenizer)
    for c in chunks:
        assert c.tokens == tokenizer.count(c.embedding_text) <= tokenizer.window
        assert (
            c.embedding_text.startswith(c.breadcrumb + "\n\n")
            or tokenizer.count(c.breadcrumb) > tokenizer.window // 2
        )
    # 3. no boundary inside a fence, except between its lines with a re-wrap
    for b in doc.blocks:
        if b.kind != "fence":
            continue
        fa, fz = doc.line_offset(b.start_line), doc.line_offset(b.end_line)
        for c in chunks[1:]:
            if fa < c.start_offset < fz:
                opener = text[fa : text.index("\n", fa) if "\n" in text[fa:] else fz].strip()
                assert c.embedding_text[len(c.breadcrumb) + 2 :].startswith(opener), "no re-wrap"
    # 4. headings inside code are never headings
    for h in doc.headings:
        for b in doc.blocks:
            if b.kind in ("fence", "code_block", "html_block"):
                assert not (b.start_line <= h.line < b.end_line)
    return chunks


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(md=document())
def test_chunk_invariants_generated(md, chunker, tokenizer):
    check_invariants(md, chunker, tokenizer)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(md=document())
def test_crlf_and_bom_give_the_same_chunks(md, chunker):
    from mdseek.index.text.parse import parse_bytes

    a = chunker.chunk(parse_bytes(md.encode(), "x.md"))
    b = chunker.chunk(parse_bytes(("\ufeff" + md.replace("\n", "\r\n")).encode(), "x.md"))
    assert [(c.start_line, c.end_line, c.embedding_text) for c in a] == [
        (c.start_line, c.end_line, c.embedding_text) for c in b
    ]


NASTY = {
    "one_huge_paragraph": "# T\n\n" + " ".join(f"word{i} is here." for i in range(3000)),
    "one_giant_word": "# T\n\n" + "x" * 30000,
    "giant_line_in_fence": "# T\n\n```json\n" + '{"k": 1},' * 4000 + "\n```\n",
    "long_fence": "# T\n\n```python\n"
    + "\n".join(f"# line {i}\nv{i} = {i}" for i in range(600))
    + "\n```\n",
    "unclosed_long_fence": "# T\n\n~~~\n" + "\n".join(f"## not {i}" for i in range(500)),
    "many_tiny_sections": "\n".join(f"## S{i}\nx" for i in range(300)),
    "huge_list": "# L\n\n" + "\n".join(f"- item {i} " + "lorem ipsum " * 40 for i in range(60)),
    "huge_table": "# T\n\n| a | b |\n|---|---|\n"
    + "\n".join(f"| {i} | " + "cell " * 30 + "|" for i in range(200)),
    "deep_breadcrumb": "".join(
        f"{'#' * (i % 6 + 1)} " + "long heading words " * 20 + "\n\ntext\n\n" for i in range(30)
    ),
    "only_front_matter": "---\ntitle: x\n---\n",
    "empty": "",
    "crlf_mixed": "# A\r\n\r\ntext\r\n## B\rmore\n",
    "refdefs": "# A\n\ntext [x][r]\n\n[r]: ./b.md#c\n[s]: http://example.com\n",
}


@pytest.mark.parametrize("name", sorted(NASTY))
def test_nasty_documents(name, chunker, tokenizer):
    chunks = check_invariants(NASTY[name], chunker, tokenizer)
    if name == "one_huge_paragraph":
        assert len(chunks) > 10
        # cut at sentence ends
        assert all(c.text.rstrip().endswith(".") for c in chunks)
    if name == "many_tiny_sections":
        # every section is its own chunk (no merge floor by default)
        assert len(chunks) == 300
        assert [c.sections for c in chunks] == [(i,) for i in range(300)]
    if name == "long_fence":
        inner = chunks[2]
        assert inner.embedding_text.split("\n\n", 1)[1].startswith("```python\n")
        assert inner.embedding_text.endswith("\n```")


def test_merge_forward_keeps_first_heading(tokenizer):
    from mdseek.index.text.chunk import Chunker

    md = "# Doc\n\n## Tiny\nshort.\n\n## Next\n" + "A real paragraph about queues. " * 20 + "\n"
    chunks = Chunker(tokenizer, floor=40).chunk(parse_text(md, "d.md"))
    first = chunks[0]
    assert first.heading == "Doc"
    assert first.sections == (0, 1, 2)  # Doc, Tiny and Next are all covered


def test_continuation_chunks_keep_breadcrumb(chunker):
    md = "# Guide\n\n## Deep\n\n### Part\n\n" + "\n\n".join(
        f"Paragraph {i} explains the scheduler in some detail and then some more." * 3
        for i in range(40)
    )
    chunks = chunker.chunk(parse_text(md, "g.md"))
    part = [c for c in chunks if c.sections == (2,)]  # the long section, cut in pieces
    assert len(part) > 3 and part[0].start_line == 4
    assert all(c.breadcrumb == "Guide > Deep > Part" for c in part)


def test_fixtures_coverage_is_100_percent_via_cli():
    out = subprocess.run(
        [sys.executable, "-m", "mdseek", "coverage", str(FIXTURES), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env=server_env(),
    )
    data = json.loads(out.stdout)
    assert data["coverage"] == 1.0
    assert len(data["files"]) >= 20 and data["body_tokens"] > 20000
    assert all(f["max_tokens"] <= data["window"] for f in data["files"].values())


def test_chunks_cli_json_fields(tmp_path):
    f = tmp_path / "a.md"
    f.write_text("# A\n\n## B\n\n" + "text " * 500 + "\n")
    out = subprocess.run(
        [sys.executable, "-m", "mdseek", "chunks", str(f), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env=server_env(),
    )
    rows = json.loads(out.stdout)
    assert rows and {
        "ordinal",
        "heading_path",
        "start_line",
        "end_line",
        "text",
        "embedding_text",
        "tokens",
    } <= set(rows[0])
    bad = subprocess.run(
        [sys.executable, "-m", "mdseek", "chunks", str(tmp_path / "nope.md")],
        capture_output=True,
        text=True,
        env=server_env(),
    )
    assert bad.returncode != 0 and "no such file" in bad.stderr


def test_premise_default_model_truncates_at_its_window(tokenizer):
    """The budget exists because text past the window changes nothing: append
    text past 256 word pieces and the vector stays identical. If a future model
    reads more, the measured window (and so the budget) follows it."""
    from mdseek.index.model.embed import Embedder

    emb = Embedder()
    base = " ".join(f"sentence {i} about database failover and replicas." for i in range(60))
    assert tokenizer.count(base) > tokenizer.window
    more = base + " Completely different tail text about holiday travel policy and budgets."
    v = emb.encode([base, more])
    assert np.allclose(v[0], v[1], atol=1e-6)
    short = " ".join(base.split()[:40])
    w = emb.encode([short, short + " holiday travel policy"])
    assert not np.allclose(w[0], w[1], atol=1e-3)
    assert tokenizer.window == emb.load().max_seq_length


def test_coverage_is_exactly_one_with_shortened_breadcrumbs(tmp_path, tokenizer):
    """Every body token is covered, so coverage is exactly 1.0, also where the
    chunker shortened an absurd breadcrumb (it reported 0.9999 by slicing the
    full breadcrumb off the embedded text). A truncated baseline stays below 1."""
    from mdseek.index.text.coverage import window_coverage

    (tmp_path / "deep.md").write_text(
        NASTY["deep_breadcrumb"] + "\n" + "words about the scheduler. " * 300
    )
    out = subprocess.run(
        [sys.executable, "-m", "mdseek", "coverage", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env=server_env(),
    )
    data = json.loads(out.stdout)
    assert data["coverage"] == 1.0 and data["files"]["deep.md"]["coverage"] == 1.0
    assert data["covered_tokens"] == data["body_tokens"] > 1000
    whole = window_coverage(tokenizer, [("", (tmp_path / "deep.md").read_text())])
    assert (
        0 < whole.fraction < 0.5
        and whole.covered_tokens == tokenizer.window - tokenizer.special_overhead()
    )
