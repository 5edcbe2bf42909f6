"""Build the ConditionalQA corpus (gov.uk pages as markdown + human questions).

    python -m benchmarks.make_condqa REPO_DIR [--out DIR] [--questions N] [--sections N]
    python -m benchmarks.make_condqa REPO_DIR --sealed-dev [--out DIR]

``REPO_DIR`` is a checkout of github.com/haitian-sun/ConditionalQA (Sun et al.,
"ConditionalQA: A Complex Reading Comprehension Dataset with Conditional
Answers", ACL 2022; BSD 2-Clause): ``v1_0/documents.json`` (UK government
guidance pages, each a list of HTML-ish elements ``<h1>``..``<h3>``, ``<p>``,
``<li>``, ``<tr>``), ``v1_0/train.json`` and ``v1_0/dev.json`` (questions written
by people: a ``scenario`` and a ``question``, answers with evidence elements).

Default: the train split only. A seeded sample of answerable train questions
whose every evidence element is found in its page; the pages they refer to,
plus other pages (seeded) up to about ``--sections`` headings in all. Written
to ``DIR`` (default ``../shared/data/condqa``).

``--sealed-dev``: the dev split, every answerable question with located
evidence, over the dev questions' pages only, to ``../shared/data/condqa-dev``.
It is the issue writer's sealed held-out set: nothing here prints or looks at
its questions beyond counts; never tune on it.

A question's judged sections are those holding its evidence elements (the
heading section an element falls in). ``queries.jsonl`` rows: ``{"_id","text"
(the question), "question","scenario","group","url"}``.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_TAG = re.compile(r"^\s*<(h[1-6]|p|li|tr|td|th|div|span)\b[^>]*>(.*?)</\1>\s*$", re.S | re.I)
_INLINE = re.compile(r"<[^>]+>")


def clean(text: str) -> str:
    """Inline tags out, entities decoded, whitespace collapsed."""
    return " ".join(html.unescape(_INLINE.sub(" ", text)).split())


def element(raw: str) -> tuple[str, str]:
    """(tag, text) of one HTML-ish element of a page; untagged text is a paragraph."""
    m = _TAG.match(raw)
    if not m:
        return "p", clean(raw)
    return m.group(1).lower(), clean(m.group(2))


def to_markdown(title: str, contents: list[str]) -> tuple[str, list[int], list[int]]:
    """A page as markdown: h1 -> ``#``, h2 -> ``##``, h3 -> ``###`` (deeper: ``####``),
    paragraphs, list items as ``- `` lines, table rows (cells split on ``|``) as a
    markdown table whose first row is the header. A page without an h1 starts with
    ``# title``.

    Returns the text, the 1-based line of each element (0 for an empty one) and the
    1-based heading line of the section each element falls in."""
    lines: list[str] = []
    elem_line: list[int] = []
    elem_sec: list[int] = []
    prev = None  # tag of the previous element written
    heading = 0
    parsed = [element(c) for c in contents]
    if not any(t == "h1" for t, _ in parsed):
        lines.append(f"# {clean(title)}")
        heading = 1
        prev = "h"
    for tag, text in parsed:
        if not text:
            elem_line.append(0)
            elem_sec.append(heading)
            continue
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            if lines:
                lines.append("")
            lines.append("#" * min(int(tag[1]), 4) + " " + text)
            heading = len(lines)
            kind = "h"
        elif tag == "li":
            if prev != "li" and lines:
                lines.append("")
            lines.append(f"- {text}")
            kind = "li"
        elif tag in ("tr", "td", "th"):
            cells = [c.strip() for c in text.split("|")]
            if prev != "tr":
                if lines:
                    lines.append("")
                lines.append("| " + " | ".join(cells) + " |")
                lines.append("|" + " --- |" * len(cells))
            else:
                lines.append("| " + " | ".join(cells) + " |")
            kind = "tr"
        else:
            if lines:
                lines.append("")
            lines.append(text)
            kind = "p"
        # the element's line: a table's first row is its header line
        elem_line.append(len(lines) - (1 if kind == "tr" and prev != "tr" else 0))
        elem_sec.append(heading)
        prev = kind
    return "\n".join(lines) + "\n", elem_line, elem_sec


def doc_id_of(url: str) -> str:
    tail = url.rstrip("/").split("gov.uk/")[-1]
    return re.sub(r"[^a-z0-9]+", "-", tail.lower()).strip("-")[:80] or "page"


def read_documents(path: Path) -> dict[str, dict]:
    """url -> {"title","url","contents"} (a list of pages, or a mapping by url)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    pages = raw.values() if isinstance(raw, dict) else raw
    return {p["url"]: p for p in pages}


