"""Autolinks ``<https://...>`` as CommonMark reads them (index/links/autolinks.py):
hand-written documents, expected columns counted by hand."""

from __future__ import annotations

from mdseek.index.links.autolinks import find_autolinks
from mdseek.index.links.links import find_links
from mdseek.index.text.parse import parse_text


def _found(text: str) -> list[tuple[str, int, int, int]]:
    doc = parse_text(text)
    return [(a.url, a.line, a.start, a.end) for a in find_autolinks(doc, find_links(doc))]


def test_autolinks_in_text_only():
    text = "\n".join(
        [
            "pre <http://a.com> and `<http://code.com>` and \\<http://escaped.com>",  # 0
            "[t](<http://dest.com>) then \\\\<mailto:x@y.z>",  # 1: a destination; \\ then one
            "text <!-- <http://comment.com> --> <ftp://f.org/x>",  # 2
            "<!-- <http://html-block.com> -->",
            "```",
            "<http://fence.com>",
            "```",
            "",
            "- item <https://b.org/p?q=1#h>",  # 8
            "",
            "<not a link> <http://sp ace.com> <x:y>",  # 10: a space; a one-letter scheme
        ]
    )
    assert _found(text) == [
        ("http://a.com", 0, 5, 17),
        ("mailto:x@y.z", 1, 31, 43),
        ("ftp://f.org/x", 2, 36, 49),
        ("https://b.org/p?q=1#h", 8, 8, 29),
    ]
