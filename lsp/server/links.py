"""Linking by meaning while writing.

* Code action **Link to related section: …** on a paragraph or a selection:
  the sections elsewhere in the folder most like the paragraph (hybrid search
  seeded with its text), each as an action that inserts a relative
  ``[text](path.md#anchor)`` link — around the selection, or at the cursor with
  the heading as text. Computed when the user asks for code actions (not for
  the automatic light bulb, which would embed a paragraph per cursor move).
* **Completion after** ``](``, ``](<``, ``[ref]: `` **and** ``[[``: the sections
  most like the surrounding paragraph first (``path.md#anchor``, or
  ``note#Heading`` in wiki links), then the folder's files (after ``![i](`` its
  pictures and other media too; in wiki links, the notes' front-matter aliases),
  each text once. Inside ``<...>`` a path is written as is (spaces kept, ``<``
  and ``>`` escaped). Anchors are the index's slugs (GitHub's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from lsprotocol import types

from mdseek.index.api import SearchResult
from mdseek.index.links.context import in_image
from mdseek.index.links.links import find_links, link_destination, wiki_name
from mdseek.index.text.aliases import AliasMap
from mdseek.index.text.document import ParsedDocument

from .roots import Root
from .worker import off_loop
from .workspace import Workspace

KIND = types.CodeActionKind.RefactorRewrite
SUGGESTIONS = 5  # code actions offered
COMPLETIONS = 8  # sections offered by meaning in a completion
NOT_PROSE = ("fence", "code_block", "heading", "html_block", "hr")

_MD_TARGET = re.compile(r"\]\(\s*([^()\s#<>]*)$")
_ANGLE_TARGET = re.compile(r"\]\(\s*<([^<>\n#]*)$")  # [t](<a b/|  (spaces allowed)
_DEF_TARGET = re.compile(r"^ {0,3}\[(?:\\.|[^\]\\])+\]:[ \t]+(<?)([^\s<>#]*)$")  # [ref]: |
_WIKI_TARGET = re.compile(r"\[\[([^\[\]|#]*)$")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_WIKI_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_WORD = re.compile(r"\w")


def _passage_span(doc: ParsedDocument, line: int, lone: bool = False) -> tuple[int, int] | None:
    """The paragraph (or list item, quote, table) holding ``line``; None in code or
    a heading; with ``lone``, the line itself outside every block (a definition)."""
    for b in doc.blocks:
        if b.start_line <= line < b.end_line:
            if b.kind in NOT_PROSE:
                return None
            for a, z in b.items:
                if a <= line < z:
                    return a, z
            return b.start_line, b.end_line
    return (line, line + 1) if lone else None


def _plain(text: str) -> str:
    """Prose for a query: links reduced to their text."""
    text = _WIKI_LINK.sub(r"\1", _MD_LINK.sub(r"\1", text))
    return " ".join(text.split())


def _escape_text(text: str) -> str:
    return re.sub(r"([\\\[\]])", r"\\\1", text)


@dataclass
class Passage:
    """Where a link is being written: the folder, the file, and the paragraph."""

    root: Root
    uri: str
    rel: str
    doc: ParsedDocument
    start_line: int
    end_line: int
    linked: set[tuple[str, str]] = field(default_factory=set)  # (path, anchor) already linked here

    @property
    def text(self) -> str:
        return _plain("\n".join(self.doc.lines()[self.start_line : self.end_line]))


def _passage(ws: Workspace, uri: str, line: int, lone: bool = False) -> Passage | None:
    found = ws.doc_for_uri(uri)
    if found is None:
        return None
    path, doc = found
    root = ws.root_for(path)
    span = _passage_span(doc, line, lone)
    if root is None or not root.folder.is_open or span is None:
        return None
    rel = root.rel(path)
    p = Passage(root, uri, rel, doc, span[0], span[1])
    for lk in find_links(doc):
        if span[0] <= lk.line < span[1]:
            t = ws.resolve_link(root, path, lk)
            if t.path:
                p.linked.add((t.path, t.anchor or ""))
    return p


async def _like(p: Passage, query: str, limit: int, unlinked: bool = False) -> list[SearchResult]:
    """``unlinked``: less what the paragraph's section links to or is linked from."""
    line = p.start_line if unlinked else None
    resp = await p.root.read(p.root.folder.sections_like, query, p.rel, limit + len(p.linked), line)
    return [r for r in resp.results if (r.path, r.slug) not in p.linked][:limit]


