"""Front-matter aliases (Obsidian's): other names a note answers to.

A note declares them in its front matter, under ``aliases:`` (or ``alias:``), as
a YAML list (``aliases: [Ops, On call]`` or one ``- name`` a line) or as one
string of names separated by commas (Obsidian's older form). ``[[Ops]]``,
``[[Ops#Heading]]`` and ``[[Ops|text]]`` then lead to that note.

The rule, one for every feature (:func:`.links.resolve` applies it):

1. A wiki link's name is first a path or a file name (``[[setup]]`` is
   ``setup.md``): **a file name always wins over an alias**.
2. Otherwise the folder's aliases are looked up, ignoring case and runs of
   spaces. An alias one note claims leads to it; an alias two or more notes
   claim leads nowhere: the link is reported as ambiguous, naming the notes
   (never a silent pick).

3. Then, as marksman does, a note's title (its front matter's ``title:`` or
   its leading ``# heading``, never its file name): ``[[Doc 2]]`` and
   ``[[doc-2]]`` reach the note titled ``# Doc 2`` (the name and the title have
   the same GitHub slug: case, spaces and punctuation aside). A title two
   notes share leads nowhere, as an alias does.

Aliases also count as titles in search: :func:`search_title` is the title the
lexical index and the embedded breadcrumb read. Pure: texts and front matters
in, names out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .document import ParsedDocument
from .front_matter import front_matter_title, has_front_matter_title
from .parse import parse_text
from .slug import github_slug

KEYS = ("aliases", "alias")
MAX_ALIAS = 200  # characters; a longer "alias" is a paragraph pasted by mistake
_SPACES = re.compile(r"\s+")
_FRONT_OPEN = re.compile(r"\A(?:\ufeff)?-{3,}[ \t]*\r?\n")
_FRONT_CLOSE = re.compile(r"^-{3,}[ \t]*\r?$", re.MULTILINE)
_KEY = re.compile(r"^(aliases|alias)\s*:(.*)$", re.IGNORECASE)
_ITEM = re.compile(r"^(\s*-\s+)(.*?)\s*$")
# a line that may be a heading's (ATX, or a setext underline): the text up to the
# first one holds the note's title, if it has one
_PLAIN_H1 = re.compile(r"# +([^\s`*_\[\]<>\\!&~=|$#]+(?: [^\s`*_\[\]<>\\!&~=|$#]+)*) *")
_FM_TITLE = re.compile(
    r"""^title:[ \t]*(?:"([^"\\\n]*)"|'([^'\n]*)'|([A-Za-z][^\n]*?))[ \t]*\r?$""", re.MULTILINE
)
_YAML_WORDS = frozenset("true false yes no on off null y n".split())
_HEADING_LINE = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t].*)?|=+[ \t]*|-+[ \t]*)\r?$", re.MULTILINE)


def key(name: str) -> str:
    """How an alias (or a wiki link's name) is compared: case and spacing ignored."""
    return _SPACES.sub(" ", name).strip().casefold()


def note_aliases(front_matter: Mapping[str, object]) -> tuple[str, ...]:
    """The aliases a parsed front matter declares, in order, without repeats."""
    out: list[str] = []
    for k in KEYS:
        value = front_matter.get(k)
        if isinstance(value, str):
            names: Iterable[object] = value.split(",")
        elif isinstance(value, list):
            names = value
        else:
            continue
        for v in names:
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                name = _SPACES.sub(" ", str(v)).strip()
                if name and len(name) <= MAX_ALIAS and "\n" not in name:
                    if key(name) not in {key(o) for o in out}:
                        out.append(name)
    return tuple(out)


def doc_aliases(doc: ParsedDocument) -> tuple[str, ...]:
    return note_aliases(doc.front_matter) if doc.front_matter else ()


def text_aliases(text: str, path: str = "untitled.md") -> tuple[str, ...]:
    """The aliases of a file's text (at workspace path ``path``, for log lines),
    reading its front matter only (no markdown parse of the body: this runs over
    every file of a folder)."""
    m = _FRONT_OPEN.match(text)
    if m is None:
        return ()
    close = _FRONT_CLOSE.search(text, m.end())
    if close is None:
        return ()
    head = text[: close.end()]
    if "alias" not in head.lower():
        return ()
    doc = parse_text(head, path)  # the parser's own reading of the block
    return doc_aliases(doc)


def doc_title(doc: ParsedDocument) -> str | None:
    """The title a note gives itself (front matter ``title:``, else a leading
    level-1 heading), None when its title is only its file name."""
    if has_front_matter_title(doc):
        return doc.title or None
    heads = doc.headings
    if heads and heads[0].level == 1 and heads[0].text and heads[0].text == doc.title:
        return doc.title
    return None


def text_title(text: str, path: str = "untitled.md") -> str | None:
    """:func:`doc_title` of a file's text, parsing only the text up to its first
    heading-like line (the whole text when that one is no heading: a fence's
    ``# comment``). This runs over every file of a folder."""
    start = 0
    front = _FRONT_OPEN.match(text)
    close = _FRONT_CLOSE.search(text, front.end()) if front is not None else None
    if front is not None and close is not None:
        start = close.end()
        if "title" in text[:start]:  # a title: key, read from the YAML alone
            block = text[front.end() : close.start()]
            title = _plain_title(block) or front_matter_title(block, path)[1]
            if title:
                return title
    m = _HEADING_LINE.search(text, start)
    if m is None and front is None:
        return None
    if m is not None and not text[start : m.start()].strip() and "title" not in text[:start]:
        plain = _PLAIN_H1.fullmatch(m.group(0).rstrip("\r"))
        if plain is not None:  # the note starts with '# words': no parse (most notes)
            return plain.group(1)
    head = text[: m.end()] if m is not None else text
    try:
        doc = parse_text(head, path)
        if m is not None and not doc.headings:
            doc = parse_text(text, path)
    except ValueError:  # too many headings: a title is not worth it
        return None
    return doc_title(doc)


