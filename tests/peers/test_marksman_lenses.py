"""marksman's Tests/LensesTests.fs, ported.

Peer: artempyanykh/marksman at 45b2a662ce197798aecdfb7e2dbc3c1025f00fe7

Translation into LSP terms: ``Lenses.forDoc client folder d1`` is
``textDocument/codeLens`` on ``d1.md``, each lens then resolved
(``codeLens/resolve``, as an editor resolves the lenses it shows): the
peer's (title, range) of each lens is compared with mdseek's, one assertion
per lens; with ``codeLensFindReferences`` the peer's command carries the
locations, as mdseek's ``mdseek.showReferences`` always does (its third
argument). Both show a lens only where there are references (mdseek's
``codeLens`` setting, "nonzero" by default); the peer's "no lens on ``## No
ref``" is an assertion of its own.

All of the peer's tests are ported (three, split into one case per assertion).
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from peer_support import as_tuple, lines, params, server_fixture, tdi, workspace

pytestmark = pytest.mark.slow

client = server_fixture()

TITLE_REFS = "marksman's lens on a note's title counts every link to the note, to its other headings too ([[Doc 1#Sub]]); mdseek's, as VS Code's references on a heading, the links to the title and to the file"
DEFS = "mdseek's lenses count the links to a heading; the uses of a [foo]: definition are its references (textDocument/references on it)"

HEADERS = {
    "d1.md": lines("# Doc 1", "## Sub", "[[#Sub]]", "## No ref"),
    "d2.md": lines("# Doc 2", "[[Doc 1#Sub]]"),
}
LINK_DEFS = {"d1.md": lines("[foo]", "[foo][]", "[bar]", "", "[foo]: /url")}


def lens(name: str, files: dict, line: int, **kw: object) -> dict:
    """The lens on ``line`` of d1.md: ``want`` (title, range) or None for none;
    ``locations``: how many its command carries."""
    return {"name": name, "files": files, "line": line, **kw}


CASES: list[dict] = [
    lens(
        "basicHeaderLenses [# Doc 1]",
        HEADERS,
        0,
        want=("1 reference", (0, 0, 0, 7)),
        convention=TITLE_REFS,
    ),
    lens(
        "basicHeaderLenses [## Sub]",
        HEADERS,
        1,
        want=("2 references", (1, 0, 1, 6)),
    ),
    lens(
        "basicHeaderLenses [no lens on ## No ref]",
        HEADERS,
        3,
        want=None,
    ),
    lens(
        "basicHeaderLenses_withCommandArguments [# Doc 1]",
        HEADERS,
        0,
        want=("1 reference", (0, 0, 0, 7)),
        locations=1,
        convention=TITLE_REFS,
    ),
    lens(
        "basicHeaderLenses_withCommandArguments [## Sub]",
        HEADERS,
        1,
        want=("2 references", (1, 0, 1, 6)),
        locations=2,
    ),
    lens(
        "basicLinkDefLenses",
        LINK_DEFS,
        4,
        want=("2 references", (4, 0, 4, 11)),
        convention=DEFS,
    ),
]


@pytest.mark.parametrize("case", params(CASES))
async def test_marksman_lenses(client, tmp_path, case):
    async with workspace(client, tmp_path, case) as ws:
        found = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=tdi(ws.uri("d1.md")))
        )
        here = [
            await client.code_lens_resolve_async(lens)
            for lens in found or []
            if lens.range.start.line == case["line"]
        ]
        want = case["want"]
        if want is None:
            assert here == []
            return
        got = [
            (lens.command.title if lens.command else None, as_tuple(lens.range)) for lens in here
        ]
        assert got == [want]
        if "locations" in case:
            cmd = here[0].command
            assert cmd is not None and cmd.arguments is not None
            assert len(cmd.arguments[2]) == case["locations"]
