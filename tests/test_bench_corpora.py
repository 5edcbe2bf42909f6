"""The human-question corpora's converters (benchmarks/make_emanual.py, make_condqa.py)
on tiny hand-written inputs, expected markdown written by hand; then the loader
(real parser) resolves the judged sections they name, and the group split keeps
questions on one section in one half."""

from __future__ import annotations

import json

from benchmarks import data as D
from benchmarks import make_condqa as C
from benchmarks import make_emanual as E


def test_emanual_chapters_sections_and_levels():
    secs = [
        E.Section("Quick Guides", ["Learn the basics."]),
        E.Section("Using Smart Hub", ["Connect to Smart Hub.", "Enjoy apps."]),
        E.Section("Updating the TV's Software", ["View your version."]),
        E.Section("Updating the TV automatically", ["Settings Support Auto", "Update."]),
        E.Section("Connections", []),
        E.Section("Connection Guide", ["See the guide."]),
    ]
    # An annotated hierarchy puts "Connection Guide" at depth 3 (the casing would say 2).
    E.structure(secs, [("Connections", "Cables", "Connection Guide")])
    docs = E.render_chapters(secs)
    assert docs == {
        "01-quick-guides": "# Quick Guides\n\nLearn the basics.\n\n"
        "## Using Smart Hub\n\nConnect to Smart Hub. Enjoy apps.\n\n"
        "## Updating the TV's Software\n\nView your version.\n\n"
        "### Updating the TV automatically\n\nSettings Support Auto Update.\n",
        "02-connections": "# Connections\n\n### Connection Guide\n\nSee the guide.\n",
    }
    assert [(s.doc, s.line, s.path) for s in secs[2:4]] == [
        ("01-quick-guides", 9, ("Quick Guides", "Updating the TV's Software")),
        (
            "01-quick-guides",
            13,
            ("Quick Guides", "Updating the TV's Software", "Updating the TV automatically"),
        ),
    ]


def test_emanual_malformed_qa_file_is_read():
    text = """{
    "All_Questions": [
        {
            "Section Hierarchy": "Quick Guides>Using Smart Hub",
            "Link": "https://example.invalid/page=8",
            "Question": "What is Smart Hub?",
            "Answer": "Connect to Smart Hub."" Enjoy apps."
        },
        {
            "Section Hierarchy": "Connections>Connection Guide",
            "Link": "x",
            "Question": "Where is the guide?",
            "Answer": "See the guide."
        },
    ]
}"""
    rows = E.parse_qa_file(text)
    assert [(r["Section Hierarchy"], r["Question"]) for r in rows] == [
        ("Quick Guides>Using Smart Hub", "What is Smart Hub?"),
        ("Connections>Connection Guide", "Where is the guide?"),
    ]


PAGE = [
    "<h1>Apply for a bursary</h1>",
    "<p>You could get a <b>bursary</b> if you&rsquo;re 16 to 19.</p>",
    "<h2>Who can get one</h2>",
    "<p>You must be:</p>",
    "<li>studying in England</li>",
    "<li>aged 16 to 19</li>",
    "<h3>Amounts</h3>",
    "<tr>Group | Amount</tr>",
    "<tr>Vulnerable | £1,200</tr>",
    "<h2>How to apply</h2>",
    "<p>Ask your college.</p>",
]

PAGE_MD = """# Apply for a bursary

You could get a bursary if you\u2019re 16 to 19.

## Who can get one

You must be:

- studying in England
- aged 16 to 19

### Amounts

| Group | Amount |
| --- | --- |
| Vulnerable | £1,200 |

## How to apply

Ask your college.
"""


def test_condqa_page_to_markdown():
    text, lines, secs = C.to_markdown("ignored: the page has an h1", PAGE)
    assert text == PAGE_MD
    assert lines == [1, 3, 5, 7, 9, 10, 12, 14, 16, 18, 20]
    assert secs == [1, 1, 5, 5, 5, 5, 12, 12, 12, 18, 18]
    # Without an h1 the title heads the page.
    text, _, secs = C.to_markdown("A page", ["<p>Hello.</p>"])
    assert text == "# A page\n\nHello.\n" and secs == [1]


def test_condqa_build_and_load(tmp_path):
    """A tiny ConditionalQA-like checkout -> corpus -> the benchmark's loader."""
    repo = tmp_path / "repo" / "v1_0"
    repo.mkdir(parents=True)
    url = "https://www.gov.uk/16-19-bursary"
    other = "https://www.gov.uk/other-page"
    (repo / "documents.json").write_text(
        json.dumps(
            [
                {"title": "Bursary", "url": url, "contents": PAGE},
                {"title": "Other", "url": other, "contents": ["<h2>Other</h2>", "<p>x</p>"]},
            ]
        )
    )
    qs = [
        {"id": "train-0", "url": url, "scenario": "I am 17 and live in Leeds.",
         "question": "Can I get money?", "not_answerable": False,
         "evidences": ["<li>aged 16 to 19</li>", "<tr>Vulnerable | £1,200</tr>"]},
        {"id": "train-1", "url": url, "scenario": "s", "question": "q?", "not_answerable": False,
         "evidences": ["<p>Not on the page.</p>"]},
        {"id": "train-2", "url": url, "scenario": "s", "question": "q2?", "not_answerable": False,
         "evidences": []},
    ]  # fmt: skip
    (repo / "train.json").write_text(json.dumps(qs))
    data = tmp_path / "data"
    st = C.build(tmp_path / "repo", data / "condqa", False, 10, 100, seed=1)
    assert st["questions"] == 1 and st["docs"] == 2 and st["sections"] == 6
    assert st["dropped"]["evidence not found"] == 1 and st["dropped"]["no evidence"] == 1
    docs, short, long = D.load_condqa(data)
    assert short.queries == {"train-0": "Can I get money?"}
    assert long.queries == {"train-0": "I am 17 and live in Leeds. Can I get money?"}
    assert short.docs == {"train-0": {"16-19-bursary": 1}}
    assert short.sections == {"train-0": [("16-19-bursary", 5), ("16-19-bursary", 12)]}
    assert (docs / "16-19-bursary.md").read_text() == PAGE_MD


def test_group_split_keeps_a_section_together():
    qids = [f"q{i}" for i in range(40)]
    groups = {q: "doc:5" for q in qids}
    dev = D.split_qids(qids, "dev", groups)
    test = D.split_qids(qids, "test", groups)
    assert sorted(dev + test) == sorted(qids) and (dev == [] or test == [])
    # Without groups the same ids fall in both halves.
    assert D.split_qids(qids, "dev") and D.split_qids(qids, "test")
