"""The README fits on a page and the documentation's links hold.

README.md stays under 250 lines; the details live in docs/, one page per
topic, and the README links every page. Every relative link of README.md,
docs/*.md, ARCHITECTURE.md, benchmarks/README.md and vscode-client/README.md
reaches a file that exists, and every ``#anchor`` a heading of its target
(GitHub's anchors: the rendered heading text, lowercased, punctuation
dropped, spaces to ``-``, ``-1``, ``-2`` for repeats). Links are read from markdown-it's tokens, so a
link written inside code is no link, and a reference link counts.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt

from mdseek.index.text.parse import parse_text

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [
    README, *DOCS, REPO / "ARCHITECTURE.md",
    REPO / "benchmarks" / "README.md", REPO / "vscode-client" / "README.md",
]  # fmt: skip
MAX_README_LINES = 250


def links(page: Path) -> list[tuple[int, str]]:
    """(1-based line, destination) of every link and image of ``page``."""
    found: list[tuple[int, str]] = []
    md = MarkdownIt("commonmark").enable("table")  # GitHub's tables hold links too
    for block in md.parse(page.read_text(encoding="utf-8")):
        line = block.map[0] + 1 if block.map else 0
        for tok in block.children or ():
            if tok.type == "link_open":
                found.append((line, str(tok.attrs.get("href", ""))))
            elif tok.type == "image":
                found.append((line, str(tok.attrs.get("src", ""))))
    return found


def anchors(page: Path) -> set[str]:
    return {h.slug for h in parse_text(page.read_text(encoding="utf-8"), str(page)).headings}


def broken_links(page: Path, root: Path = REPO) -> list[str]:
    """Each link of ``page`` that reaches no file, or no heading of its file."""
    bad: list[str] = []
    for line, dest in links(page):
        parts = urlsplit(dest)
        if parts.scheme or parts.netloc:  # http(s), mailto: not checked here
            continue
        target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        where = f"{page.relative_to(root)}:{line}: {dest}"
        if not target.exists():
            bad.append(f"{where} (no such file)")
        elif parts.fragment and target.suffix == ".md":
            if unquote(parts.fragment) not in anchors(target):
                bad.append(f"{where} (no such heading in {target.relative_to(root)})")
    return bad


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_reaches_a_file_and_a_heading(page: Path):
    bad = broken_links(page)
    assert not bad, "\n".join(bad)


def test_the_readme_fits_on_a_page_and_links_every_docs_page():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < MAX_README_LINES, len(lines)
    linked = {(README.parent / urlsplit(d).path).resolve() for _, d in links(README)}
    assert len(linked) > 10  # the links are read at all
    unlinked = [str(p.relative_to(REPO)) for p in DOCS if p.resolve() not in linked]
    assert DOCS and not unlinked, f"README.md links no {unlinked}"


def test_the_checker_sees_a_broken_link_and_a_missing_heading(tmp_path: Path):
    """The checker itself: GitHub's anchors as written by hand, a link inside
    a code span is no link, and each kind of break is reported."""
    (tmp_path / "other.md").write_text("# Install (to use the tool)\n\n## `--json` of `search`\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n## Page\n\n"
        "[ok](other.md#install-to-use-the-tool) [ok](other.md#--json-of-search) "
        "[ok](#page-1) [ok](other.md) [web](https://example.com/x.md#nope)\n\n"
        "`[not a link](gone.md)`\n\n"
        "[gone](gone.md) [no heading](other.md#install) [here][ref]\n\n"
        "[ref]: #nowhere\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "page.md:9: gone.md (no such file)",
        "page.md:9: other.md#install (no such heading in other.md)",
        "page.md:9: #nowhere (no such heading in page.md)",
    ]
