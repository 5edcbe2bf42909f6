"""Build the COVID-QA corpus (markdown + expert-written questions + section qrels).

    python -m benchmarks.make_covidqa REPO_DIR [--out DIR]

``REPO_DIR`` is a checkout of github.com/deepset-ai/COVID-QA (Möller et al.,
"COVID-QA: A Question Answering Dataset for COVID-19", ACL 2020 NLP-COVID
workshop; Apache-2.0; the articles are CC-BY papers of CORD-19). Read from it:
``data/question-answering/200423_covidQA.json`` (SQuAD layout: one scientific
article per context, questions written by biomedical experts, each with its
answer span's character offset). The final ``COVID-QA.json`` is not in the
stored snapshot of the repository; this earlier release is (98 articles, 1,380
questions).

Each article whose context has the usual layout (title, metadata lines,
``Abstract: ...``, ``Text: ...``; 92 of 98) is written as one markdown file:
``# title``, ``## Abstract``, then the body's paragraphs packed in order into
parts of at least :data:`PART_WORDS` words, each under ``## Part N`` (the
articles carry no section titles, so the parts are sections of even size with
a heading that names nothing). A question's judged sections are the sections
its answer span overlaps (offsets, no fuzzy matching); a question whose answer
lies in the metadata lines, or that repeats another of its article's
(normalised text), is left out. The split key (``group``) is the first judged
section, so questions on one section stay in one half.

Written to ``DIR`` (default ``$MDSEEK_BENCH_DATA``'s first folder ``/covidqa``,
never into the repository): ``docs/``, ``queries.jsonl``, ``qrels_doc.tsv``,
``qrels_section.tsv`` (query id, doc id, 1-based heading line, heading path,
score) and ``README.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

SOURCE = "data/question-answering/200423_covidQA.json"
PART_WORDS = 250  # a part closes once it holds this many words


def slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:48].strip("-")


def paragraphs(context: str) -> list[tuple[int, int]]:
    """(start, end) character offsets of the blank-line separated paragraphs."""
    out = []
    pos = 0
    for m in re.finditer(r"\n\s*\n", context):
        if context[pos : m.start()].strip():
            out.append((pos, m.start()))
        pos = m.end()
    if context[pos:].strip():
        out.append((pos, len(context)))
    return out


def layout(context: str) -> list[tuple[str, list[tuple[int, int, str]]]] | None:
    """The article as [(heading, [(start, end, text)])]: the abstract, then parts.
    None when the context lacks the ``Abstract:`` / ``Text:`` layout."""
    paras = paragraphs(context)
    starts = [context[a:b].lstrip() for a, b in paras]
    ia = next((i for i, t in enumerate(starts) if t.startswith("Abstract:")), None)
    it = next((i for i, t in enumerate(starts) if t.startswith("Text:")), None)
    if ia is None or it is None or it <= ia:
        return None

    def piece(a: int, b: int) -> tuple[int, int, str]:
        text = " ".join(context[a:b].split())
        for lead in ("Abstract:", "Text:"):
            if text.startswith(lead):
                text = text[len(lead) :].strip()
        return a, b, text

    out = [("Abstract", [piece(a, b) for a, b in paras[ia:it]])]
    part: list[tuple[int, int, str]] = []
    words = 0
    for a, b in paras[it:]:
        p = piece(a, b)
        if not p[2]:
            continue
        part.append(p)
        words += len(p[2].split())
        if words >= PART_WORDS:
            out.append((f"Part {len(out)}", part))
            part, words = [], 0
    if part:
        if len(out) > 1 and words < PART_WORDS // 2:
            out[-1][1].extend(part)  # a short tail joins the part before
        else:
            out.append((f"Part {len(out)}", part))
    return out


def render(title: str, secs: list) -> tuple[str, list[tuple[str, int, int, int]]]:
    """Markdown text and each section's (heading, 1-based line, context start, end)."""
    lines = [f"# {title}", ""]
    where = []
    for head, paras in secs:
        where.append((head, len(lines) + 1, paras[0][0], paras[-1][1]))
        lines += [f"## {head}", ""]
        for _, _, text in paras:
            lines += [text, ""]
    return "\n".join(lines), where