# -- code action ---------------------------------------------------------------------


@dataclass
class ActionPlan:
    passage: Passage
    query: str
    range: types.Range  # replaced (a selection) or the insertion point
    text: str | None  # the selection: the link's text (else the heading's)
    before: str = ""
    after: str = ""


def plan_action(ws: Workspace, uri: str, rng: types.Range) -> ActionPlan | None:
    found = ws.doc_for_uri(uri)
    if found is None:
        return None
    lines = found[1].lines()
    l0, c0 = ws.pos.from_client(lines, rng.start)
    l1, c1 = ws.pos.from_client(lines, rng.end)
    p = _passage(ws, uri, l0)
    if p is None or l1 >= max(p.end_line, l0 + 1) or l0 >= len(lines):
        return None
    links = [lk for lk in find_links(p.doc) if p.start_line <= lk.line < p.end_line]
    if (l0, c0) != (l1, c1):  # a selection becomes the link's text
        if l1 > l0:
            sel = "\n".join([lines[l0][c0:], *lines[l0 + 1 : l1], lines[l1][:c1]])
        else:
            sel = lines[l0][c0:c1]
        if not sel.strip() or "[" in sel or "]" in sel:
            return None
        if any(lk.contains(l0, c0) or lk.contains(l1, c1) for lk in links):
            return None
        return ActionPlan(p, f"{_plain(sel)} {p.text}", rng, sel)
    if any(lk.contains(l0, c0) for lk in links):
        return None
    line = lines[l0]
    c = c0
    while c < len(line) and _WORD.match(line[c]):  # never split a word
        c += 1
    at = ws.pos.to_client(lines, l0, c)
    before = " " if c > 0 and not line[c - 1].isspace() and line[c - 1] not in "([" else ""
    after = " " if c < len(line) and not line[c].isspace() and line[c] not in ".,;:!?)" else ""
    return ActionPlan(p, p.text, types.Range(start=at, end=at), None, before, after)


async def code_actions(ws: Workspace, params: types.CodeActionParams) -> list[types.CodeAction]:
    ctx = params.context
    if ctx.trigger_kind == types.CodeActionTriggerKind.Automatic:
        return []
    if ctx.only and not any(KIND == k or KIND.startswith(f"{k}.") for k in ctx.only):
        return []
    plan = await off_loop(ws, plan_action, ws, params.text_document.uri, params.range)
    if plan is None or not plan.query.strip():
        return []
    p = plan.passage
    out = []
    for r in await _like(p, plan.query, SUGGESTIONS, ws.settings.related_unlinked):
        dest = link_destination(p.rel, r.path, r.slug or None)
        text = plan.text if plan.text is not None else _escape_text(r.heading or r.breadcrumb)
        edit = types.TextEdit(
            range=plan.range, new_text=f"{plan.before}[{text}]({dest}){plan.after}"
        )
        out.append(
            types.CodeAction(
                title=f"Link to related section: {r.heading or r.breadcrumb} ({r.path})",
                kind=KIND,
                edit=types.WorkspaceEdit(changes={p.uri: [edit]}),
            )
        )
    return out


# -- completion ------------------------------------------------------------------------


@dataclass
class TargetContext:
    kind: str  # "markdown" (after ``](`` or ``[ref]:``) or "wiki" (after ``[[``)
    prefix: str  # what is typed of the target
    start: int  # its column
    closer: str  # ")", ">)" or "]]" when the link is not closed yet
    angle: bool = False  # inside ``<...>``: written as is, ``<`` and ``>`` escaped
    definition: bool = False  # ``[ref]: |``
    image: bool = False  # ``![i](|``: pictures and other media are offered too
    eat: int = 0  # characters after the cursor the item replaces (``>`` it closes again)


