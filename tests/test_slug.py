"""Heading anchors exactly as GitHub makes them (github-slugger's rules), for
every Unicode general category, plus a non-Latin heading end to end through
the language server (go-to-definition and broken-link diagnostics)."""

from __future__ import annotations

import asyncio
import time
import unicodedata
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import config, initialize, open_doc, uri, wait_ready
from lsprotocol import types
from pytest_lsp import LanguageClient

from mdseek.index.text.parse import parse_text
from mdseek.index.text.slug import Slugger, github_slug

# (category, heading text, expected slug). Each row puts characters of one
# category between two ASCII letters, so a dropped character shows as "ab"
# and a kept one stays between them.
CATEGORIES = [
    # letters: all kept, lowercased with full case mapping
    ("Lu", "aÀΣЖb", "aàσжb"),
    ("Ll", "aßçяb", "aßçяb"),
    ("Lt", "aǅb", "aǆb"),
    ("Lm", "aʰーb", "aʰーb"),
    ("Lo", "a你好אb", "a你好אb"),
    # marks, all three kinds, kept as typed (no normalisation)
    ("Mn", "a\u0300\u05b8b", "a\u0300\u05b8b"),
    ("Mc", "aिीःb", "aिीःb"),  # Devanagari vowel signs and visarga (spacing marks)
    (
        "Me",
        "a\u20dd\u0488b",
        "a\u20dd\u0488b",
    ),  # combining enclosing circle, Cyrillic hundred thousands
    # numbers: decimal digits and letter numbers kept, other numbers dropped
    ("Nd", "a7٣९b", "a7٣९b"),
    ("Nl", "aⅫᛮb", "aⅻᛮb"),
    ("No", "a¼²①b", "ab"),
    # punctuation: connector kept, ASCII hyphen kept, everything else dropped
    ("Pc", "a_‿＿b", "a_‿＿b"),
    ("Pd", "a-–—b", "a-b"),
    ("Ps/Pe", "a([{)]}b", "ab"),
    ("Pi/Pf", "a«‘’»b", "ab"),
    ("Po", "a!.,'?¿b", "ab"),
    # symbols dropped, except Alphabetic ones (circled letters)
    ("Sm", "a+=<b", "ab"),
    ("Sc", "a$€b", "ab"),
    ("Sk", "a^`¨b", "ab"),
    ("So", "a♥😄©b", "ab"),
    ("So+Alphabetic", "aⒼⓐb", "aⓖⓐb"),
    # separators: the ASCII space becomes "-", every other one is dropped
    ("Zs", "a b", "a-b"),
    ("Zs (other)", "a\u00a0\u3000\u2003b", "ab"),
    ("Zl/Zp", "a\u2028\u2029b", "ab"),
    # other: control, format, private use, unassigned all dropped
    ("Cc", "a\t\x07b", "ab"),
    ("Cf", "a\u00ad\u200d\u200bb", "ab"),
    ("Co", "a\ue000b", "ab"),
    ("Cn", "a\u0378b", "ab"),
]


@pytest.mark.parametrize(
    ("category", "text", "expected"), CATEGORIES, ids=[c[0] for c in CATEGORIES]
)
def test_each_unicode_category(category: str, text: str, expected: str):
    assert github_slug(text) == expected


def test_categories_table_is_what_it_says():
    """The characters between the two ASCII letters are of the named categories."""
    for name, text, _ in CATEGORIES:
        want = {c.strip() for c in name.split("(")[0].split("+")[0].split("/")}
        got = {unicodedata.category(ch) for ch in text[1:-1]}
        if name.startswith("Ps/Pe"):
            want = {"Ps", "Pe"}
        elif name.startswith("Pi/Pf"):
            want = {"Pi", "Pf"}
        elif name.startswith("Zl/Zp"):
            want = {"Zl", "Zp"}
        assert got == want, (name, got)


def test_examples_github_gives():
    assert github_slug("Promote the replica") == "promote-the-replica"
    assert github_slug("I ♥ unicode") == "i--unicode"
    assert github_slug("😄 - an emoji") == "---an-emoji"
    assert github_slug("exchange.bind_headers(exchange, routing [, bindCallback])") == (
        "exchangebind_headersexchange-routing--bindcallback"
    )
    assert github_slug("Привет non-latin 你好") == "привет-non-latin-你好"
    assert github_slug("İstanbul") == "i\u0307stanbul"  # full lowercase mapping, as JS toLowerCase
    assert github_slug("ΟΔΟΣ") == "οδος"  # final sigma
    assert github_slug(" a ") == "-a-"  # no trimming
    # Hindi keeps its vowel signs (spacing marks)
    assert github_slug("हिन्दी में शीर्षक") == "हिन्दी-में-शीर्षक"