def build(repo: Path, out: Path, articles: int | None = None) -> dict:
    """Write the corpus (see the module); ``articles``: keep only this many, the
    shortest (fewest words in their context), so that a loaded machine can embed it."""
    data = json.loads((repo / SOURCE).read_text(encoding="utf-8"))["data"]
    keep = set(range(len(data)))
    if articles is not None:
        size = {
            n: sum(len(p["context"].split()) for p in a["paragraphs"]) for n, a in enumerate(data)
        }
        usable = [n for n in sorted(size, key=lambda n: (size[n], n))
                  if all(layout(p["context"]) for p in data[n]["paragraphs"])]  # fmt: skip
        keep = set(usable[:articles])
    docs = out / "docs"
    if docs.is_dir():
        for f in docs.glob("*.md"):
            f.unlink()
    docs.mkdir(parents=True, exist_ok=True)
    queries, qdoc, qsec = [], [], []
    st = {
        "articles": len(data),
        "asked": articles,
        "kept": 0,
        "questions": 0,
        "in_metadata": 0,
        "duplicates": 0,
    }
    for n, art in enumerate(data):
        if n not in keep:
            continue
        for para in art["paragraphs"]:
            ctx = para["context"]
            secs = layout(ctx)
            if secs is None:
                continue
            title = " ".join(ctx.split("\n", 1)[0].split()).rstrip(",")
            did = f"{n:03d}-{slug(title)}"
            text, where = render(title, secs)
            (docs / f"{did}.md").write_text(text + "\n", encoding="utf-8")
            st["kept"] += 1
            seen: set[str] = set()
            for qa in para["qas"]:
                st["questions"] += 1
                norm = " ".join(re.findall(r"[a-z0-9]+", qa["question"].lower()))
                if norm in seen:
                    st["duplicates"] += 1
                    continue
                seen.add(norm)
                judged = []
                for ans in qa["answers"]:
                    a = ans["answer_start"]
                    b = a + len(ans["text"])
                    for head, line, s, e in where:
                        if a < e and b > s and (head, line) not in judged:
                            judged.append((head, line))
                if not judged:
                    st["in_metadata"] += 1
                    continue
                qid = "cq-" + hashlib.sha1(f"{did}:{qa['id']}".encode()).hexdigest()[:10]
                queries.append({
                    "_id": qid, "text": " ".join(qa["question"].split()),
                    "group": f"{did}:{judged[0][1]}", "answer": qa["answers"][0]["text"],
                    "source_id": qa["id"],
                })  # fmt: skip
                qdoc.append((qid, did))
                for head, line in judged:
                    qsec.append((qid, did, line, f"{title} > {head}"))
    st["queries"] = len(queries)
    st["judged_sections"] = len(qsec)
    st["sections"] = sum(1 for f in docs.glob("*.md") for ln in f.open() if ln.startswith("## "))
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    with (out / "qrels_doc.tsv").open("w", encoding="utf-8") as fh:
        fh.write("query-id\tdoc-id\tscore\n")
        for qid, did in qdoc:
            fh.write(f"{qid}\t{did}\t1\n")
    with (out / "qrels_section.tsv").open("w", encoding="utf-8") as fh:
        fh.write("query-id\tdoc-id\tsection_start_line\theading_path\tscore\n")
        for qid, did, line, path in qsec:
            fh.write(f"{qid}\t{did}\t{line}\t{path}\t1\n")
    (out / "README.md").write_text(
        "# COVID-QA as markdown (built by python -m benchmarks.make_covidqa)\n\n"
        f"From github.com/deepset-ai/COVID-QA `{SOURCE}` (Apache-2.0; articles CC-BY).\n"
        f"{json.dumps(st)}\n",
        encoding="utf-8",
    )
    return st


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.make_covidqa", description=__doc__)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--articles", type=int, default=None, help="keep the N shortest articles")
    args = ap.parse_args(argv)
    out = args.out
    if out is None:
        from .data import data_dirs

        dirs = data_dirs()
        if not dirs:
            raise SystemExit("no data folder: set MDSEEK_BENCH_DATA or give --out")
        out = dirs[-1] / "covidqa"
    st = build(args.repo, out, args.articles)
    print(json.dumps(st), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