def target_context(line: str, col: int) -> TargetContext | None:
    before, rest = line[:col], line[col:]
    m = _WIKI_TARGET.search(before)
    if m:
        return TargetContext("wiki", m.group(1), m.start(1), "" if rest.startswith("]]") else "]]")
    m = _MD_TARGET.search(before)
    if m:
        closer = "" if rest.startswith(")") else ")"
        return TargetContext("markdown", m.group(1), m.start(1), closer, image=_image(before, m))
    m = _ANGLE_TARGET.search(before)
    if m:
        closed = rest.startswith(">)")
        closer = "" if closed else (">" if rest.startswith(")") else ">)")
        return TargetContext(
            "markdown",
            m.group(1),
            m.start(1),
            closer,
            angle=True,
            image=_image(before, m),
            eat=1 if rest.startswith(">") and not closed else 0,  # <a|> written <a.md>)
        )
    m = _DEF_TARGET.match(before)
    if m:
        angle = bool(m.group(1))
        closer = ">" if angle and not rest.startswith(">") else ""
        return TargetContext(
            "markdown", m.group(2), m.start(2), closer, angle=angle, definition=True
        )
    return None


def _image(before: str, m: re.Match) -> bool:
    """Whether the ``](`` matched is an image's: ``![`` opens its text."""
    return in_image(before[: m.start() + 2])


def _destination(p: Passage, ctx: TargetContext, target: str, anchor: str | None = None) -> str:
    """How the link being written names ``target``: %-encoded as
    :func:`link_destination` writes it, or inside ``<...>`` as is (spaces kept)
    with ``<``, ``>`` and ``\\`` escaped and ``%`` encoded."""
    dest = link_destination(p.rel, target, anchor)
    if not ctx.angle:
        return dest
    plain = unquote(dest)
    return re.sub(r"([<>\\])", r"\\\1", plain.replace("%", "%25"))


def _file_items(
    p: Passage, ctx: TargetContext, rng: types.Range, files: list[str]
) -> list[types.CompletionItem]:
    items = []
    for f in files:
        if f == p.rel:
            continue
        insert = wiki_name(f, files) if ctx.kind == "wiki" else _destination(p, ctx, f)
        items.append(
            types.CompletionItem(
                label=insert,
                kind=types.CompletionItemKind.File,
                detail=f,
                sort_text=f"1{insert}",
                filter_text=insert,
                text_edit=types.TextEdit(range=rng, new_text=insert + ctx.closer),
            )
        )
    return items


def _alias_items(
    p: Passage, ctx: TargetContext, rng: types.Range, aliases: AliasMap
) -> list[types.CompletionItem]:
    """``[[`` offers each note's aliases that lead to it (not one another note
    also claims, nor a file's name: those lead elsewhere)."""
    items = []
    for f, names in aliases.by_file.items():
        if f == p.rel:
            continue
        for a in names:
            if aliases.claims(a) != [f] or aliases.shadowed(a) or any(c in a for c in "[]|#^"):
                continue
            items.append(
                types.CompletionItem(
                    label=a,
                    kind=types.CompletionItemKind.File,
                    detail=f"alias of {f}",
                    sort_text=f"1{a}",
                    filter_text=a,
                    text_edit=types.TextEdit(range=rng, new_text=a + ctx.closer),
                )
            )
    return items


def _section_item(
    p: Passage, ctx: TargetContext, rng: types.Range, files: list[str], r: SearchResult, n: int
) -> types.CompletionItem:
    if ctx.kind == "wiki":
        name = wiki_name(r.path, files)
        insert = f"{name}#{r.heading}" if r.heading else name
    else:
        insert = _destination(p, ctx, r.path, r.slug or None)
    return types.CompletionItem(
        label=r.heading or r.breadcrumb,
        label_details=types.CompletionItemLabelDetails(description=r.path),
        kind=types.CompletionItemKind.Reference,
        detail=f"{r.breadcrumb} — related section",
        documentation=r.snippet,
        sort_text=f"0{n:03d}",
        filter_text=ctx.prefix,  # ranked by meaning: whatever is typed keeps them listed
        text_edit=types.TextEdit(range=rng, new_text=insert + ctx.closer),
    )


