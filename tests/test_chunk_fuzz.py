"""Property tests of the chunker over generated markdown (hypothesis, fixed seed,
bounded examples), plus hostile inputs generated here: the real tokenizer counts
everything.

Properties checked on every generated document:
* spans in order: chunks tile the body in order, no overlap, no text left out;
* 100% coverage: every body token is inside some chunk's window (the
  embedded text fits, counted by the real tokenizer);
* no chunk boundary inside a fence that fits the window on its own;
* a boundary inside a bigger fence is between lines, and the piece is re-wrapped.

The generator leans on the shapes fuzzing once caught: a fence right after link
reference definitions, a fence right after a thematic break under a heading,
fences right after headings, setext headings, tables, lists and quotes.
"""

from __future__ import annotations

import base64
import os
import random
import time

import pytest
from chunk_checks import assert_tiles
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdseek.index.text.chunk import Chunker
from mdseek.index.text.coverage import window_coverage
from mdseek.index.text.encoding import NotText
from mdseek.index.text.parse import parse_bytes, parse_text

WORDS = st.sampled_from(
    "the replica database failover queue backlog certificate rotation pager on-call "
    "Postgres Redis deploy rollback café naïve 東京 🚀 x_y a-b (paren) [link](./a.md) "
    "*star* `code` 42 3.14 e.g. end. why? yes! supercalifragilisticexpialidocious".split()
)


@st.composite
def words(draw, lo=1, hi=60):
    n = draw(st.integers(lo, hi))
    return " ".join(draw(st.lists(WORDS, min_size=n, max_size=n)))


@st.composite
def fence(draw):
    marker = draw(st.sampled_from(["```", "~~~", "````", "~~~~~"]))
    info = draw(st.sampled_from(["", "bash", "python title=x.py", "yaml {.x}"]))
    n = draw(st.integers(0, 120))
    line = st.sampled_from(
        ["# comment", "## not a heading", "x = 1", "echo hi", "", "  - k: v", "[r]: x"]
    )
    body = [draw(line) + f" {i}" for i in range(n)]
    closed = draw(st.integers(0, 9)) > 0
    return "\n".join([marker + info, *body] + ([marker] if closed else []))


BLOCKS = [
    "h",
    "h",
    "setext",
    "p",
    "p",
    "fence",
    "fence",
    "list",
    "quote",
    "table",
    "hr",
    "refs",
    "html",
    "indented",
]


@st.composite
def block(draw):
    kind = draw(st.sampled_from(BLOCKS))
    if kind == "h":
        return "#" * draw(st.integers(1, 6)) + " " + draw(words(1, 6))
    if kind == "setext":
        return draw(words(1, 5)) + "\n" + draw(st.sampled_from(["===", "---"]))
    if kind == "p":
        return draw(words(1, 300))
    if kind == "fence":
        return draw(fence())
    if kind == "list":
        mark = draw(st.sampled_from(["-", "*", "1."]))
        return "\n".join(
            f"{mark} {w}" for w in draw(st.lists(words(1, 40), min_size=1, max_size=10))
        )
    if kind == "quote":
        return "\n".join("> " + w for w in draw(st.lists(words(1, 40), min_size=1, max_size=6)))
    if kind == "table":
        rows = draw(st.integers(1, 30))
        return "| a | b |\n|---|---|\n" + "\n".join(
            f"| {i} | " + draw(words(1, 12)) + " |" for i in range(rows)
        )
    if kind == "hr":
        return draw(st.sampled_from(["---", "***", "___", "- - -"]))
    if kind == "refs":
        n = draw(st.integers(1, 4))
        return "\n".join(f"[r{i}]: ./doc{i}.md#part 'title {i}'" for i in range(n))
    if kind == "html":
        return "<div>\n" + draw(words(1, 30)) + "\n</div>"
    return "\n".join("    " + draw(words(1, 10)) for _ in range(draw(st.integers(1, 20))))


@st.composite
def document(draw):
    parts = draw(st.lists(block(), min_size=0, max_size=16))
    # Blocks often follow each other with no blank line (a fence right after
    # reference definitions or a thematic break), sometimes with one or two.
    seps = draw(
        st.lists(
            st.sampled_from(["\n", "\n", "\n\n", "\n\n\n"]),
            min_size=len(parts),
            max_size=len(parts),
        )
    )
    fm = draw(st.sampled_from(["", "", "---\ntitle: Generated\n---\n"]))
    body = "".join(p + s for p, s in zip(parts, seps, strict=True))
    return fm + body


