"""VS Code's markdown language service, src/test/diagnostic.test.ts, ported.

Peer: microsoft/vscode-markdown-languageservice at 972b95e0ff2251fd4c9a8d0f6d31247284708ab0

Translation into LSP terms:
* ``getComputedDiagnostics`` is ``textDocument/diagnostic`` (a pull) on the
  document, in a folder holding the peer's workspace.
* Ranges: VS Code marks a broken link's destination, mdseek the whole link
  (``[text](dest)``); each expected range must lie in exactly one of mdseek's
  diagnostics and each of those hold exactly one
  (:func:`peer_support.match_spans`). Messages are each product's own.

Not ported (checks mdseek does not make): reference labels without a
definition (``[text][no-such]``), unused and duplicate link definitions (5
tests), the ``ignoreLinks`` and ``validate*`` settings (10 tests); from the
"Diagnostic Manager" suite, the tests of its own file-stat cache and of
multi-root folders (4).
"""

from __future__ import annotations

import pytest
from peer_support import lines, params, run_diagnostics, server_fixture

pytestmark = pytest.mark.slow

client = server_fixture()

CM = "CommonMark: a reference definition cannot interrupt a paragraph, so the '[...]: ...' lines under the links are paragraph text (VS Code's link finder reads them as definitions)"