def test_no_unicode_normalisation():
    nfc, nfd = "Café", unicodedata.normalize("NFD", "Café")
    assert nfc != nfd
    assert github_slug(nfc) == "café" and github_slug(nfd) == "cafe\u0301"


def test_duplicates_get_counters():
    s = Slugger()
    got = [s.slug(t) for t in ["echo", "echo", "echo 1", "echo-1", "echo", "-a-", "-a-"]]
    assert got == ["echo", "echo-1", "echo-1-1", "echo-1-2", "echo-2", "-a-", "-a--1"]


def test_slug_comes_from_the_rendered_heading():
    doc = parse_text(
        "# &#x20;a\n\n## Run `migrate` *now*\n\nFoo\nbar\n---\n\n## [Link](x.md) <b>bold</b>\n"
    )
    assert [h.slug for h in doc.headings] == ["-a", "run-migrate-now", "foobar", "link-bold"]
    # the displayed text is on one line and trimmed
    assert [h.text for h in doc.headings] == ["a", "Run migrate now", "Foo bar", "Link bold"]


# -- end to end: a Hindi heading through the language server ------------------

HINDI = "हिन्दी में शीर्षक"
HINDI_SLUG = "हिन्दी-में-शीर्षक"
TARGET = f"# लक्ष्य\n\n## {HINDI}\n\nयह खंड एक उदाहरण है।\n\n## Ⓐ circled and ¼ quarter\n\ntext\n"
SOURCE = (
    "# Source\n\n"
    f"Good: [ok](target.md#{HINDI_SLUG}) and [percent](target.md#%E0%A4%B9%E0%A4%BF%E0%A4%A8%E0%A5%8D%E0%A4%A6%E0%A5%80-%E0%A4%AE%E0%A5%87%E0%A4%82-%E0%A4%B6%E0%A5%80%E0%A4%B0%E0%A5%8D%E0%A4%B7%E0%A4%95).\n\n"
    "Broken (NFC-folded vowel signs dropped, as the old slugger made them): [bad](target.md#हनद-म-शरषक).\n\n"
    "Symbols: [circled](target.md#ⓐ-circled-and--quarter).\n"
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    ws = tmp_path_factory.mktemp("slugws") / "ws"
    ws.mkdir()
    (ws / "target.md").write_text(TARGET, encoding="utf-8")
    (ws / "source.md").write_text(SOURCE, encoding="utf-8")
    return ws


@pytest_lsp.fixture(scope="module", config=config())
async def client(lsp_client: LanguageClient, workspace: Path):
    await initialize(lsp_client, workspace)
    yield
    await lsp_client.shutdown_session()


def _col(line: str, needle: str) -> int:
    i = line.index(needle) + 2
    return len(line[:i].encode("utf-16-le")) // 2


@pytest.mark.slow
async def test_hindi_heading_definition_and_diagnostics(client: LanguageClient, workspace: Path):
    await wait_ready(client)
    src = workspace / "source.md"
    u = open_doc(client, src)
    lines = SOURCE.split("\n")
    target_uri = uri(workspace / "target.md")
    heading_line = TARGET.split("\n").index(f"## {HINDI}")
    for needle in ("[ok]", "[percent]"):
        line = next(i for i, ln in enumerate(lines) if needle in ln)
        res = await client.text_document_definition_async(
            types.DefinitionParams(
                text_document=types.TextDocumentIdentifier(uri=u),
                position=types.Position(line=line, character=_col(lines[line], needle)),
            )
        )
        locs = res if isinstance(res, list) else [res]
        assert locs and locs[0] is not None, needle
        loc = locs[0]
        got_uri = getattr(loc, "uri", None) or loc.target_uri
        got_line = (
            loc.range.start.line if hasattr(loc, "range") else loc.target_selection_range.start.line
        )
        assert (got_uri, got_line) == (target_uri, heading_line), needle
    deadline = time.monotonic() + 20
    while u not in client.diagnostics and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    diags = client.diagnostics.get(u, [])
    flagged = {d.range.start.line for d in diags}
    bad = next(i for i, ln in enumerate(lines) if "[bad]" in ln)
    good = next(i for i, ln in enumerate(lines) if "[ok]" in ln)
    circled = next(i for i, ln in enumerate(lines) if "[circled]" in ln)
    assert bad in flagged, diags
    assert good not in flagged and circled not in flagged, diags
