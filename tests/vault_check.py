"""The real-vault test's own reading of a markdown folder (not mdseek's): every
link written in it and where it leads, by rules written here from the formats'
own descriptions -- CommonMark/GitHub for markdown links and anchors, Obsidian's
help for wiki links, embeds, heading and block links and aliases. Regexes over
the text, simple on purpose: it shares no code with what it checks.

A link is (file, line, start, end, kind, written target); :func:`resolve` says
where it leads: ``("file", path, None)``, ``("heading", path, n)`` (the n-th
heading of the file), ``("block", path, id)``, ``("external",)``,
``("outside",)``, or ``("broken", why)``.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
INLINE = re.compile(
    r"(?<![!\\])\[((?:[^\[\]\\]|\\.|\[[^\[\]]*\])*)\]\(\s*(<[^<>\n]*>|(?:[^\s()\\]|\\.|\([^\s()]*\))*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)"
)
REF_USE = re.compile(r"(?<![!\\\]])\[((?:[^\[\]\\]|\\.)+)\](?:\[((?:[^\[\]\\]|\\.)*)\])?(?![(:\[])")
DEFINITION = re.compile(r"^ {0,3}\[((?:[^\[\]\\]|\\.)+)\]:[ \t]*(<[^<>\n]*>|\S+)")
WIKI = re.compile(r"(!?)\[\[([^\[\]|\n]*?)\\?(?:\|[^\[\]\n]*)?\]\]")  # \| in a table
HTML_ID = re.compile(r"""<[a-zA-Z][^>]*\b(?:id|name)\s*=\s*["']([^"']+)["']""")
BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")  # ending a block, or alone after it
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
LINE_FRAGMENT = re.compile(r"^L?\d+(?:,\d+)?(?:-L?\d+(?:,\d+)?)?$", re.I)
MD = (".md", ".markdown")


@dataclass(frozen=True)
class Link:
    file: str
    line: int  # the line where the target is written
    start: int  # column of the written target in that line
    end: int
    kind: str  # "md" (inline, reference use, unused definition), "used-def", "wiki", "embed"
    target: str  # as written: the destination (markdown) or the inside of [[...]]
    at: tuple[int, int] = (-1, -1)  # (line, column) where the link starts, when not on ``line``

    @property
    def origin(self) -> tuple[int, int]:
        return self.at if self.at[0] >= 0 else (self.line, self.start)


def files_of(root: Path) -> list[str]:
    out = []
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for n in names:
            out.append(Path(dirpath, n).relative_to(root).as_posix())
    return sorted(out)


def front_matter_end(lines: list[str]) -> int:
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return i + 1
    return 0


def prose(text: str) -> list[tuple[int, str]]:
    """(line, text) outside front matter, fences and HTML comments, code spans
    blanked (same length)."""
    text = HTML_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    lines = text.split("\n")
    out: list[tuple[int, str]] = []
    fence: str | None = None  # the opening fence: its character, as many as it had
    for i in range(front_matter_end(lines), len(lines)):
        line = lines[i]
        if fence is None:
            m = FENCE.match(line.lstrip(" >-*+0123456789."))
            if m:
                fence = m.group(1)
                continue
        else:
            close = line.strip().lstrip(">").strip()
            if close.startswith(fence) and not close.strip(fence[0]):
                fence = None
            continue
        out.append((i, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)))
    return out


def slug(text: str) -> str:
    """GitHub's anchor of a heading's text: lower case, markup and punctuation
    but '-' and '_' dropped, spaces to '-'."""

    def prose_part(p: str) -> str:  # markup outside code spans: tags, emphasis
        p = re.sub(r"<[^>]+>", "", p)
        p = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", p)
        return re.sub(r"(?<!\w)_+|_+(?!\w)", "", p.replace("*", ""))

    parts = re.split(r"(`+[^`]*`+)", text)
    text = "".join(p.strip("`") if p.startswith("`") else prose_part(p) for p in parts)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@lru_cache(maxsize=4096)
def _read(path: str, mtime: float) -> str:
    return Path(path).read_text(encoding="utf-8", errors="replace")


def read(root: Path, rel: str) -> str:
    p = root / rel
    return _read(str(p), p.stat().st_mtime)


def headings(text: str) -> list[tuple[int, str]]:
    """(line, text) of each heading (ATX and setext)."""
    out = []
    raw = text.split("\n")
    rows = prose(text)
    for k, (i, line) in enumerate(rows):
        if HEADING.match(line):  # found outside code; its text read as written
            m = HEADING.match(raw[i])
            out.append((i, ((m.group(2) if m else "") or "").strip()))
            continue
        if k + 1 < len(rows) and rows[k + 1][0] == i + 1 and line.strip():
            if SETEXT.match(rows[k + 1][1]) and not line.startswith(("    ", "\t")):
                if not re.match(r"^ {0,3}([-*+]|\d+[.)])\s|^ {0,3}>|^ {0,3}\|", line):
                    out.append((i, raw[i].strip()))
    return out


def anchors(text: str) -> dict[str, int]:
    """GitHub anchor -> index of the heading it names (duplicates numbered)."""
    seen: dict[str, int] = {}
    out: dict[str, int] = {}
    for n, (_, h) in enumerate(headings(text)):
        base = slug(h)
        s = base if base not in seen else f"{base}-{seen[base]}"
        seen[base] = seen.get(base, 0) + 1
        out.setdefault(s, n)
    return out


def _definitions(rows: list[tuple[int, str]], raw: list[str]) -> list[tuple[str, int, re.Match]]:
    """(label, line, match) of every definition, in order (a label's first one is
    the one its uses reach)."""
    out = []
    for i, line in rows:
        m = DEFINITION.match(raw[i]) if DEFINITION.match(line) else None  # the label as written
        if m and not m.group(1).startswith("^"):
            out.append((" ".join(m.group(1).lower().split()), i, m))
    return out


def links_of(root: Path, rel: str) -> list[Link]:
    text = read(root, rel)
    rows = prose(text)
    every = _definitions(rows, text.split("\n"))
    defs: dict[str, tuple[int, re.Match]] = {}
    for key, i, m in every:
        defs.setdefault(key, (i, m))
    used: set[str] = set()
    out = []
    nxt = {i: line for i, line in rows}
    for i, line in rows:
        d = DEFINITION.match(line)
        if d and not d.group(1).startswith("^"):  # a footnote's text may hold links
            continue
        taken: list[tuple[int, int]] = []
        for m in INLINE.finditer(line):
            dest = m.group(2)
            out.append(Link(rel, i, m.start(2), m.end(2), "md", dest))
            taken.append(m.span())
        after = nxt.get(i + 1, "")
        if after.strip() and "[" in line:  # a link whose text goes on to the next line
            both = line + "\n" + after
            for m in INLINE.finditer(both):
                if m.start() < len(line) < m.start(2) and "\n" not in m.group(2):
                    col = m.start(2) - len(line) - 1
                    out.append(
                        Link(
                            rel, i + 1, col, col + len(m.group(2)), "md", m.group(2), (i, m.start())
                        )
                    )
        for m in WIKI.finditer(line):
            if any(a <= m.start() < b for a, b in taken):
                continue
            kind = "embed" if m.group(1) else "wiki"
            out.append(Link(rel, i, m.start(2), m.end(2), kind, m.group(2)))
            taken.append(m.span())
        for m in REF_USE.finditer(line):
            if any(a <= m.start() < b for a, b in taken):
                continue
            label = m.group(2) or m.group(1)
            key = " ".join(label.lower().split())
            if key in defs:
                used.add(key)
                dline, dm = defs[key]
                out.append(Link(rel, i, m.start(), m.end(), "md", dm.group(2)))
    for key, dline, dm in every:  # where a target is written, used or not
        kind = "used-def" if key in used and defs[key][0] == dline else "md"
        out.append(Link(rel, dline, dm.start(2), dm.end(2), kind, dm.group(2)))
    return out


def aliases(text: str) -> list[str]:
    lines = text.split("\n")
    end = front_matter_end(lines)
    out, inside = [], False
    for line in lines[1 : max(0, end - 1)]:
        m = re.match(r"^(aliases|alias):\s*(.*)$", line)
        if m:
            inside = True
            v = m.group(2).strip()
            if v.startswith("["):
                out += [a.strip().strip("\"'") for a in v.strip("[]").split(",") if a.strip()]
            elif v:
                out += [a.strip().strip("\"'") for a in v.split(",") if a.strip()]
            continue
        if inside and re.match(r"^\s+-\s+", line):
            out.append(re.sub(r"^\s+-\s+", "", line).strip().strip("\"'"))
        elif not line.startswith((" ", "\t")):
            inside = False
    return out


class Vault:
    def __init__(self, root: Path):
        self.root = root
        self.files = files_of(root)
        self.lower = {f.lower(): f for f in self.files}
        self.by_name: dict[str, list[str]] = {}
        for f in self.files:
            name = posixpath.basename(f).lower()
            self.by_name.setdefault(name, []).append(f)
            if name.endswith(MD):
                self.by_name.setdefault(posixpath.splitext(name)[0], []).append(f)
        self.alias: dict[str, list[str]] = {}
        for f in self.files:
            if f.endswith(MD):
                for a in aliases(read(root, f)):
                    self.alias.setdefault(a.lower(), []).append(f)

    def markdown(self) -> list[str]:
        return [f for f in self.files if f.endswith(MD)]

    def links(self) -> list[Link]:
        return [lk for f in self.markdown() for lk in links_of(self.root, f)]

    def resolve(self, lk: Link) -> tuple:
        if lk.kind in ("md", "used-def"):
            return self._markdown(lk)
        return self._wiki(lk)

    def _exists(self, rel: str) -> bool:
        return (self.root / rel).is_file()

    def _markdown(self, lk: Link) -> tuple:
        dest = lk.target
        if dest.startswith("<") and dest.endswith(">"):
            dest = dest[1:-1]
        dest = re.sub(r"\\(.)", r"\1", dest)
        if SCHEME.match(dest):
            return ("external",)
        path, _, frag = dest.partition("#")
        path = unquote(path.split("?", 1)[0])
        frag = unquote(frag)
        if not path:
            rel = lk.file
        else:
            joined = (
                path.lstrip("/")
                if path.startswith("/")
                else posixpath.join(posixpath.dirname(lk.file), path)
            )
            rel = posixpath.normpath(joined)
            if rel == ".." or rel.startswith("../"):
                return ("outside",)
            if (self.root / rel).is_dir():
                return ("folder", rel)
            if not self._exists(rel) and not rel.lower().endswith(MD):
                for s in MD:
                    if self._exists(rel + s):
                        rel += s
                        break
            if not self._exists(rel):
                return ("broken", f"no file {rel}")
        if not frag or not rel.lower().endswith(MD):
            return ("file", rel, None)
        text = read(self.root, rel)
        anc = anchors(text)
        n = anc.get(frag, anc.get(frag.lower()))
        if n is not None:
            return ("heading", rel, n)
        if LINE_FRAGMENT.match(frag) or frag in HTML_ID.findall(text):
            return ("file", rel, None)
        return ("broken", f"no heading #{frag} in {rel}")

    def _note(self, name: str, source: str) -> str | None:
        name = name.strip()
        low = name.lower()
        for cand in (low, low + ".md"):
            if "/" in cand and cand in self.lower:
                return self.lower[cand]
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(source), cand)).lower()
            if "/" in name and rel in self.lower:
                return self.lower[rel]
        found = self.by_name.get(posixpath.basename(low)) or self.by_name.get(
            posixpath.basename(low) + ".md"
        )
        if found:
            return sorted(found, key=lambda f: (f.count("/"), f))[0]
        claims = self.alias.get(low, [])
        return claims[0] if len(claims) == 1 else None

    def _wiki(self, lk: Link) -> tuple:
        name, _, heading = lk.target.partition("#")
        rel = lk.file if not name.strip() else self._note(name, lk.file)
        if rel is None:
            return ("broken", f"no note {name!r}")
        if not heading or not rel.lower().endswith(MD):
            return ("file", rel, None)
        text = read(self.root, rel)
        if heading.startswith("^"):
            ids = {
                m.group(1).lower() for _, line in prose(text) for m in [BLOCK_ID.search(line)] if m
            }
            return (
                ("block", rel, heading[1:].lower())
                if heading[1:].lower() in ids
                else ("broken", f"no block {heading}")
            )
        want = [norm(h) for h in heading.split("#") if h.strip()] or [""]
        heads = headings(text)
        for n, (_, h) in enumerate(heads):
            if norm(h) == want[-1]:
                return ("heading", rel, n)
        anc = anchors(text)
        if slug(heading) in anc:  # a slug written as a heading (a convenience readers accept)
            return ("heading", rel, anc[slug(heading)])
        return ("broken", f"no heading {heading!r} in {rel}")


def norm(heading: str) -> str:
    """A heading as a wiki link names it: case, markup and the characters a wiki
    link cannot hold (# | ^ [ ] :) left out, spaces collapsed."""
    h = re.sub(r"[`*_]|\[\[|\]\]", "", heading)
    h = re.sub(r"[#|^\[\]:\\]", " ", h)
    return " ".join(h.lower().split())