def fences_of(doc):
    text = doc.text
    for b in doc.blocks:
        if b.kind == "fence":
            yield b, doc.line_offset(b.start_line), doc.line_offset(b.end_line), text


def prefix(c, tok, chunker) -> str:
    """The breadcrumb the chunk's embedded text starts with: the full one, or a
    shortened one when the full one would take over half the window."""
    full = c.breadcrumb + "\n\n"
    if c.embedding_text.startswith(full):
        return full
    assert tok.count(c.breadcrumb) > chunker.budget // 2, "embedded text without its breadcrumb"
    short = c.embedding_text.split("\n\n", 1)[0]
    assert tok.count(short) <= chunker.budget // 2 and short.startswith(c.heading_path[0][:10])
    return short + "\n\n"


def check(md: str, chunker: Chunker, tok) -> list:
    doc = parse_text(md, "gen.md")
    chunks = chunker.chunk(doc)
    text = doc.text
    assert_tiles(doc, chunks)  # spans in order, tiling the body
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    # Every embedded text fits, by the real tokenizer; so coverage is exactly 1.
    counts = tok.count_many([c.embedding_text for c in chunks])
    assert [c.tokens for c in chunks] == counts
    assert all(n <= chunker.budget for n in counts)
    pieces = [
        (prefix(c, tok, chunker), c.embedding_text[len(prefix(c, tok, chunker)) :]) for c in chunks
    ]
    assert window_coverage(tok, pieces).fraction == 1.0
    # Fences: never cut when the fence fits on its own; else between lines, re-wrapped.
    for b, fa, fz, _ in fences_of(doc):
        inside = [c for c in chunks if fa < c.start_offset < fz]
        if not inside:
            continue
        sec = doc.sections[
            max(i for i, s in enumerate(doc.sections) if doc.line_offset(s.start_line) <= fa)
        ]
        crumb = " > ".join(sec.path)
        if tok.count(crumb) > chunker.budget // 2:
            continue  # an absurd breadcrumb is shortened by the chunker: its cost is not known here
        alone = crumb + "\n\n" + text[fa:fz].strip("\n")
        assert tok.count(alone) > chunker.budget, (
            f"a fence that fits was cut: lines {b.start_line}-{b.end_line}"
        )
        opener = text[fa : text.find("\n", fa)].strip()
        for c in inside:
            assert c.embedding_text[len(prefix(c, tok, chunker)) :].startswith(opener + "\n"), (
                "no re-wrap"
            )
            line = doc.offset_line(c.start_offset)
            if len(doc.lines()[line]) < 200:  # only a line too long for one chunk is cut inside
                assert text[c.start_offset - 1] == "\n", "a fence cut inside a line"
    return chunks


# A deeper run: MDSEEK_FUZZ_EXAMPLES=5000 pytest tests/test_chunk_fuzz.py -k generated
EXAMPLES = int(os.environ.get("MDSEEK_FUZZ_EXAMPLES", "120"))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(md=document())
def test_generated_markdown_invariants(md, chunker, tokenizer):
    check(md, chunker, tokenizer)


