"""Build the E-Manual corpus (markdown + human questions + section qrels).

    python -m benchmarks.make_emanual REPO_DIR [--out DIR]

``REPO_DIR`` is a checkout of github.com/abhi1nandy2/EMNLP-2021-Findings (Nandy
et al., "Question Answering over Electronic Devices", Findings of EMNLP 2021;
Apache-2.0). Read from it: ``data/smart_tv_remote_manual_corpus.json`` (the
Samsung Smart TV / Smart Remote e-manual as 261 titled sections, in manual
order) and ``data/smart_remote_QA.zip`` (the expert-annotated question sets:
normal, paraphrased, compound and yes/no questions, each with the annotated
section hierarchy and an answer copied from the manual). The T5-generated
questions of the repository (``other_emanuals_corpus``) are not read.

Written to ``DIR`` (default ``../shared/data/emanual``): ``docs/NN-chapter.md``
(one file per chapter: ``#`` chapter, ``##`` section, ``###`` subsection),
``queries.jsonl``, ``qrels_doc.tsv``, ``qrels_section.tsv`` (query id, doc id,
1-based heading line, heading path, score) and ``README.md``.

A question's judged sections are those holding its answer span (word 4-gram
containment of the answer in the section's own text); a yes/no answer has no
span, so its annotated section is used. Questions are deduplicated by their
normalised text; those whose answer is found nowhere are dropped.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHAPTERS = (
    "Quick Guides",
    "Connections",
    "Remote Control and Peripherals",
    "Smart Features",
    "TV Viewing",
    "Picture and Sound",
    "System and Support",
    "Troubleshooting",
    "Precautions and Notes",
    "Accessibility Guidance",
)
# Set name in the zip (folder) -> kind written in queries.jsonl.
KINDS = {
    "Normal Q&A": "normal",
    "Paraphrased Q&A": "paraphrased",
    "Compound Q&A": "compound",
    "Yes_No Q&A": "yes-no",
}
MIN_CONTAINMENT = 0.3  # share of the answer's 4-grams a judged section must hold
SMALL = {"a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from",
         "is", "via", "using", "your", "as", "if", "it", "its", "that", "than"}  # fmt: skip


@dataclass
class Section:
    title: str
    text: list[str]
    level: int = 2
    chapter: int = 0
    path: tuple[str, ...] = ()
    doc: str = ""
    line: int = 0  # 1-based line of its heading in the written file
    grams: set = field(default_factory=set)


def norm_words(s: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", s.lower())


def grams(words: list[str], n: int = 4) -> set[tuple[str, ...]]:
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def slug(s: str) -> str:
    return "-".join(norm_words(s))[:60]


def parse_qa_file(text: str) -> list[dict[str, str]]:
    """The annotated QA files are JSON-like but not always valid JSON (stray quotes
    inside answers, trailing commas): read each record's fields line by line."""
    out: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r'\s*"(Section Hierarchy|Link|Question|Answer)"\s*:\s*"(.*)"\s*,?\s*$', line)
        if not m:
            continue
        key, val = m.group(1), m.group(2)
        if key == "Section Hierarchy" and cur:
            out.append(cur)
            cur = {}
        cur[key] = val.replace('\\"', '"').replace("\\n", " ")
    if cur:
        out.append(cur)
    return [r for r in out if r.get("Question") and r.get("Section Hierarchy")]


def title_case(title: str) -> bool:
    """The e-manual's section headings are in Title Case, its subsections in sentence case."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'+-]*", title)[1:] if w.lower() not in SMALL]
    return bool(words) and all(w[0].isupper() for w in words)


def structure(sections: list[Section], qa_paths: list[tuple[str, ...]]) -> None:
    """Give each section its chapter, level (1 chapter, 2 section, 3 subsection) and
    heading path. A title seen in an annotated hierarchy at depth 2 or 3 takes that
    level; others follow the manual's casing (Title Case: 2, sentence case: 3)."""
    depth: dict[tuple[str, str], int] = {}
    for p in qa_paths:
        for i, t in enumerate(p[1:3], start=2):
            depth.setdefault((p[0], t.lower()), i)
    chapter = -1
    want = 0
    for s in sections:
        if want < len(CHAPTERS) and s.title == CHAPTERS[want]:
            chapter, want, s.level = want, want + 1, 1
        else:
            s.level = depth.get((CHAPTERS[max(chapter, 0)], s.title.lower())) or (
                2 if title_case(s.title) else 3
            )
        s.chapter = max(chapter, 0)
    stack: list[str] = []
    for s in sections:
        stack = stack[: s.level - 1]
        while len(stack) < s.level - 1:  # a subsection right after its chapter heading
            stack.append("")
        stack.append(s.title)
        s.path = tuple(t for t in stack if t)