def _plain_title(block: str) -> str | None:
    """A front matter's one ``title: Words`` line (plain, or quoted without
    escapes) read without YAML (a YAML parse is most of a title's cost); None
    for anything YAML could read otherwise (``title: yes`` is a boolean)."""
    found = _FM_TITLE.findall(block)
    if len(found) != 1 or block.count("title") != 1:
        return None
    double, single, plain = found[0]
    if plain:  # YAML's plain scalar: no mapping, comment or other type in it
        odd = plain.lower() in _YAML_WORDS or plain.endswith(":")
        return None if odd or any(t in plain for t in (": ", " #", "\t")) else plain
    return (double or single).strip() or None


def title_slug(name: str) -> str:
    """How a title (or a wiki link's name) is compared with one: its GitHub slug."""
    return github_slug(_SPACES.sub(" ", name).strip())


def search_title(title: str, aliases: Sequence[str]) -> str:
    """A note's title as search reads it: the title, then the aliases it does not
    already say (``Incident response (IR, Outage playbook)``)."""
    extra = [a for a in aliases if key(a) != key(title)]
    return f"{title} ({', '.join(extra)})" if extra else title


@dataclass(frozen=True)
class AliasSite:
    """Where an alias is written in a front matter (0-based line, code-point columns)."""

    name: str
    line: int
    start: int
    end: int


def alias_sites(doc: ParsedDocument) -> list[AliasSite]:
    """Each declared alias where it is written (``aliases: [A, B]``, ``- A``,
    ``alias: A``), quotes left out."""
    names = {key(a) for a in doc_aliases(doc)}
    if not names:
        return []
    out: list[AliasSite] = []
    for n, rest, base, on_key_line in doc.front_matter_value_lines(_KEY):
        if not on_key_line:
            item = _ITEM.match(rest)
            if item is None:
                continue
            rest, base = item.group(2), item.end(1)
        body = rest.strip().removeprefix("[").removesuffix("]")
        offset = base + rest.find(body) if body else base
        pos = 0
        for part in body.split(","):
            raw = part.strip()
            a = offset + pos + part.find(raw) if raw else offset + pos
            pos += len(part) + 1
            unq = raw
            if len(unq) >= 2 and unq[0] == unq[-1] and unq[0] in "'\"":
                unq, a = unq[1:-1], a + 1
            if unq and key(unq) in names:
                out.append(AliasSite(unq, n, a, a + len(unq)))
    return out


class AliasMap:
    """A folder's aliases: which notes claim each name."""

    def __init__(
        self,
        by_file: Mapping[str, Sequence[str]] | None = None,
        files: Iterable[str] = (),
        titles: Mapping[str, str | None] | None = None,
    ):
        self.by_file: dict[str, tuple[str, ...]] = {
            f: tuple(a) for f, a in (by_file or {}).items() if a
        }
        self.titles: dict[str, str] = {f: t for f, t in (titles or {}).items() if t}
        self._titled: dict[str, list[str]] = {}  # title slug -> the notes so titled
        for f in sorted(self.titles):
            slug = title_slug(self.titles[f])
            if slug:
                self._titled.setdefault(slug, []).append(f)
        self._stems: dict[str, str] = {}  # file name without suffix (lower) -> a file
        if self.by_file:
            for f in sorted(files):
                self._stems.setdefault(posixpath.splitext(posixpath.basename(f))[0].lower(), f)
        self._claims: dict[str, list[str]] = {}
        for f in sorted(self.by_file):
            for a in self.by_file[f]:
                claims = self._claims.setdefault(key(a), [])
                if f not in claims:
                    claims.append(f)

    def __bool__(self) -> bool:
        return bool(self.by_file) or bool(self.titles)

    def titled(self, name: str) -> list[str]:
        """The notes whose title has the slug of ``name`` (sorted paths)."""
        slug = title_slug(name) if self._titled else ""
        return self._titled.get(slug, []) if slug else []

    def reach(self, name: str) -> tuple[tuple[str, ...], bool]:
        """The notes a wiki link's ``name`` reaches when no file has that name:
        those claiming it as an alias, else those so titled; and whether by title."""
        claims = self.claims(name)
        return (tuple(claims), False) if claims else (tuple(self.titled(name)), True)

    def names_of(self, rel: str) -> tuple[str, ...]:
        """Every name besides its file name a wiki link can reach ``rel`` by:
        its aliases, its title and the title's slug."""
        title = self.titles.get(rel)
        return (*self.of(rel), *((title, title_slug(title)) if title else ()))

    def claims(self, name: str) -> list[str]:
        """The notes that declare ``name`` as an alias (sorted paths)."""
        return self._claims.get(key(name), []) if self._claims else []

    def shadowed(self, name: str) -> str | None:
        """A file named ``name`` (a file name wins over an alias), if the folder has one."""
        return self._stems.get(name.strip().lower())

    def of(self, rel: str) -> tuple[str, ...]:
        return self.by_file.get(rel, ())

    def moved(self, after: Callable[[str], str], files: Iterable[str]) -> AliasMap:
        """The same aliases once files move (``after``: old path -> new path;
        ``files``: the folder's files then)."""
        return AliasMap(
            {after(f): a for f, a in self.by_file.items()},
            files,
            {after(f): t for f, t in self.titles.items()},
        )


NO_ALIASES = AliasMap()