@settings(
    max_examples=max(40, EXAMPLES // 3),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(md=document())
def test_generated_markdown_invariants_floor_zero(md, tokenizer):
    check(md, Chunker(tokenizer, floor=0), tokenizer)


@pytest.mark.parametrize(
    "md",
    [
        # A fence right after link reference definitions (no blank line).
        "# Setup\n\n[r1]: ./a.md\n[r2]: ./b.md\n```bash\n"
        + "\n".join(f"echo step {i}" for i in range(40))
        + "\n```\n",
        # A fence right after a thematic break under a heading.
        "# Setup\n---\n```bash\n"
        + "\n".join(f"echo step {i} of the install" for i in range(35))
        + "\n```\n",
        # A fence that fits the window but not beside its heading and a paragraph.
        "# Setup\n\n"
        + "intro words " * 30
        + "\n\n```python\n"
        + "\n".join(f"x{i} = {i}" for i in range(50))
        + "\n```\n",
    ],
    ids=["after-refdefs", "after-hr-under-heading", "after-paragraph"],
)
def test_fence_that_fits_gets_a_chunk_of_its_own(md, chunker, tokenizer):
    chunks = check(md, chunker, tokenizer)
    doc = parse_text(md, "gen.md")
    fence = next(b for b in doc.blocks if b.kind == "fence")
    fa = doc.line_offset(fence.start_line)
    assert any(
        c.start_offset <= fa and c.end_offset >= doc.line_offset(fence.end_line) for c in chunks
    )


def hostile(kind: str, n: int) -> bytes:
    rng = random.Random(kind)
    if kind == "backticks":
        return b"# Blob\n\n" + b"`" * n
    if kind == "base64":
        return b"# Blob\n\n" + base64.b64encode(rng.randbytes(n))[:n]
    if kind == "huge_word":
        return b"# Blob\n\n" + bytes(rng.choice(b"abcdefghij") for _ in range(n))
    if kind == "nul":
        return b"# Blob\n\n" + b"\0" * n
    if kind == "brackets":
        return b"# Blob\n\n" + bytes(rng.choice(b"[]") for _ in range(n))
    if kind == "cjk":
        return (
            "# Blob\n\n"
            + "".join(rng.choice("東京都の天気は晴れです数据库故障转移") for _ in range(n // 3))
        ).encode()
    words = "the replica database failover queue backlog certificate rotation".split()
    return (
        "# Prose\n\n"
        + " ".join(rng.choice(words) + ("." if rng.random() < 0.1 else "") for _ in range(n // 7))
    ).encode()


@pytest.mark.parametrize("kind", ["backticks", "base64", "huge_word", "nul", "brackets", "cjk"])
def test_hostile_runs_chunk_like_prose(kind, tokenizer):
    """Hostile bytes chunk in time proportional to prose of the same size (a
    ratio measured side by side, generous for a shared machine), tile the
    body, fit the window, and are never cut into one-character chunks."""
    n = 120_000

    def timed(data: bytes) -> tuple[float, list]:
        best, chunks = float("inf"), []
        for _ in range(2):
            ch = Chunker(tokenizer)  # no cache between runs
            doc = parse_text(data.decode("utf-8"), "x.md")  # an editor's buffer may hold NULs
            t0 = time.perf_counter()
            chunks = ch.chunk(doc)
            best = min(best, time.perf_counter() - t0)
        return best, chunks

    prose_s, _ = timed(hostile("prose", n))
    data = hostile(kind, n)
    t, chunks = timed(data)
    assert t < 6 * prose_s + 0.5, f"{kind}: {t:.2f}s vs prose {prose_s:.2f}s"
    if kind == "nul":  # a file of NULs is not text: never indexed (index/text/encoding.py)
        with pytest.raises(NotText):
            parse_bytes(data, "x.md")
    doc = parse_text(data.decode("utf-8"), "x.md")
    assert chunks[0].start_offset == 0 and chunks[-1].end_offset == len(doc.text)
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert a.end_offset == b.start_offset
    counts = tokenizer.count_many([c.embedding_text for c in chunks])
    assert max(counts) <= tokenizer.window and counts == [c.tokens for c in chunks]
    assert all(len(c.text) > 1 for c in chunks[:-1]), "one-character chunks"
    if kind == "huge_word":
        # One word longer than the window: window-sized pieces, not characters.
        assert len(chunks) <= 2 + n // Chunker(tokenizer).max_chars


def test_incremental_rechunk_reuses_unchanged_sections(tokenizer):
    """A one-line edit re-tokenizes one section; the chunks of the others are reused
    (same objects' text) and the result equals chunking from scratch."""
    sections = [
        f"## Part {i}\n\n" + " ".join(f"word{j} of part {i}." for j in range(120))
        for i in range(30)
    ]
    md = "# Doc\n\n" + "\n\n".join(sections) + "\n"
    ch = Chunker(tokenizer)
    first = ch.chunk(parse_text(md, "d.md"))
    edited = md.replace("word7 of part 12.", "word7 of part 12, edited.")
    before = dict(ch.stats)
    again = ch.chunk(parse_text(edited, "d.md"))
    assert ch.stats["sections_tokenized"] - before["sections_tokenized"] == 1
    assert ch.stats["units_split"] - before["units_split"] == 1
    fresh = Chunker(tokenizer).chunk(parse_text(edited, "d.md"))
    assert [
        (c.start_offset, c.end_offset, c.embedding_text, c.tokens, c.sections) for c in again
    ] == [(c.start_offset, c.end_offset, c.embedding_text, c.tokens, c.sections) for c in fresh]
    changed = {c.text_hash for c in again} - {c.text_hash for c in first}
    assert changed and all(c.heading == "Part 12" for c in again if c.text_hash in changed)
