"""Protocol shapes of the features: engine and link data in, lsprotocol types
(or the custom requests' JSON) out. No I/O, no threads, no engine calls.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsprotocol import types

from mdseek.index.api import SearchResult, outline
from mdseek.index.links.links import Link
from mdseek.index.text.document import Heading, ParsedDocument
from mdseek.index.text.files import display_path

from .convert import Positions, markdown_link_target, uri_at_line
from .worker import checkpoint

HOVER_BODY_CHARS = 400  # with the lines below: a hover that fits without scrolling
CHECK_EVERY = 2048  # symbols made between two looks at the request's cancel flag


def symbol_kind(level: int) -> types.SymbolKind:
    """Document titles and H1s are namespaces; every other section is a string."""
    return types.SymbolKind.Namespace if level <= 1 else types.SymbolKind.String


def heading_range(pos: Positions, lines: Sequence[str], h: Heading) -> types.Range:
    """The heading's text line (for setext headings, without the underline)."""
    line = lines[h.line] if h.line < len(lines) else ""
    return pos.range(lines, h.line, 0, h.line, len(line))


# -- documentSymbol -------------------------------------------------------------


SYMBOL_NAME_MAX = 80  # outline and breadcrumbs: long (converted AsciiDoc) headings are cut
CRUMB_PART_MAX = 48


def shorten(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, with an ellipsis."""
    t = " ".join(text.split())
    if len(t) <= limit:
        return t
    cut = t[: limit - 1]
    sp = cut.rfind(" ")
    return (cut[:sp] if sp > limit // 2 else cut).rstrip(" ,;:.-–—") + "…"


def short_crumb(crumb: str) -> str:
    return " > ".join(shorten(p, CRUMB_PART_MAX) for p in crumb.split(" > "))


def document_symbols(doc: ParsedDocument, pos: Positions) -> list[types.DocumentSymbol]:
    """The heading tree: a symbol's range runs to the next heading of the same
    or a higher level (so it covers its subsections), its selection range is
    the heading line."""
    lines = doc.lines()
    roots: list[types.DocumentSymbol] = []
    stack: list[tuple[int, types.DocumentSymbol]] = []
    for n, e in enumerate(outline(doc)):
        if n % CHECK_EVERY == 0:
            checkpoint()  # a cancelled request stops here
        line = lines[e.line] if e.line < len(lines) else ""
        sym = types.DocumentSymbol(
            name=shorten(e.text, SYMBOL_NAME_MAX) or "(untitled)",
            detail=short_crumb(e.breadcrumb),
            kind=symbol_kind(e.level),
            range=pos.lines_range(lines, e.line, e.end_line),
            selection_range=pos.range(lines, e.line, 0, e.line, len(line)),
            children=[],
        )
        while stack and stack[-1][0] >= e.level:
            stack.pop()
        if stack:
            parent = stack[-1][1]
            assert parent.children is not None
            parent.children.append(sym)  # type: ignore[attr-defined]  # a list we made
        else:
            roots.append(sym)
        stack.append((e.level, sym))
    return roots


# -- search -------------------------------------------------------------------


def result_range(pos: Positions, lines: Sequence[str] | None, r: SearchResult) -> types.Range:
    """The heading line of a result (the file's first line for a preamble)."""
    if lines is not None and r.heading_line < len(lines):
        return pos.range(lines, r.heading_line, 0, r.heading_line, len(lines[r.heading_line]))
    p = types.Position(line=r.heading_line, character=0)
    return types.Range(start=p, end=types.Position(line=r.heading_line + 1, character=0))


def symbol_information(r: SearchResult, uri: str, rng: types.Range) -> types.SymbolInformation:
    """A heading as a workspace symbol; the container says where it is, the file
    first, then its parent headings (not the heading again): VS Code shows
    "container • folder/file" beside the name, and cuts the end of a long one."""
    parts = r.breadcrumb.split(" > ")
    parents = parts[:-1] if len(parts) > 1 and parts[-1] == r.heading else parts
    where = display_path(r.path).rsplit("/", 1)[-1]
    if parents and parents != [r.heading]:
        where += f" › {short_crumb(' > '.join(parents))}"
    return types.SymbolInformation(
        name=shorten(r.heading, SYMBOL_NAME_MAX) or display_path(r.path),
        kind=symbol_kind(r.level),
        location=types.Location(uri=uri, range=rng),
        container_name=where,
    )


def range_json(rng: types.Range) -> dict:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def search_result_json(r: SearchResult, uri: str, rng: types.Range, heading: str) -> dict:
    """One result of ``mdseek/search`` (the VS Code client depends on these keys;
    ``explain`` only when the request asked for it): the CLI's JSON
    (:meth:`SearchResult.as_json`; ``heading`` as written, inline markup kept,
    ``heading_text`` plain), with the section's ``uri`` and its 0-based LSP ``range``
    (``tests/test_lsp_e2e.py`` holds the keys)."""
    out = {"uri": uri, **r.as_json(heading), "range": range_json(rng)}
    del out["anchor"], out["heading_line"]  # the client's shape has neither
    return out


# -- hover --------------------------------------------------------------------

_COMMAND_URI = re.compile(r"command:", re.IGNORECASE)


def _safe(md: str) -> str:
    """Markdown from a user's file, defused: no ``command:`` link can survive."""
    return _COMMAND_URI.sub("command\u200b:", md)


def _escape_inline(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<|])", r"\\\1", text)


HOVER_BODY_LINES = 10
FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})")


