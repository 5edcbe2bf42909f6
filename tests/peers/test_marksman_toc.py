"""marksman's Tests/TocTests.fs (table of contents), ported.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms: the peer's table-of-contents code action
(``CodeActions.tableOfContentsInner doc``) is ``textDocument/codeAction`` with
``only: [source.toc]`` on ``doc.md``; its parts are asked through it:

* ``TableOfContents.detect`` (an existing table found): mdseek's action is
  "Update table of contents" only when it finds one; where the peer finds
  none, mdseek must not offer "Update";
* ``insertionPoint``: where "Insert table of contents" puts the table: at the
  document's beginning, or after a range (only blank lines between);
* ``mk`` and ``render`` (the entries and their text) and the ``DocumentEdit``
  tests: the document once the action's edit is applied, compared with the
  peer's; where the peer offers no action, mdseek must offer none.

marksman writes its table between ``<!--toc:start-->`` and ``<!--toc:end-->``,
mdseek between ``<!-- toc -->`` and ``<!-- tocstop -->`` (markdown-toc's; it
reads marksman's too): the peer's expected texts are compared with mdseek's
markers in place of its own; one case (``[marksman's markers]``) keeps them, to
show the difference. marksman lists every heading; mdseek leaves the title H1
out (docs/language-server.md), and offers no table of fewer than two
headings: the cases that turn on it are marked. All of the peer's tests are
ported.
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from peer_support import apply_edits, as_tuple, lines, params, server_fixture, tdi, workspace

pytestmark = pytest.mark.slow

client = server_fixture()

START, END = "<!--toc:start-->", "<!--toc:end-->"  # marksman's markers
OURS = ("<!-- toc -->", "<!-- tocstop -->")
TITLE = "mdseek leaves the title H1 (T1) out of the table of contents (docs/language-server.md), and offers no table of fewer than two headings; marksman lists every heading"
YAML = lines("---", 'title: "First" ', 'tags: ["1", "2"] ', "---", "")


def ours(text: str) -> str:
    """The peer's text with mdseek's markers in place of marksman's."""
    return text.replace(START, OURS[0]).replace(END, OURS[1])


def toc(name: str, text: str, **kw: object) -> dict:
    return {"name": name, "files": {"doc.md": text}, **kw}