def paragraphs(lines: list[str], width: int = 600) -> list[str]:
    """The section's sentence list (some split mid-sentence) as paragraphs of about ``width``."""
    text = " ".join(" ".join(lines).split())
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z(])", text)
    out: list[str] = []
    cur = ""
    for s in sentences:
        if cur and len(cur) + len(s) > width:
            out.append(cur)
            cur = s
        else:
            cur = f"{cur} {s}".strip()
    if cur:
        out.append(cur)
    return out


def render_chapters(sections: list[Section]) -> dict[str, str]:
    """doc id -> markdown text; sets each section's doc id and heading line."""
    out: dict[str, list[str]] = {}
    for s in sections:
        s.doc = f"{s.chapter + 1:02d}-{slug(CHAPTERS[s.chapter])}"
        lines = out.setdefault(s.doc, [])
        if lines:
            lines.append("")
        s.line = len(lines) + 1
        lines.append("#" * s.level + " " + s.title)
        for p in paragraphs(s.text):
            lines += ["", p]
    return {d: "\n".join(ls) + "\n" for d, ls in out.items()}


def read_questions(zf: zipfile.ZipFile) -> list[dict]:
    rows = []
    for name in sorted(zf.namelist()):
        if not name.endswith(".json"):
            continue
        kind = KINDS.get(name.split("/")[0])
        if kind is None:
            continue
        text = zf.read(name).decode("utf-8", errors="replace")
        for r in parse_qa_file(text):
            rows.append({"kind": kind, "set": name, **r})
    return rows


def judge(q: dict, sections: list[Section]) -> tuple[list[Section], str]:
    """The sections holding the answer span (or the annotated section of a yes/no
    question); the second value says how it was found."""
    path = tuple(p.strip() for p in q["Section Hierarchy"].split(">") if p.strip())
    ans = grams(norm_words(q["Answer"]))
    if q["kind"] != "yes-no" and len(norm_words(q["Answer"])) >= 4:
        scored = [(len(ans & s.grams) / len(ans), s) for s in sections]
        best = max(c for c, _ in scored)
        if best < MIN_CONTAINMENT:
            return [], "answer not found"
        keep = [s for c, s in scored if c >= MIN_CONTAINMENT and c >= best / 2]
        # Duplicated sections (the manual repeats some in two chapters): keep those in the
        # annotated chapter when any is.
        in_ch = [s for s in keep if CHAPTERS[s.chapter].lower().startswith(path[0].lower())]
        return (in_ch or keep), "answer span"
    # Yes/no: the deepest element of the annotated path that names a section of its chapter.
    chap = [s for s in sections if CHAPTERS[s.chapter].lower().startswith(path[0].lower())]
    for t in reversed(path[1:]):
        hits = [s for s in chap if s.title.lower() == t.lower()]
        if hits:
            return hits[:1], "annotated section"
    return [], "annotated section not found"


def qid_of(text: str) -> str:
    return "em-" + hashlib.sha1(text.encode()).hexdigest()[:10]


def normalise_question(q: str) -> str:
    return " ".join(norm_words(q))