CASES: list[dict] = [
    {
        "name": "Should not return any diagnostics for empty document",
        "files": {"doc.md": lines("text")},
        "diags": [],
    },
    {
        "name": "Should generate diagnostic for link to file that does not exist",
        "files": {
            "doc.md": lines(
                "[bad](/no/such/file.md)",
                "[good](/doc.md)",
                "[good-ref]: /doc.md",
                "[bad-ref]: /no/such/file.md",
            )
        },
        "diags": [(0, 6, 0, 22), (3, 11, 3, 27)],
        "convention": CM,
    },
    {
        "name": "Should generate diagnostic for link to file that does not exist [blank line before the definitions]",
        "files": {
            "doc.md": lines(
                "[bad](/no/such/file.md)",
                "[good](/doc.md)",
                "",
                "[good-ref]: /doc.md",
                "[bad-ref]: /no/such/file.md",
            )
        },
        "diags": [(0, 6, 0, 22), (4, 11, 4, 27)],
    },
    {
        "name": "Should generate diagnostics for links to header that does not exist in current file",
        "files": {
            "doc.md": lines(
                "[good](#good-header)",
                "# Good Header",
                "[bad](#no-such-header)",
                "[good](#good-header)",
                "[good-ref]: #good-header",
                "[bad-ref]: #no-such-header",
            )
        },
        "diags": [(2, 6, 2, 21), (5, 11, 5, 26)],
        "convention": CM,
    },
    {
        "name": "Should generate diagnostics for links to header that does not exist in current file [blank line before the definitions]",
        "files": {
            "doc.md": lines(
                "[good](#good-header)",
                "# Good Header",
                "[bad](#no-such-header)",
                "[good](#good-header)",
                "",
                "[good-ref]: #good-header",
                "[bad-ref]: #no-such-header",
            )
        },
        "diags": [(2, 6, 2, 21), (6, 11, 6, 26)],
    },
    {
        "name": "Should generate diagnostics for links to non-existent headers in other files",
        "files": {
            "doc1.md": lines(
                "# My header",
                "[good](#my-header)",
                "[good](/doc1.md#my-header)",
                "[good](doc1.md#my-header)",
                "[good](/doc2.md#other-header)",
                "[bad](/doc2.md#no-such-other-header)",
            ),
            "doc2.md": lines("# Other header"),
        },
        "at": "doc1.md",
        "diags": [(5, 14, 5, 35)],
    },
    {
        "name": "Should support links both with and without .md file extension",
        "files": {
            "doc.md": lines(
                "# My header",
                "[good](#my-header)",
                "[good](/doc.md#my-header)",
                "[good](doc.md#my-header)",
                "[good](/doc#my-header)",
                "[good](doc#my-header)",
            )
        },
        "diags": [],
    },
    {
        "name": "Reference links should be case insensitive",
        "files": {"doc.md": lines("[good link][GoOd]", "", "[gOoD]: http://example.com")},
        "diags": [],
    },
    {
        "name": "Should not generate diagnostics for email autolink",
        "files": {"doc1.md": lines("a <user@example.com> c")},
        "at": "doc1.md",
        "diags": [],
    },
    {
        "name": "Should not generate diagnostics for html tag that looks like an autolink",
        "files": {"doc1.md": lines("a <tag>b</tag> c", "a <scope:tag>b</scope:tag> c")},
        "at": "doc1.md",
        "diags": [],
    },
    {
        "name": "Should not detect checkboxes as invalid links",
        "files": {
            "doc1.md": lines(
                "- [x]",
                "- [X]",
                "- [ ]",
                "",
                "* [x]",
                "* [X]",
                "* [ ]",
                "",
                "+ [x]",
                "+ [X]",
                "+ [ ]",
            )
        },
        "at": "doc1.md",
        "diags": [],
    },
    {
        "name": "Should detect invalid links with titles",
        "files": {
            "doc1.md": lines(
                '[link](<no such.md> "text")',
                "[link](<no such.md> 'text')",
                "[link](<no such.md> (text))",
                '[link](no-such.md "text")',
                "[link](no-such.md 'text')",
                "[link](no-such.md (text))",
            )
        },
        "at": "doc1.md",
        "diags": [
            (0, 8, 0, 18),
            (1, 8, 1, 18),
            (2, 8, 2, 18),
            (3, 7, 3, 17),
            (4, 7, 4, 17),
            (5, 7, 5, 17),
        ],
    },
    {
        "name": "Should generate diagnostics for non-existent header using file link to own file",
        "files": {
            "sub/doc.md": lines(
                "[bad](doc.md#no-such)",
                "[bad](doc#no-such)",
                "[bad](/sub/doc.md#no-such)",
                "[bad](/sub/doc#no-such)",
            )
        },
        "at": "sub/doc.md",
        "diags": [(0, 12, 0, 20), (1, 9, 1, 17), (2, 17, 2, 25), (3, 14, 3, 22)],
    },
    {
        "name": "Should use filename without brackets for bracketed link",
        "files": {"doc1.md": lines("[link](<no such.md>)", "", "[def]: <no such.md>")},
        "at": "doc1.md",
        "diags": [(0, 8, 0, 18), (2, 8, 2, 18)],
    },
    {
        "name": "Should not validate line number links",
        "files": {
            "doc1.md": lines(
                "[link](#L1)",
                "[link](doc1.md#L1)",
                "[link](#L1,2)",
                "[link](doc1.md#L1,2)",
                "[link](#1)",
                "[link](doc1.md#1)",
                "[link](#1,2)",
                "[link](doc1.md#1,2)",
                "[link](#L1-L5)",
                "[link](doc1.md#L1-L5)",
                "[link](#1-5)",
                "[link](doc1.md#1-5)",
                "[link](#L1,2-L5,3)",
                "[link](doc1.md#L1,2-L5,3)",
                "[link](#1,2-5,3)",
                "[link](doc1.md#1,2-5,3)",
            )
        },
        "at": "doc1.md",
        "diags": [],
    },
    {
        "name": "Should detect reference link shorthand with nested brackets",
        "files": {"doc.md": lines("[[test]]", "", "[test]: http://example.com")},
        "diags": [],
    },
    {
        "name": "Should detect reference links shorthand with escaped brackets",
        "files": {
            "doc.md": lines(
                "[abc][\\[test\\]]",
                "[\\[test\\]][]",
                "[\\[test\\]]",
                "",
                "[\\[test\\]]: http://example.com",
            )
        },
        "diags": [],
    },
    {
        "name": "Should handle file names with '%' in the name",
        "files": {
            "doc1.md": lines(
                "[i](/a%20b.md)",
                "[i](a%20b.md)",
                "[i](./a%20b.md)",
                "[i](/a%2520b.md)",
                "[i](a%2520b.md)",
                "[i](./a%2520b.md)",
                "[i](<a b.md>)",
            ),
            "a%20b.md": "",
        },
        "at": "doc1.md",
        "diags": [(0, 4, 0, 13), (1, 4, 1, 12), (2, 4, 2, 14), (6, 5, 6, 11)],
    },
    {
        "name": "Should not detect errors in inline code (#153)",
        "files": {"doc.md": lines("- `[!xyz].js` `ab.js` `[^xyz].js` `[!x-z].js`。")},
        "diags": [],
    },
    {
        "name": "Should support angle bracket links with spaces in fragment",
        "files": {
            "doc space1.md": lines(
                "[i](<doc space2.md>)",
                "[i](<doc space2.md#fr agment>)",
                "[i](<#fr agment>)",
                "",
                "# FR agment",
            ),
            "doc space2.md": lines("# FR agment"),
        },
        "at": "doc space1.md",
        "diags": [],
    },
    # -- Diagnostic Manager ------------------------------------------------------------
    {
        "name": "Should support links both with and without .md file extension (with dot in file name, #153094)",
        "files": {
            "doc.test.md": lines(
                "# My header",
                "[good](#my-header)",
                "[good](/doc.test.md#my-header)",
                "[good](doc.test.md#my-header)",
                "[good](/doc.test#my-header)",
                "[good](doc.test#my-header)",
            )
        },
        "at": "doc.test.md",
        "diags": [],
    },
    {
        "name": "Should treat fragment links to self as marking file as existing#1",
        "files": {"doc1.md": lines("# header", "[link](#header)")},
        "at": "doc1.md",
        "diags": [],
    },
    {
        "name": "Should treat fragment links to self as marking file as existing#2",
        "files": {
            "doc1.md": lines("# header", "[link](#header)"),
            "doc2.md": lines("[text](./doc1.md#header)"),
        },
        "at": "doc2.md",
        "diags": [],
    },
    # -- images (the "Diagnostic Manager" suite's documents, each state a case) ---------
    {
        "name": "File delete should revalidate diagnostics#1",
        "files": {"doc.md": lines("![i](/other.png)"), "other.png": None},
        "diags": [],
    },
    {
        "name": "File delete should revalidate diagnostics#2",
        "files": {"doc.md": lines("![i](/other.png)")},
        "diags": [(0, 5, 0, 15)],
    },
    {
        "name": "Disabling own fragment validation should also disable path fragment validation by default#2 [the image line alone, default settings]",
        "files": {"doc1.md": lines("![i](/doc2.md#no-such)"), "doc2.md": ""},
        "at": "doc1.md",
        "diags": [(0, 13, 0, 21)],
    },
    # -- HTML id anchors ----------------------------------------------------------------
    {
        "name": "Should not generate diagnostic for link to HTML id in own file",
        "files": {"doc.md": lines('<div id="my-target"></div>', "", "[link](#my-target)")},
        "diags": [],
    },
    {
        "name": "Should still generate diagnostic for link to non-existent fragment even with HTML ids present",
        "files": {
            "doc.md": lines(
                '<div id="my-target"></div>', "", "[good](#my-target)", "[bad](#no-such-target)"
            )
        },
        "diags": [(3, 6, 3, 21)],
    },
    {
        "name": "Should not generate diagnostic for link to HTML id in code block",
        "files": {"doc.md": lines("~~~", '<div id="my-target"></div>', "~~~", "[bad](#my-target)")},
        "diags": [(3, 6, 3, 16)],
    },
    {
        "name": "Should not generate diagnostic for link to HTML id in other file",
        "files": {
            "doc1.md": lines("[good](doc2.md#my-target)", "[bad](doc2.md#no-such-target)"),
            "doc2.md": lines('<span id="my-target">content</span>'),
        },
        "at": "doc1.md",
        "diags": [(1, 13, 1, 28)],
    },
    {
        "name": "Should not generate diagnostic for link to HTML id with single quotes",
        "files": {"doc.md": lines("<div id='my-target'></div>", "", "[link](#my-target)")},
        "diags": [],
    },
    {
        "name": "Should not generate diagnostic for link to header that also has an HTML id",
        "files": {
            "doc.md": lines(
                "# My Header", "", '<div id="my-header"></div>', "", "[good](#my-header)"
            )
        },
        "diags": [],
    },
]


@pytest.mark.parametrize("case", params(CASES))
async def test_vscode_diagnostics(client, tmp_path, case):
    await run_diagnostics(client, tmp_path, case)