def _fence_end(lines: Sequence[str], start: int) -> int:
    """The line after the fenced block opening at ``start`` (its closing fence
    included; the end of ``lines`` for a fence never closed)."""
    m = FENCE_OPEN.match(lines[start])
    assert m is not None
    mark = m.group(1)
    for i in range(start + 1, len(lines)):
        c = FENCE_OPEN.match(lines[i])
        if c and c.group(1)[0] == mark[0] and len(c.group(1)) >= len(mark):
            if not lines[i].strip()[len(c.group(1)) :].strip():
                return i + 1
    return len(lines)


def _cut_prose(line: str, room: int) -> str:
    cut = line.rfind(" ", 0, room)
    return line[: cut if cut > room // 2 else room].rstrip() + " …"


def _more(lines: Sequence[str]) -> str:
    n = sum(1 for ln in lines if ln.strip() and not FENCE_OPEN.match(ln))
    return f"\n\n_…{n} more {'line' if n == 1 else 'lines'}_" if n else ""


def excerpt(
    doc: ParsedDocument,
    start_line: int,
    end_line: int,
    limit: int = HOVER_BODY_CHARS,
    max_lines: int = HOVER_BODY_LINES,
) -> str:
    """The start of a section's body, at most ``limit`` characters and
    ``max_lines`` lines, never cut inside a fenced block: a block that does not
    fit is left out whole (the cut comes before it), unless it opens the body,
    then its first lines are shown up to a line that ends a command (no backslash
    continuation). What is left out is counted: "…N more lines"."""
    lines = list(doc.lines()[start_line:end_line])
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    out: list[str] = []
    used = 0
    i = 0
    while i < len(lines):
        ln = lines[i]
        if FENCE_OPEN.match(ln):
            end = _fence_end(lines, i)
            block = lines[i:end]
            size = sum(len(b) + 1 for b in block)
            if len(out) + len(block) <= max_lines and used + size <= limit * 3 // 2:
                out += block
                used += size
                i = end
                continue
            if any(o.strip() for o in out):  # cut before the block
                break
            keep = max(2, max_lines - 1)  # the opening fence and the first lines
            while keep < len(block) - 1 and block[keep - 1].rstrip().endswith("\\"):
                keep += 1
            out += block[:keep]
            if not FENCE_OPEN.match(out[-1]) or len(out) == 1:
                out.append(FENCE_OPEN.match(block[0]).group(1))  # type: ignore[union-attr]
            closed = len(block) > 1 and FENCE_OPEN.match(block[-1]) is not None
            rest = block[keep : len(block) - 1 if closed else len(block)]  # not the fence
            return "\n".join(out) + _more(rest + lines[end:])
        if len(out) >= max_lines or used >= limit:
            break
        if used + len(ln) > limit:
            out.append(_cut_prose(ln, limit - used))
            return "\n".join(out) + _more(lines[i + 1 :])
        out.append(ln)
        used += len(ln) + 1
        i += 1
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out) + _more(lines[i:])


