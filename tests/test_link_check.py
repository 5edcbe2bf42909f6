"""index/links/check.py on hand-written inputs: which links are broken and
why, duplicate headings and unreachable aliases, as data (0-based lines,
code-point columns). The folder is a dict; expected values written by hand."""

from __future__ import annotations

from dataclasses import dataclass, field

from mdseek.index.links.check import (
    ALIAS_UNREACHABLE,
    BROKEN_LINK,
    DUPLICATE_HEADING,
    Problem,
    Related,
    Span,
    alias_problems,
    duplicate_problems,
    link_problems,
)
from mdseek.index.links.links import Link, Target, resolve
from mdseek.index.text.aliases import AliasMap, AliasSite
from mdseek.index.text.document import Heading


def md(href: str, line: int = 0, start: int = 0, end: int = 10) -> Link:
    path, _, anchor = href.partition("#")
    return Link("markdown", href, path, anchor or None, "t", line, start, line, end)


def wiki(inner: str, line: int = 0) -> Link:
    path, sep, anchor = inner.partition("#")
    return Link("wiki", inner, path, anchor if sep else None, inner, line, 0, line, len(inner) + 4)


@dataclass
class Facts:
    headings: list[Heading]
    html_anchors: dict[str, int] = field(default_factory=dict)


def head(text: str, line: int, slug: str | None = None) -> Heading:
    return Heading(2, text, slug or text.lower().replace(" ", "-"), line, line + 1)


@dataclass
class Folder:
    """The folder of ``a.md`` (the checked file): files and what they hold."""

    files: dict[str, Facts]
    blocks: dict[str, list[str]] = field(default_factory=dict)
    pictures: tuple[str, ...] = ()
    aliases: AliasMap = field(default_factory=lambda: AliasMap({}, []))
    asked: list[str] = field(default_factory=list)

    def resolve(self, link: Link) -> Target:
        self.asked.append("resolve " + link.href)
        return resolve(link, "a.md", lambda r: r in self.files, list(self.files), self.aliases)

    def attachment(self, name: str) -> str | None:
        return name if name in self.pictures else None

    def facts(self, rel: str) -> Facts | None:
        self.asked.append("facts " + rel)
        return self.files.get(rel)

    def block_ids(self, rel: str) -> list[str] | None:
        return self.blocks.get(rel)

    def is_folder(self, rel: str) -> bool:
        return any(f.startswith(rel.rstrip("/") + "/") for f in self.files)


B = Facts([head("Intro", 0), head("Setup Steps", 4)], {"anchor-1": 9})


def test_each_kind_of_broken_link_and_what_its_fix_needs():
    folder = Folder({"a.md": Facts([head("Top", 0)]), "b.md": B}, {"b.md": ["abc"]}, ("p.png",))
    links = [
        md("b.md#intro", line=1),  # fine
        md("b.md#nope", line=2, start=4, end=18),
        md("gone.md", line=3),
        md("gone.pdf", line=4),
        md("b.md#anchor-1", line=5),  # an HTML id
        md("b.md#L10-L12", line=6),  # a place by line
        md("https://e.x/x.md#h", line=7),  # a URL: not checked
        md("../../etc/passwd", line=8),  # outside: not checked
        wiki("b#Setup Steps", line=9),  # by heading text: fine
        wiki("b#Nothing", line=10),
        wiki("missing note", line=11),
        wiki("b#^abc", line=12),  # a block that is there
        wiki("b#^zzz", line=13),
        wiki("q.png", line=14),
        wiki("p.png", line=15),
        md("#top", line=16),
        md("#bottom", line=17),
    ]
    got = link_problems(links, folder)
    assert [(p.span.line, p.message) for p in got] == [
        (2, "No heading '#nope' in b.md"),
        (3, "No such file: gone.md"),
        (4, "No such file: gone.pdf"),
        (10, "No heading 'Nothing' in b.md"),
        (11, "No such note: missing note.md"),
        (13, "No block '^zzz' in b.md"),
        (14, "No such file: q.png"),
        (17, "No heading '#bottom' in a.md"),
    ]
    assert {p.kind for p in got} == {BROKEN_LINK}
    assert got[0].span == Span(2, 4, 2, 18) and got[0].related == ()
    assert got[0].fix == {"kind": "anchor", "target": "b.md", "anchor": "nope", "byText": False}
    assert got[1].fix == {"kind": "missing", "target": "gone.md"}
    assert got[2].fix is None  # not a note: nothing to create
    assert got[3].fix == {"kind": "anchor", "target": "b.md", "anchor": "Nothing", "byText": True}


