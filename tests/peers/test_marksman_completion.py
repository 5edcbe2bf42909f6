"""marksman's Tests/ComplTests.fs (completion: module ``Candidates`` and its
snapshots Tests/_snapshots/Candidates.json, Tags.json, WikiWithSpaces_*.json),
ported.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms: ``findCandidatesInDoc folder doc pos`` is
``textDocument/completion`` at ``pos``; each snapshot line is an item's edit
(``(range): new text``). What is compared is the cursor's line once each item
is accepted (the peer's edit applied, and mdseek's), as sorted lists: so how
much of the line an edit replaces does not matter, what it leaves does.

Wiki links: marksman (default ``complWikiStyle = title-slug``) names a note by
its title's slug (``[[doc-2]]``), and filters candidates itself (fuzzy);
mdseek names it as Obsidian does, by file name (a title reaches the note too:
``[[Doc 2#`` offers its headings), and offers every note and sections by
meaning for the editor to filter. Cases that turn on that are marked.

Not ported: the ``PartialElement*`` modules (marksman's parser of the text
before the cursor: 37 tests, no LSP-level answer), reference-label
candidates (``[``, ``[]``, ``[l]``: 3 tests), the ``FilePathStem`` and
``TitleSlug`` configuration variants (``partialWikiDocHeading_FilePathStem``,
``WikiWithSpaces_TitleSlug``: 4 tests).
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_completion, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

TITLE = "marksman's completion writes a note's title slug ([[doc-2]] for '# Doc 2' in doc2.md); mdseek's, as Obsidian, its file name ([[doc2]]; the title reaches the note too)"
OFFERS = "mdseek offers the sections most like the paragraph and every other note, for the editor to filter; marksman filters its candidates itself"
PATHS = "mdseek completes a markdown link's path relative to the document (doc2.md) and offers sections by meaning first; marksman offers root paths (/doc2.md)"

GLOBAL = {
    "doc1.md": lines("# H1", "[[#", "# A", "## H2", "#B", "## H2", "[](/doc%202.md#)", "[[#]]"),
    "doc 2.md": lines("# H2", "[[h1#", "## D2 H2"),
}
TAGS = {
    "doc1.md": lines("We have #tag and #anotherTag", "And an opening # ", "And partial #ta "),
    "doc2.md": lines("And #somethingElse #otherDocTag"),
}
WITH_SPACES = {
    "doc one.md": lines("# Doc 1"),
    "doc two.md": lines("# Doc 2"),
    "another doc.md": lines("# Doc 3"),
    "doc4.md": lines("[[do]]", "[[doc o]]", "[[ano]]"),
}


def cand(
    name: str, files: dict, at: str, pos: tuple[int, int], accepted: list, **kw: object
) -> dict:
    return {"name": name, "files": files, "at": at, "pos": pos, "accepted": accepted, **kw}


CASES: list[dict] = [
    cand(
        "noDupsOnAchor_intraFile",
        GLOBAL,
        "doc1.md",
        (1, 3),
        ["[[#H2]]"],
        convention="marksman leaves out level-1 headings (H1, A) and closes the link; mdseek offers every heading (H1, A, H2: each text once) and inserts its text only",
    ),
    cand("noDupsOnAchor_intraFile [each heading once]", GLOBAL, "doc1.md", (1, 3), [], once=True),
    cand(
        "noDupsOnAchor_crossFile [each heading once]",
        {**GLOBAL, "doc 2.md": lines("# H2", "[[doc1#", "## D2 H2")},
        "doc 2.md",
        (1, 7),
        [],
        once=True,
    ),
    cand(
        "noExtraHash_wikiHeading_intraFile_issue174",
        GLOBAL,
        "doc1.md",
        (7, 3),
        ["[[#H2]]"],
        convention="marksman leaves out level-1 headings (H1, A); mdseek offers every heading (H1, A, H2: each text once)",
    ),
    cand(
        "noDupsOnAchor_crossFile",
        GLOBAL,
        "doc 2.md",
        (1, 5),
        ["[[h1#H2]]"],
        convention="marksman leaves out level-1 headings (H1, A) and closes the link; mdseek offers every heading of the note [[h1]] reaches by its title (H1, A, H2: each text once)",
    ),
    cand(
        "fileWithSpaces_anchor",
        GLOBAL,
        "doc1.md",
        (6, 15),
        ["[](/doc%202.md#d2-h2)"],
        convention="marksman leaves a note's title (# H2) out of its anchors; mdseek offers #h2 too",
    ),
    cand(
        "docAndHeadingFuzzy",
        {
            "doc1.md": lines("# Doc 1", "[[do#]]"),
            "doc2.md": lines("# Doc 2", "## H2.1", "## H2.2"),
            "doc3.md": lines("# Doc 3", "## H3"),
        },
        "doc1.md",
        (1, 5),
        ["[[doc-2#H2.1]]", "[[doc-2#H2.2]]", "[[doc-3#H3]]"],
        convention=TITLE + "; and it matches [[do# fuzzily to several notes",
    ),
    cand(
        "inlineEmpty",
        {
            "doc1.md": lines("# Doc 1", "[]()"),
            "doc2.md": lines("# Doc 2"),
            "doc3.md": lines("# Doc 3"),
        },
        "doc1.md",
        (1, 3),
        ["[](/doc2.md)", "[](/doc3.md)"],
        convention=PATHS,
    ),
    cand(
        "partialWikiDoc",
        {
            "doc1.md": lines("# Doc 1", "[["),
            "doc2.md": lines("# Doc 2"),
            "doc3.md": lines("# Doc 3"),
        },
        "doc1.md",
        (1, 2),
        ["[[doc-2]]", "[[doc-3]]"],
        convention=TITLE + "; and " + OFFERS,
    ),
    cand(
        "partialWikiHeading",
        {"doc1.md": lines("# Doc 1", "[[#", "## H2.1", "## H2.2")},
        "doc1.md",
        (1, 3),
        ["[[#H2.1]]", "[[#H2.2]]"],
        convention="marksman leaves the note's title (# Doc 1) out and closes the link; mdseek offers every heading and inserts its text only",
    ),
    cand(
        "partialWikiDocHeading",
        {
            "doc1.md": lines("# Doc 1", "[[d#"),
            "doc2.md": lines("# Doc 2", "## H2"),
            "doc3.md": lines("# Doc 3", "## H3"),
        },
        "doc1.md",
        (1, 4),
        ["[[doc-2#H2]]", "[[doc-3#H3]]"],
        convention=TITLE
        + "; and marksman matches [[d# fuzzily to every note whose title holds a d and offers their headings; mdseek offers the headings of the note [[d]] names (none here)",
    ),
    cand(
        "partialWikiDocHeading_FileStem",
        {
            "doc1.md": lines("# Doc 1", "[[d#"),
            "sub2/doc2.md": lines("# Doc 2", "## H2"),
            "sub3/this is doc 3.md": lines("# Doc 3", "## H3"),
        },
        "doc1.md",
        (1, 4),
        ["[[doc2#H2]]", "[[this is doc 3#H3]]"],
        convention="marksman matches [[d# fuzzily to every note whose name holds a d and offers their headings; mdseek offers the headings of the note [[d]] names (none here)",
    ),
    cand(
        "partialWikiDoc_FileStem_ArbitraryPath",
        {"doc1.md": lines("# Doc 1", "[[sun"), "20221218.md": lines("# Sun 18 Dec 2022")},
        "doc1.md",
        (1, 5),
        ["[[sun-18-dec-2022]]"],
        convention=TITLE + "; and " + OFFERS,
    ),
    cand(
        "partialInlineHeading",
        {"doc1.md": lines("# Doc 1", "[link](#", "## H2.1", "## H2.2")},
        "doc1.md",
        (1, 8),
        ["[link](#h21)", "[link](#h22)"],
        convention="marksman leaves the note's title (# Doc 1) out of its anchors and closes the link; mdseek offers #doc-1 too and leaves the ) to the user",
    ),
    cand(
        "partialInlineDoc",
        {
            "doc1.md": lines("# Doc 1", "[]("),
            "doc2.md": lines("# Doc 2"),
            "doc3.md": lines("# Doc 3"),
        },
        "doc1.md",
        (1, 3),
        ["[](/doc2.md)", "[](/doc3.md)"],
        convention=PATHS,
    ),
    cand(
        "WikiWithSpaces_FileStem.test1",
        WITH_SPACES,
        "doc4.md",
        (0, 4),
        ["[[another doc]]", "[[doc one]]", "[[doc two]]"],
        convention=OFFERS,
    ),
    cand(
        "WikiWithSpaces_FileStem.test2",
        WITH_SPACES,
        "doc4.md",
        (1, 7),
        ["[[doc one]]"],
        convention=OFFERS,
    ),
    cand(
        "WikiWithSpaces_FileStem.test3",
        WITH_SPACES,
        "doc4.md",
        (2, 5),
        ["[[another doc]]"],
        convention=OFFERS,
    ),
    cand(
        "wiki_HeadingWithSpecialChars_NotEncoded",
        {"doc1.md": lines("# Doc 1", "## Foo / Bar", "## Baz", "[[#f", "")},
        "doc1.md",
        (3, 4),
        ["[[#Foo / Bar]]"],
        convention="marksman filters what [[#f matches, leaves the title out and closes the link; mdseek offers every heading for the editor to filter and inserts its text only",
    ),
    cand(
        "wiki_FileWithSpecialChars_Subtitle_NoCompletionProvided",
        {
            "blah#blah.md": lines("# Blah Blah", "## Subtitle 1", "## Subtitle 2"),
            "doc2.md": lines("[[blah%23blah#]]"),
        },
        "doc2.md",
        (0, 14),
        [],
    ),
    cand(
        "wiki_CrossHeading_TitleNameVsSlug",
        {"d1.md": lines("# Doc Title", "## Subtitle"), "d2.md": lines("[[Doc Title#]]")},
        "d2.md",
        (0, 12),
        ["[[doc-title#Subtitle]]"],
        convention="marksman rewrites the note's name to its title slug, leaves the title heading out and closes the link; mdseek keeps [[Doc Title# as typed and offers every heading of the note (Doc Title, Subtitle)",
    ),
    cand(
        "Tags.tagOpening",
        TAGS,
        "doc1.md",
        (1, 16),
        [
            "And an opening #tag ",
            "And an opening #anotherTag ",
            "And an opening #ta ",
            "And an opening #somethingElse ",
            "And an opening #otherDocTag ",
        ],
    ),
    cand(
        "Tags.tagWithName",
        TAGS,
        "doc1.md",
        (2, 15),
        ["And partial #tag ", "And partial #anotherTag ", "And partial #otherDocTag "],
        convention="marksman filters the tags #ta matches (fuzzily: #anotherTag too); mdseek offers every tag of the folder for the editor to filter",
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_completion(client, tmp_path, case):
    await run_completion(client, tmp_path, case)