def build(repo: Path, out: Path) -> dict:
    manual = json.loads((repo / "data" / "smart_tv_remote_manual_corpus.json").read_text("utf-8"))
    items = sorted(manual.values(), key=lambda v: int(v["id"].split("_")[1]))
    sections = [Section(" ".join(v["title"].split()), list(v["text"])) for v in items]
    with zipfile.ZipFile(io.BytesIO((repo / "data" / "smart_remote_QA.zip").read_bytes())) as zf:
        rows = read_questions(zf)
    paths = [tuple(p.strip() for p in r["Section Hierarchy"].split(">")) for r in rows]
    structure(sections, paths)
    docs = render_chapters(sections)
    for s in sections:
        s.grams = grams(norm_words(" ".join(s.text)))

    seen: set[str] = set()
    stats = {"read": len(rows), "duplicates": 0, "dropped": {}, "kinds": {}, "how": {}}
    queries, qdoc, qsec = [], [], []
    for r in rows:
        key = normalise_question(r["Question"])
        if not key or key in seen:
            stats["duplicates"] += 1
            continue
        seen.add(key)
        judged, how = judge(r, sections)
        if not judged:
            stats["dropped"][how] = stats["dropped"].get(how, 0) + 1
            continue
        text = " ".join(r["Question"].split())
        qid = qid_of(text)
        group = f"{judged[0].doc}:{judged[0].line}"
        queries.append({"_id": qid, "text": text, "kind": r["kind"], "group": group,
                        "answer": r["Answer"], "annotated_section": r["Section Hierarchy"]})  # fmt: skip
        for d in sorted({s.doc for s in judged}):
            qdoc.append((qid, d, 1))
        for s in judged:
            qsec.append((qid, s.doc, s.line, " > ".join(s.path), 1))
        stats["kinds"][r["kind"]] = stats["kinds"].get(r["kind"], 0) + 1
        stats["how"][how] = stats["how"].get(how, 0) + 1

    (out / "docs").mkdir(parents=True, exist_ok=True)
    for f in (out / "docs").glob("*.md"):
        f.unlink()
    for d, text in docs.items():
        (out / "docs" / f"{d}.md").write_text(text, encoding="utf-8")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    with (out / "qrels_doc.tsv").open("w", encoding="utf-8") as fh:
        fh.write("query-id\tdoc-id\tscore\n")
        for row in qdoc:
            fh.write("\t".join(map(str, row)) + "\n")
    with (out / "qrels_section.tsv").open("w", encoding="utf-8") as fh:
        fh.write("query-id\tdoc-id\tsection_start_line\theading_path\tscore\n")
        for row in qsec:
            fh.write("\t".join(map(str, row)) + "\n")
    stats.update(docs=len(docs), sections=len(sections), queries=len(queries),
                 section_qrels=len(qsec), groups=len({q["group"] for q in queries}))  # fmt: skip
    (out / "README.md").write_text(readme(stats), encoding="utf-8")
    return stats


def readme(st: dict) -> str:
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(st["kinds"].items()))
    dropped = ", ".join(f"{k} {v}" for k, v in sorted(st["dropped"].items())) or "none"
    return f"""# E-Manual (Samsung Smart TV / Smart Remote) with human questions

- Origin: Nandy et al., "Question Answering over Electronic Devices: A New Benchmark
  Dataset and a Multi-Task Learning based QA Framework", Findings of EMNLP 2021;
  repository github.com/abhi1nandy2/EMNLP-2021-Findings (Apache License 2.0):
  `data/smart_tv_remote_manual_corpus.json` (the e-manual as titled sections) and
  `data/smart_remote_QA.zip` (questions written by expert annotators, with the
  annotated section hierarchy and the answer copied from the manual). The
  T5-generated questions of that repository are not used.
- `docs/`: {st["docs"]} markdown files, one per chapter of the manual, {st["sections"]}
  headings (`#` chapter, `##` section, `###` subsection; levels from the annotated
  hierarchies, else the manual's casing: Title Case sections, sentence-case subsections).
- `queries.jsonl`: {st["queries"]} questions ({kinds}) `{{"_id","text","kind","group",
  "answer","annotated_section"}}`, deduplicated by normalised text
  ({st["duplicates"]} duplicates left out of {st["read"]} read); dropped: {dropped}.
  `group` is the question's first judged section: split dev/test by it (questions
  on one section, e.g. a question and its paraphrase, stay in one half);
  {st["groups"]} groups.
- `qrels_doc.tsv` (query-id, doc-id = file stem, score);
  `qrels_section.tsv` (query-id, doc-id, 1-based heading line, heading path, score),
  {st["section_qrels"]} rows: the sections holding at least
  {MIN_CONTAINMENT:.0%} of the answer's word 4-grams (and at least half the best
  section's share); a yes/no question's annotated section.
- Made by `python -m benchmarks.make_emanual REPO_DIR --out DIR` (mdseek's benchmarks).
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.make_emanual")
    ap.add_argument("repo", type=Path, help="checkout of abhi1nandy2/EMNLP-2021-Findings")
    ap.add_argument("--out", type=Path, default=REPO.parent / "shared" / "data" / "emanual")
    args = ap.parse_args(argv)
    st = build(args.repo, args.out)
    print(json.dumps(st, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