def test_an_alias_two_notes_claim_is_ambiguous_and_an_unreadable_target_is_not_judged():
    aliases = AliasMap({"n1.md": ("Shared",), "n2.md": ("Shared",)}, ["n1.md", "n2.md"])
    folder = Folder({"a.md": Facts([]), "n1.md": B, "n2.md": B}, aliases=aliases)
    (p,) = link_problems([wiki("Shared", line=3)], folder)
    assert p.message == "Ambiguous link: 'Shared' is an alias of n1.md and n2.md"
    folder = Folder({"a.md": Facts([]), "b.md": B})
    folder.files["c.md"] = None  # type: ignore[assignment]  # exists, cannot be read
    assert link_problems([md("c.md#x")], folder) == []


def test_links_to_one_place_resolve_once_and_each_target_is_read_once():
    folder = Folder({"a.md": Facts([]), "b.md": B})
    links = [md(f"b.md#{a}", line=n) for n, a in enumerate(["intro", "x", "intro", "y"] * 50)]
    got = link_problems(links, folder)
    assert len(got) == 100
    assert sorted(folder.asked) == [
        "facts b.md",
        "resolve b.md#intro",
        "resolve b.md#x",
        "resolve b.md#y",
    ]


def test_duplicate_headings_name_the_first():
    lines = ["## Setup", "", "## Other", "", "## Setup", "", "## setup!"]
    heads = [
        head("Setup", 0),
        head("Other", 2),
        head("Setup", 4, "setup-1"),
        head("setup!", 6, "setup-2"),
    ]
    got = duplicate_problems("a.md", heads, lambda n: lines[n] if n < len(lines) else "")
    first = Related("a.md", Span(0, 0, 0, 8), "the first heading with this text")
    assert got == [
        Problem(
            DUPLICATE_HEADING,
            Span(4, 0, 4, 8),
            "Duplicate heading 'Setup' (also on line 1): links by its text reach the first; "
            "this one is #setup-1",
            (first,),
        ),
        Problem(
            DUPLICATE_HEADING,
            Span(6, 0, 6, 9),
            "Duplicate heading 'setup!' (also on line 1): links by its text reach the first; "
            "this one is #setup-2",
            (first,),
        ),
    ]


def test_an_alias_no_link_can_reach():
    aliases = AliasMap(
        {"a.md": ("Twin", "Guide", "Mine"), "b.md": ("Twin",), "guide.md": ()},
        ["a.md", "b.md", "guide.md"],
    )
    sites = [
        AliasSite("Twin", 1, 10, 14),
        AliasSite("Guide", 1, 16, 21),
        AliasSite("Mine", 1, 23, 27),
    ]
    got = alias_problems("a.md", sites, aliases)
    assert [(p.kind, p.span, p.message) for p in got] == [
        (
            ALIAS_UNREACHABLE,
            Span(1, 10, 1, 14),
            "Alias 'Twin' leads nowhere: b.md declares it too, so [[Twin]] is ambiguous",
        ),
        (
            ALIAS_UNREACHABLE,
            Span(1, 16, 1, 21),
            "Alias 'Guide' leads nowhere: [[Guide]] leads to guide.md "
            "(a file name wins over an alias)",
        ),
    ]
