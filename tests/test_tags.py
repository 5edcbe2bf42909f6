"""Finding tags in a document (Obsidian's rules), against hand-written positions."""

from __future__ import annotations

from mdseek.index.links.tags import find_tags
from mdseek.index.text.parse import parse_text

DOC = """\
---
title: Tags
tags: [ops, "#Team/infra"]
---
# Heading #intitle

Text #ops and #1984 and #y1984 a#b `#code` [l](#anchor) http://x.y/#frag <a href="#x">
- item #team/infra/db, end #ops.

```
#nottag
```

    #indented

#Ops at the start; [[note#Heading]] and <https://x.y/#z>
"""


def test_tags_in_text_and_front_matter() -> None:
    got = [(t.name, t.line, t.start, t.end, t.front_matter) for t in find_tags(parse_text(DOC))]
    assert got == [
        ("ops", 2, 7, 10, True),
        ("Team/infra", 2, 14, 24, True),
        ("intitle", 4, 11, 18, False),  # in a heading's text; the '#' marks are not tags
        ("ops", 6, 6, 9, False),  # #1984 (digits only), a#b, code, link, URL, HTML: not tags
        ("y1984", 6, 25, 30, False),
        ("team/infra/db", 7, 8, 21, False),
        ("ops", 7, 28, 31, False),  # the final '.' is not part of it
        ("Ops", 15, 1, 4, False),  # not in the fence or indented code; the wiki anchor is not
    ]


def test_front_matter_list_and_string() -> None:
    doc = parse_text("---\ntags:\n  - alpha\n  - beta-2\nother: alpha\n---\n#alpha\n")
    got = [(t.name, t.line, t.start) for t in find_tags(doc)]
    assert got == [("alpha", 2, 4), ("beta-2", 3, 4), ("alpha", 6, 1)]  # not under other:
    doc = parse_text("---\ntags: alpha, beta\n---\nx\n")
    assert [(t.name, t.line, t.start) for t in find_tags(doc)] == [("alpha", 1, 6), ("beta", 1, 13)]
    doc = parse_text("---\ntags: alpha #beta\n---\nx\n")  # YAML: '#beta' is a comment
    assert [(t.name, t.line, t.start) for t in find_tags(doc)] == [("alpha", 1, 6)]