def plan_completion(
    ws: Workspace, uri: str, position: types.Position
) -> tuple[Passage, TargetContext, types.Range, list[str]] | None:
    found = ws.doc_for_uri(uri)
    if found is None:
        return None
    lines = found[1].lines()
    line, col = ws.pos.from_client(lines, position)
    if line >= len(lines):
        return None
    ctx = target_context(lines[line], col)
    p = _passage(ws, uri, line, ctx.definition) if ctx else None
    if ctx is None or p is None:
        return None
    rng = ws.pos.range(lines, line, ctx.start, line, col + ctx.eat)
    files = p.root.markdown_files()
    return p, ctx, rng, (files + p.root.media_files()) if ctx.image else files


_TYPED_LINK = re.compile(r"!?\[([^\]]*)\]\(\s*[^()\s]*$|!?\[\[([^\]]*)$")
_CONTENT_WORD = re.compile(r"[^\W\d_]{3,}")
FILLER = frozenset(
    "see also the and for this that with more read here link links about from into our your "
    "you how what which where when guidance guide docs doc page notes note details".split()
)
SAYS_SOMETHING = 4  # content words a paragraph needs to be the query on its own
CONTEXT_WORDS = 12  # words of the text before that are enough
CONTEXT_BLOCKS = 2  # blocks before the paragraph read at most


def _content_words(text: str) -> int:
    return sum(1 for w in _CONTENT_WORD.findall(text.lower()) if w not in FILLER)


def completion_query(p: Passage) -> str:
    """What a link being written is about: the cursor's paragraph when it says
    something (besides "See [the guidance](" and the like), otherwise the text
    before it in its section -- the previous paragraph(s), earlier items of its
    list -- then the section's breadcrumb when that text is short, then what
    the paragraph says (the link being typed reduced to its text)."""
    own = p.text
    typed = _TYPED_LINK.search(own)
    rest = own[: typed.start()] + " " + (typed.group(1) or typed.group(2) or "") if typed else own
    if _content_words(rest) >= SAYS_SOMETHING:
        return own
    doc, start = p.doc, p.start_line
    sec = next((s for s in doc.sections if s.start_line <= start < s.end_line), None)
    if sec is None:
        return own
    lo = sec.heading.end_line if sec.heading else sec.start_line
    spans: list[tuple[int, int]] = []
    for b in doc.blocks:
        if b.kind in NOT_PROSE or b.start_line < lo or b.start_line >= start:
            continue
        if b.end_line <= start:
            spans.append((b.start_line, b.end_line))
        else:  # the list holding the cursor's item: the items before it
            spans += [(a, z) for a, z in b.items if z <= start]
    lines = doc.lines()
    before: list[str] = []
    for a, z in reversed(spans):
        text = _plain("\n".join(lines[a:z]))
        if _content_words(text):
            before.insert(0, text)
        if len(before) >= CONTEXT_BLOCKS or _content_words(" ".join(before)) >= CONTEXT_WORDS:
            break
    crumb = [sec.breadcrumb] if _content_words(" ".join(before)) < CONTEXT_WORDS else []
    return " ".join([*before, *crumb, rest.strip()])


async def target_completion(
    ws: Workspace, uri: str, position: types.Position
) -> types.CompletionList | None:
    """Link targets after ``](`` or ``[[`` (None: not in such a place)."""
    plan = await off_loop(ws, plan_completion, ws, uri, position)
    if plan is None:
        return None
    p, ctx, rng, files = plan
    query = completion_query(p)
    if _WORD.search(ctx.prefix):
        query = f"{ctx.prefix.replace('/', ' ')} {query}"
    sections = await _like(p, query, COMPLETIONS) if query.strip() else []
    items = [_section_item(p, ctx, rng, files, r, n) for n, r in enumerate(sections)]
    items += _file_items(p, ctx, rng, files)
    if ctx.kind == "wiki":
        items += _alias_items(p, ctx, rng, await off_loop(ws, ws.aliases, p.root))
    return types.CompletionList(is_incomplete=bool(sections), items=_once(items))


def _once(items: list[types.CompletionItem]) -> list[types.CompletionItem]:
    """Each text offered once: a section without a heading writes its file's
    path, as the file's own item does (the first, ranked by meaning, is kept)."""
    seen: set[str] = set()
    out = []
    for it in items:
        te = it.text_edit
        new = te.new_text if te is not None else it.label
        if new not in seen:
            seen.add(new)
            out.append(it)
    return out