def heading_paths(text: str) -> dict[int, str]:
    """1-based heading line -> heading path ("A > B"), as the benchmark's qrels name it."""
    out: dict[int, str] = {}
    stack: list[tuple[int, str]] = []
    for i, line in enumerate(text.split("\n"), start=1):
        m = re.match(r"(#{1,6}) (.*)$", line)
        if m:
            level = len(m.group(1))
            stack = [(lv, t) for lv, t in stack if lv < level] + [(level, m.group(2).strip())]
            out[i] = " > ".join(t for _, t in stack)
    return out


def norm(s: str) -> str:
    return " ".join(clean(s).lower().split())


def locate(questions: list[dict], rendered: dict[str, tuple]) -> tuple[list[dict], dict]:
    """Each question with its judged (doc id, heading line) list; those with no
    evidence, a page not in the corpus, or an evidence element not found are dropped."""
    kept: list[dict] = []
    dropped = {"no evidence": 0, "not answerable": 0, "page missing": 0, "evidence not found": 0}
    for q in questions:
        if q.get("not_answerable"):
            dropped["not answerable"] += 1
            continue
        if not q.get("evidences"):
            dropped["no evidence"] += 1
            continue
        did = doc_id_of(q["url"])
        if did not in rendered:
            dropped["page missing"] += 1
            continue
        _, index, secs = rendered[did]
        judged: list[int] = []
        ok = True
        for ev in q["evidences"]:
            hits = index.get(norm(ev))
            if not hits:
                ok = False
                break
            for i in hits[:1]:
                if secs[i] and secs[i] not in judged:
                    judged.append(secs[i])
        if not ok or not judged:
            dropped["evidence not found"] += 1
            continue
        kept.append({**q, "doc": did, "judged": judged})
    return kept, dropped


def render_pages(pages: list[dict]) -> dict[str, tuple[str, dict[str, list[int]], list[int]]]:
    """doc id -> (markdown, normalised element text -> element indexes, section of each)."""
    out = {}
    for p in pages:
        text, _lines, secs = to_markdown(p.get("title", ""), p["contents"])
        index: dict[str, list[int]] = {}
        for i, c in enumerate(p["contents"]):
            index.setdefault(norm(c), []).append(i)
        out[doc_id_of(p["url"])] = (text, index, secs)
    return out


def n_sections(text: str) -> int:
    return sum(1 for ln in text.split("\n") if re.match(r"#{1,6} ", ln))


def build(
    repo: Path, out: Path, sealed_dev: bool, n_questions: int, max_sections: int, seed: int
) -> dict:
    docs = read_documents(repo / "v1_0" / "documents.json")
    split = "dev" if sealed_dev else "train"
    questions = json.loads((repo / "v1_0" / f"{split}.json").read_text(encoding="utf-8"))
    rng = random.Random(seed)
    by_url = {u: docs[u] for u in sorted(docs)}
    if sealed_dev:
        wanted_urls = sorted({q["url"] for q in questions if q["url"] in by_url})
        rendered = render_pages([by_url[u] for u in wanted_urls])
        kept, dropped = locate(questions, rendered)
    else:
        rendered_all = render_pages(list(by_url.values()))
        located, dropped = locate(questions, rendered_all)
        rng.shuffle(located)
        kept = sorted(located[:n_questions], key=lambda q: q["id"])
        keep_docs = sorted({q["doc"] for q in kept})
        total = sum(n_sections(rendered_all[d][0]) for d in keep_docs)
        others = sorted(set(rendered_all) - set(keep_docs))
        rng.shuffle(others)
        for d in others:
            n = n_sections(rendered_all[d][0])
            if total + n > max_sections:
                continue
            keep_docs.append(d)
            total += n
        rendered = {d: rendered_all[d] for d in sorted(keep_docs)}
        dropped["not sampled"] = len(located) - len(kept)
    write(out, rendered, kept)
    st = {
        "split": split,
        "questions_read": len(questions),
        "questions": len(kept),
        "dropped": dropped,
        "docs": len(rendered),
        "sections": sum(n_sections(t) for t, _, _ in rendered.values()),
        "section_qrels": sum(len(q["judged"]) for q in kept),
        "seed": seed,
    }
    (out / "README.md").write_text(readme(st), encoding="utf-8")
    return st


