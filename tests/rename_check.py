"""The rename tests' own reading of a markdown folder (not mdseek's): every link
of the hand-made fixture (tests/rename_ws), where it points, and the text with
the links' targets masked out. Simple on purpose -- regexes over the fixture's
known forms -- so it shares no code with what it checks."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote

from lsprotocol import types

INLINE = re.compile(r"!?\[[^\]]*\]\((<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\)")
DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
WIKI = re.compile(r"\[\[([^\]|]*)(?:\|[^\]]*)?\]\]")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
CODE_SPAN = re.compile(r"`[^`]*`")
AUTOLINK = re.compile(r"<[a-z]+://[^>]*>")


def slug(text: str) -> str:
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fences and indented code; code spans and
    autolinks blanked out (same length)."""
    out, fence = [], False
    for i, line in enumerate(text.split("\n")):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence or line.startswith("    "):
            continue
        for rx in (CODE_SPAN, AUTOLINK):
            line = rx.sub(lambda m: " " * len(m.group(0)), line)
        out.append((i, line))
    return out


def headings(text: str) -> list[tuple[str, str]]:
    """(text, GitHub anchor) of each heading, duplicates numbered."""
    seen: dict[str, int] = {}
    out = []
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        s = base if base not in seen else f"{base}-{seen[base]}"
        seen[base] = seen.get(base, 0) + 1
        out.append((m.group(2), s))
    return out


def targets(text: str) -> list[tuple[int, int, int, str, str]]:
    """(line, start, end, kind, written target) of every link target written."""
    out = []
    for i, line in prose_lines(text):
        if HEADING.match(line):
            continue
        m = DEFINITION.match(line)
        if m:
            out.append((i, m.start(1), m.end(1), "md", m.group(1)))
            continue
        for m in INLINE.finditer(line):
            if "://" not in m.group(1):
                out.append((i, m.start(1), m.end(1), "md", m.group(1)))
        for m in WIKI.finditer(line):
            out.append((i, m.start(1), m.end(1), "wiki", m.group(1)))
    return out


def files_of(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def resolve(root: Path, src: str, kind: str, written: str) -> tuple[str, int | None]:
    """(file, heading index or None) a link points to; AssertionError if broken."""
    files = files_of(root)
    if kind == "md":
        dest = written[1:-1] if written.startswith("<") else written
        path, _, frag = dest.partition("#")
        path = unquote(path) if not written.startswith("<") else path
        if not path:
            rel = src
        elif path.startswith("/"):
            rel = posixpath.normpath(path[1:])
        else:
            rel = posixpath.normpath(posixpath.join(posixpath.dirname(src), path))
        if rel not in files and rel + ".md" in files:
            rel += ".md"
        assert rel in files, f"{src}: {written} -> missing {rel}"
        if not frag:
            return rel, None
        anchors = [a for _, a in headings((root / rel).read_text())]
        assert unquote(frag) in anchors, f"{src}: {written} -> no #{frag} in {rel}"
        return rel, anchors.index(unquote(frag))
    name, _, head = written.partition("#")
    if not name:
        rel = src
    else:
        found = [
            f
            for f in files
            if f.endswith(".md")
            and (
                f[:-3].lower() == name.lower() or posixpath.basename(f)[:-3].lower() == name.lower()
            )
        ]
        assert len(found) == 1, f"{src}: [[{written}]] -> {found}"
        rel = found[0]
    if not head:
        return rel, None
    texts = [t.lower() for t, _ in headings((root / rel).read_text())]
    assert head.lower() in texts, f"{src}: [[{written}]] -> no heading {head!r} in {rel}"
    return rel, texts.index(head.lower())


def all_links(root: Path) -> dict[tuple[str, int, int], tuple[str, int | None]]:
    """Every link of the folder: (file, line, n-th link on the line) -> where it points."""
    out = {}
    for f in files_of(root):
        if not f.endswith(".md"):
            continue
        per_line: dict[int, int] = {}
        for line, _, _, kind, written in targets((root / f).read_text()):
            n = per_line[line] = per_line.get(line, -1) + 1
            out[(f, line, n)] = resolve(root, f, kind, written)
    return out


def masked(text: str, heading_line: int | None = None) -> str:
    """The text with every link target (and one heading line) blanked: what must
    not change."""
    lines = text.split("\n")
    for line, a, b, _, _ in sorted(targets(text), reverse=True):
        lines[line] = lines[line][:a] + "\0" + lines[line][b:]
    if heading_line is not None:
        lines[heading_line] = "\0heading"
    return "\n".join(lines)


def utf16_to_col(line: str, units: int) -> int:
    n = 0
    for i, ch in enumerate(line):
        if n >= units:
            return i
        n += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.split("\n")

    def offset(p: types.Position) -> int:
        return sum(len(ln) + 1 for ln in lines[: p.line]) + utf16_to_col(lines[p.line], p.character)

    for e in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        a, b = offset(e.range.start), offset(e.range.end)
        text = text[:a] + e.new_text + text[b:]
    return text


def uri_path(uri: str) -> Path:
    from urllib.parse import urlparse

    return Path(unquote(urlparse(uri).path))


def apply_workspace_edit(edit: types.WorkspaceEdit) -> dict[Path, int | None]:
    """Apply text edits and file renames, creations and deletions in order, as an editor does; the version
    each text edit carried, per file."""
    versions: dict[Path, int | None] = {}
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit):
            p = uri_path(change.text_document.uri)
            versions[p] = change.text_document.version
            p.write_text(apply_edits(p.read_text(), list(change.edits)), encoding="utf-8")
        elif isinstance(change, types.RenameFile):
            new = uri_path(change.new_uri)
            new.parent.mkdir(parents=True, exist_ok=True)
            uri_path(change.old_uri).rename(new)
        elif isinstance(change, types.CreateFile):  # as an editor: never over a file
            p = uri_path(change.uri)
            assert not p.exists(), f"{p} exists"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b"")
        elif isinstance(change, types.DeleteFile):
            uri_path(change.uri).unlink()
        else:
            raise AssertionError(f"unexpected change {change}")
    return versions