def hover_section(
    doc: ParsedDocument,
    heading: Heading | None,
    path: str,
    uri: str,
    root_name: str | None = None,
) -> types.Hover:
    """A preview of a link's target: heading, breadcrumb, the start of the body, path
    (as text: the editor's own "follow link" is the one link to the target)."""
    if heading is None:
        title = doc.title
        crumb = doc.title
        body_start = doc.body_start_line
        body_end = doc.line_count
        line = 0
        if doc.headings and doc.headings[0].level == 1 and doc.headings[0].text == doc.title:
            body_start = doc.headings[0].end_line
    else:
        title = heading.text
        sec = next((s for s in doc.sections if s.heading == heading), None)
        crumb = sec.breadcrumb if sec else heading.text
        body_start = heading.end_line
        body_end = sec.end_line if sec else doc.line_count
        line = heading.line
        if sec is not None and body_end - body_start < 3:  # a bare heading: show its subsections
            nxt = next(
                (h for h in doc.headings if h.line > heading.line and h.level <= heading.level),
                None,
            )
            body_end = nxt.line if nxt else doc.line_count
    body = excerpt(doc, body_start, body_end)
    where = f"{root_name}/{path}" if root_name else path
    md = (
        f"**{_escape_inline(title)}**  \n"
        f"_{_escape_inline(crumb)}_\n\n"
        f"{body}\n\n"
        f"`{where}:{line + 1}`"  # one way there: the link itself (F12, Ctrl+click)
    )
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=_safe(md))
    )


def hover_heading(
    crumb: str,
    related: list[tuple[SearchResult, str]],
    note: str | None,
    hover_range: types.Range,
) -> types.Hover:
    """A heading's breadcrumb and the related sections elsewhere, each a link to its line."""
    parts = [f"**{_escape_inline(crumb)}**"]
    if related:
        parts.append("Related sections:")
        items = []
        for r, uri in related:
            target = markdown_link_target(uri_at_line(uri, r.heading_line))
            items.append(
                f"- [{_escape_inline(r.breadcrumb)}]({target}) — `{display_path(r.path)}:{r.heading_line + 1}`"
            )
        parts.append("\n".join(items))
    elif note:
        parts.append(f"_{_escape_inline(note)}_")
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value=_safe("\n\n".join(parts))
        ),
        range=hover_range,
    )


# -- links ------------------------------------------------------------------------


def link_range(pos: Positions, lines: Sequence[str], link: Link) -> types.Range:
    return pos.range(lines, link.line, link.start, link.end_line, link.end)


def anchor_items(
    doc: ParsedDocument, kind: str, rng: types.Range, prefix: str
) -> list[types.CompletionItem]:
    """Completions after ``#``: slugs for markdown links, heading text for wiki links
    (each once: a second heading with one text is reached by the first's)."""
    crumbs = {s.heading.line: s.breadcrumb for s in doc.sections if s.heading}
    items = []
    seen: set[str] = set()
    for n, h in enumerate(doc.headings):
        insert = h.text if kind == "wiki" else h.slug
        if insert in seen:
            continue
        seen.add(insert)
        items.append(
            types.CompletionItem(
                label=insert,
                kind=types.CompletionItemKind.Reference,
                detail=crumbs.get(h.line, h.text),
                filter_text=insert,
                sort_text=f"{n:05d}",
                text_edit=types.TextEdit(range=rng, new_text=insert),
            )
        )
    del prefix  # the client filters by what is typed
    return items