def write(out: Path, rendered: dict, kept: list[dict]) -> None:
    (out / "docs").mkdir(parents=True, exist_ok=True)
    for f in (out / "docs").glob("*.md"):
        f.unlink()
    paths = {}
    for d, (text, _, _) in rendered.items():
        (out / "docs" / f"{d}.md").write_text(text, encoding="utf-8")
        paths[d] = heading_paths(text)
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for q in kept:
            row = {
                "_id": q["id"],
                "text": " ".join(q["question"].split()),
                "question": q["question"],
                "scenario": q["scenario"],
                "group": f"{q['doc']}:{q['judged'][0]}",
                "url": q["url"],
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    with (out / "qrels_doc.tsv").open("w", encoding="utf-8") as fh:
        fh.write("query-id\tdoc-id\tscore\n")
        for q in kept:
            fh.write(f"{q['id']}\t{q['doc']}\t1\n")
    with (out / "qrels_section.tsv").open("w", encoding="utf-8") as fh:
        fh.write("query-id\tdoc-id\tsection_start_line\theading_path\tscore\n")
        for q in kept:
            for line in q["judged"]:
                fh.write(f"{q['id']}\t{q['doc']}\t{line}\t{paths[q['doc']][line]}\t1\n")


def readme(st: dict) -> str:
    sealed = st["split"] == "dev"
    dropped = ", ".join(f"{k} {v}" for k, v in st["dropped"].items() if v)
    note = (
        "SEALED: ConditionalQA's dev split is the issue writer's held-out set. Run the"
        " benchmark on it once, at the end (corpora condqa-dev-sealed, condqa-dev-sealed-long);"
        " never look at its per-question results or tune on it.\n\n"
        if sealed
        else ""
    )
    return f"""# ConditionalQA ({st["split"]} split) over gov.uk guidance pages as markdown

{note}- Origin: Sun et al., "ConditionalQA: A Complex Reading Comprehension Dataset with
  Conditional Answers" (ACL 2022); github.com/haitian-sun/ConditionalQA, `v1_0/`
  (BSD 2-Clause; for NLP research only, answers not verified by legal professionals).
  The pages are UK government guidance (gov.uk, Open Government Licence).
- `docs/`: {st["docs"]} pages, {st["sections"]} heading sections (h1 `#`, h2 `##`, h3 `###`;
  paragraphs, `- ` list items, table rows as markdown tables).
- `queries.jsonl`: {st["questions"]} questions written by people, `{{"_id","text"
  (the question),"question","scenario","group","url"}}`; of {st["questions_read"]}
  read: {dropped or "none dropped"}. Sample seed {st["seed"]}.
- `qrels_doc.tsv`: the question's page; `qrels_section.tsv`: {st["section_qrels"]} rows,
  the heading sections holding the question's evidence elements (query-id, doc-id,
  1-based heading line, heading path, score).
- Made by `python -m benchmarks.make_condqa REPO_DIR{" --sealed-dev" if sealed else ""}`
  (mdseek's benchmarks).
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.make_condqa")
    ap.add_argument("repo", type=Path, help="checkout of haitian-sun/ConditionalQA")
    ap.add_argument("--sealed-dev", action="store_true", help="the dev split (sealed) instead")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--questions", type=int, default=350, help="train questions sampled")
    ap.add_argument("--sections", type=int, default=2500, help="about this many sections")
    ap.add_argument("--seed", type=int, default=29)
    args = ap.parse_args(argv)
    if not (args.repo / "v1_0" / "documents.json").is_file():
        raise SystemExit(f"documents.json not found in {args.repo / 'v1_0'}")
    name = "condqa-dev" if args.sealed_dev else "condqa"
    out = args.out or REPO.parent / "shared" / "data" / name
    st = build(args.repo, out, args.sealed_dev, args.questions, args.sections, args.seed)
    print(json.dumps(st, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