CASES: list[dict] = [
    toc("DetectToc.detectToc_1", "# T1\n# T2", detect=False),
    toc(
        "DetectToc.detectToc_noMarker",
        lines("- [T1][#t1]", " - [T2][#t2]", "", "", "# T1", "## T2"),
        detect=False,
    ),
    toc(
        "DetectToc.detectToc_withMarker",
        lines(START, "- [T1][#t1]", " - [T2][#t2]", END, "# T1", "## T2"),
        detect=(0, 3),
        convention=TITLE,
    ),
    toc(
        "CreateToc.createToc",
        lines("# T1", "## T2"),
        after=lines("# T1", "", OURS[0], "- [T1](#t1)", "  - [T2](#t2)", OURS[1], "", "## T2"),
        convention=TITLE,
    ),
    toc(
        "CreateToc.createToc_yamlFrontMatter",
        lines(YAML, "# T1", "## T2"),
        after=lines(
            YAML, "# T1", "", OURS[0], "- [T1](#t1)", "  - [T2](#t2)", OURS[1], "", "## T2"
        ),
        convention=TITLE,
    ),
    toc("InsertToc.insert_documentBeginning", lines("## T1", "## T2"), insert=None),
    toc(
        "InsertToc.insert_firstTitle",
        lines("# T1", "## T2"),
        insert=(0, 0, 0, 4),
        convention=TITLE,
    ),
    toc("InsertToc.insert_afterYaml", lines(YAML, "## T1", "## T2"), insert=(0, 0, 3, 3)),
    toc(
        "InsertToc.insert_afterFirstTitle_withYaml",
        lines(YAML, "# T1", "## T2"),
        insert=(5, 0, 5, 4),
        convention=TITLE,
    ),
    toc(
        "RenderToc.createToc",
        lines("# T1", "## T2", "### T3", "## T4", "### T5"),
        after=lines(
            "# T1",
            "",
            OURS[0],
            "- [T1](#t1)",
            "  - [T2](#t2)",
            "    - [T3](#t3)",
            "  - [T4](#t4)",
            "    - [T5](#t5)",
            OURS[1],
            "",
            "## T2",
            "### T3",
            "## T4",
            "### T5",
        ),
        convention=TITLE,
    ),
    toc(
        "DocumentEdit.insert_afterYaml",
        lines(
            "---",
            'title: "First"',
            "tags: [1, 2]",
            "---",
            "",
            "## T1 ",
            "### T2",
            "## T3",
            "#### T4",
        ),
        after=lines(
            "---",
            'title: "First"',
            "tags: [1, 2]",
            "---",
            "",
            START,
            "- [T1](#t1)",
            "  - [T2](#t2)",
            "- [T3](#t3)",
            "    - [T4](#t4)",
            END,
            "",
            "## T1 ",
            "### T2",
            "## T3",
            "#### T4",
        ),
    ),
    toc(
        "DocumentEdit.insert_afterYaml [marksman's markers]",
        lines(
            "---",
            'title: "First"',
            "tags: [1, 2]",
            "---",
            "",
            "## T1 ",
            "### T2",
            "## T3",
            "#### T4",
        ),
        after=lines(
            "---",
            'title: "First"',
            "tags: [1, 2]",
            "---",
            "",
            START,
            "- [T1](#t1)",
            "  - [T2](#t2)",
            "- [T3](#t3)",
            "    - [T4](#t4)",
            END,
            "",
            "## T1 ",
            "### T2",
            "## T3",
            "#### T4",
        ),
        raw=True,
        convention="mdseek writes <!-- toc --> and <!-- tocstop --> (markdown-toc's markers; it reads marksman's too); marksman <!--toc:start--> and <!--toc:end-->",
    ),
    toc(
        "DocumentEdit.insert_afterTopHeading",
        lines("# T1 ", "### T2 ", "", "## T3", "", "#### T4"),
        after=lines(
            "# T1 ",
            "",
            START,
            "- [T1](#t1)",
            "    - [T2](#t2)",
            "  - [T3](#t3)",
            "      - [T4](#t4)",
            END,
            "",
            "### T2 ",
            "",
            "## T3",
            "",
            "#### T4",
        ),
        convention=TITLE,
    ),
    toc(
        "DocumentEdit.insert_documentBeginning",
        lines("## T1 ", "", "hello ", "### T2 ", "", "## T3", "", "#### T4"),
        after=lines(
            START,
            "- [T1](#t1)",
            "  - [T2](#t2)",
            "- [T3](#t3)",
            "    - [T4](#t4)",
            END,
            "",
            "## T1 ",
            "",
            "hello ",
            "### T2 ",
            "",
            "## T3",
            "",
            "#### T4",
        ),
    ),
    toc(
        "DocumentEdit.update_atBeginningOfFile",
        lines(START, "- [T1](#t1)", END, "", "# T2"),
        after=lines(START, "- [T2](#t2)", END, "", "# T2"),
        raw=True,
        convention=TITLE,
    ),
    toc("DocumentEdit.upToDate_noUpdate", lines(START, "- [T1](#t1)", END, "", "# T1"), after=None),
    toc(
        "DocumentEdit.upToDate_whitespace_noUpdate",
        lines(START, "", "- [T1](#t1)", END, "", "# T1"),
        after=None,
    ),
]


async def toc_actions(client, ws) -> list[types.CodeAction]:
    at = types.Position(line=0, character=0)
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=tdi(ws.uri("doc.md")),
            range=types.Range(start=at, end=at),
            context=types.CodeActionContext(diagnostics=[], only=["source.toc"]),
        )
    )
    return [a for a in found or [] if isinstance(a, types.CodeAction)]


def applied(text: str, action: types.CodeAction) -> str:
    assert action.edit is not None and action.edit.changes is not None
    (edits,) = action.edit.changes.values()
    return apply_edits(text, [(as_tuple(e.range), e.new_text) for e in edits])


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_toc(client, tmp_path, case):
    async with workspace(client, tmp_path, case) as ws:
        actions = await toc_actions(client, ws)
        text = ws.files["doc.md"] or ""
        titles = [a.title for a in actions]
        if "detect" in case:
            if not case["detect"]:
                assert "Update table of contents" not in titles
                return
            (update,) = [a for a in actions if a.title == "Update table of contents"]
            assert update.edit is not None and update.edit.changes is not None
            (edits,) = update.edit.changes.values()
            a, b = case["detect"]
            assert all(a <= e.range.start.line and e.range.end.line <= b for e in edits)
            return
        if "insert" in case:
            (insert,) = [a for a in actions if a.title == "Insert table of contents"]
            assert insert.edit is not None and insert.edit.changes is not None
            ((edit,),) = insert.edit.changes.values()
            at = (edit.range.start.line, edit.range.start.character)
            after = case["insert"]
            if after is None:  # the document's beginning
                assert at == (0, 0)
            else:  # after the range: only blank lines between
                rows = text.split("\n")
                end = (after[2], after[3])
                assert at >= end, (at, end)
                assert all(not r.strip() for r in rows[end[0] + 1 : at[0]]), (at, end)
            return
        if case["after"] is None:
            assert actions == []
            return
        assert len(actions) == 1, titles
        want = case["after"] if case.get("raw") else ours(case["after"])
        assert applied(text, actions[0]) == want
