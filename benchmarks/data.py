"""Benchmark data: where it lives, how to read it, and the corpora derived from it.

The public data sets are read from ``../shared/data`` beside the checkout (or
``$MDSEEK_BENCH_DATA``) and never copied into the repository: derived
workspaces (SciFact as markdown files, copies of the product docs, the
generated scale corpus) are written under the run's work folder, a temporary
directory or ``benchmarks/.work/`` (git-ignored).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import random
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


class DataMissing(RuntimeError):
    """A data set the benchmark needs is not on this machine (the message says where it looked)."""


def data_dirs() -> list[Path]:
    """The data folders that exist: ``$MDSEEK_BENCH_DATA`` (one folder, or several
    joined with ``os.pathsep``, e.g. the read-only shared data and a folder of
    corpora built here), else ``<checkout>/../shared/data``."""
    env = os.environ.get("MDSEEK_BENCH_DATA")
    ps = [Path(x).expanduser() for x in env.split(os.pathsep) if x] if env else []
    ps = ps or [REPO.parent / "shared" / "data"]
    return [p for p in ps if p.is_dir()]


def data_dir() -> Path | None:
    """The first data folder (:func:`data_dirs`); None when there is none."""
    ds = data_dirs()
    return ds[0] if ds else None


def data_home(name: str) -> Path | None:
    """The first data folder holding ``name`` (a corpus folder), else the first one."""
    ds = data_dirs()
    return next((d for d in ds if (d / name).exists()), ds[0] if ds else None)


def where_data_should_be() -> str:
    env = os.environ.get("MDSEEK_BENCH_DATA")
    return env or str(REPO.parent / "shared" / "data")


# -- SciFact (BEIR) -----------------------------------------------------------


@dataclass
class QrelSet:
    """Queries and their judged documents (and, optionally, sections).

    A doc id is the file's path relative to the workspace without ``.md``; a
    judged section is (doc id, 1-based line of its heading), checked against
    the parsed document (see :func:`resolve_sections`)."""

    queries: dict[str, str]
    docs: dict[str, dict[str, int]]  # query id -> doc id -> grade
    sections: dict[str, list[tuple[str, int]]] = field(
        default_factory=dict
    )  # (doc id, 1-based line)
    # query id -> split key (see :func:`split_qids`): questions sharing a key (e.g. their
    # judged section) fall in the same half; a query without one is split by its id.
    groups: dict[str, str] = field(default_factory=dict)

    def subset(self, qids: list[str]) -> QrelSet:
        keep = [q for q in qids if q in self.queries]
        return QrelSet(
            {q: self.queries[q] for q in keep},
            {q: self.docs.get(q, {}) for q in keep},
            {q: self.sections.get(q, []) for q in keep},
            {q: self.groups[q] for q in keep if q in self.groups},
        )

    def with_queries(self, queries: dict[str, str]) -> QrelSet:
        """The same judgements and split groups for other query texts (same ids)."""
        return QrelSet(queries, self.docs, self.sections, self.groups)


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _read_tsv(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    return rows[1:]  # header


def scifact_dir(data: Path) -> Path:
    p = data / "scifact"
    if not (p / "corpus.jsonl").is_file():
        raise DataMissing(f"SciFact not found in {p}")
    return p


def load_scifact(data: Path, split: str = "test") -> tuple[list[dict], QrelSet]:
    d = scifact_dir(data)
    corpus = _read_jsonl(d / "corpus.jsonl")
    queries = {q["_id"]: q["text"] for q in _read_jsonl(d / "queries.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    for qid, did, score in _read_tsv(d / "qrels" / f"{split}.tsv"):
        qrels.setdefault(qid, {})[did] = int(score)
    return corpus, QrelSet({q: queries[q] for q in qrels}, qrels)


def write_scifact_workspace(corpus: list[dict], dest: Path) -> int:
    """One markdown file per abstract: ``# title`` then the text; file stem = doc id."""
    dest.mkdir(parents=True, exist_ok=True)
    for d in corpus:
        title = " ".join(str(d.get("title") or d["_id"]).split())
        (dest / f"{d['_id']}.md").write_text(
            f"# {title}\n\n{d['text'].strip()}\n", encoding="utf-8"
        )
    return len(corpus)


# -- product docs (rhdh) ------------------------------------------------------


def rhdh_dir(data: Path) -> Path:
    p = data / "rhdh"
    if not (p / "docs").is_dir():
        raise DataMissing(f"product docs not found in {p}")
    return p


def load_rhdh(data: Path) -> tuple[Path, QrelSet]:
    """The product docs and their questions. Section qrels are tightened: each
    judged (doc, line, heading path) must name a section of the parsed document
    whose heading sits on that line and whose heading path ends like the judged
    one; a returned section then counts only when it *is* that section."""
    d = rhdh_dir(data)
    queries = {q["_id"]: q["text"] for q in _read_jsonl(d / "queries.jsonl")}
    docs: dict[str, dict[str, int]] = {}
    for qid, did, score in _read_tsv(d / "qrels_doc.tsv"):
        docs.setdefault(qid, {})[did] = int(score)
    judged: dict[str, list[tuple[str, int, tuple[str, ...]]]] = {}
    for row in _read_tsv(d / "qrels_section.tsv"):
        qid, did, line, path = row[0], row[1], int(row[2]), row[3]
        judged.setdefault(qid, []).append((did, line, tuple(p.strip() for p in path.split(" > "))))
    sections = resolve_sections(d / "docs", judged)
    return d / "docs", QrelSet({q: t for q, t in queries.items() if q in docs}, docs, sections)


def resolve_sections(
    root: Path, judged: dict[str, list[tuple[str, int | None, tuple[str, ...]]]]
) -> dict[str, list[tuple[str, int]]]:
    """(doc id, 1-based heading line or None, heading path) -> (doc id, 1-based heading
    line) of the section it names in the parsed document.

    With a line: the section must start on it, and its heading must equal the
    path's last part (parent headings are not compared: the data set's paths skip
    some levels). Without a line: the one section whose heading path ends with
    the given parts. A judgement that names no section raises: a silent miss
    would make every system look worse on that query."""
    from mdseek.index.text.parse import parse_bytes

    parsed: dict[str, object] = {}
    out: dict[str, list[tuple[str, int]]] = {}
    for qid, items in judged.items():
        for did, line, path in items:
            doc = parsed.get(did)
            if doc is None:
                f = root / f"{did}.md"
                doc = parsed[did] = parse_bytes(f.read_bytes(), f"{did}.md")
            secs = doc.sections  # type: ignore[attr-defined]
            if line is not None:
                hits = [s for s in secs if s.start_line == line - 1 and s.title == path[-1]]
            else:
                hits = [s for s in secs if tuple(s.path[-len(path) :]) == path]
            if len(hits) != 1:
                raise ValueError(
                    f"qrel of {qid} names {len(hits)} sections: {did} {line} {' > '.join(path)}"
                )
            out.setdefault(qid, []).append((did, hits[0].start_line + 1))
    return out


def _load_judged(d: Path) -> tuple[Path, QrelSet]:
    """A corpus folder in the rhdh layout (docs/, queries.jsonl, qrels_doc.tsv,
    qrels_section.tsv), judged sections resolved and checked (:func:`resolve_sections`);
    a query's ``group`` field, when present, is its split key."""
    rows = _read_jsonl(d / "queries.jsonl")
    queries = {q["_id"]: q["text"] for q in rows}
    groups = {q["_id"]: q["group"] for q in rows if q.get("group")}
    docs: dict[str, dict[str, int]] = {}
    for qid, did, score in _read_tsv(d / "qrels_doc.tsv"):
        docs.setdefault(qid, {})[did] = int(score)
    judged: dict[str, list[tuple[str, int | None, tuple[str, ...]]]] = {}
    for row in _read_tsv(d / "qrels_section.tsv"):
        qid, did, line, path = row[0], row[1], int(row[2]), row[3]
        judged.setdefault(qid, []).append((did, line, tuple(p.strip() for p in path.split(" > "))))
    sections = resolve_sections(d / "docs", judged)
    keep = {q: t for q, t in queries.items() if q in docs}
    return d / "docs", QrelSet(keep, docs, sections, {q: g for q, g in groups.items() if q in keep})


# -- E-Manual (human questions on a TV's e-manual; benchmarks/make_emanual.py) -------


def load_emanual(data: Path) -> tuple[Path, QrelSet]:
    """The Samsung TV e-manual (one markdown file per chapter) and its expert-written
    questions; split groups = each question's judged section."""
    d = data / "emanual"
    if not (d / "docs").is_dir() or not (d / "queries.jsonl").is_file():
        raise DataMissing(
            f"E-Manual not found in {d} (make it with python -m benchmarks.make_emanual)"
        )
    return _load_judged(d)


# -- COVID-QA (expert questions on CORD-19 articles; benchmarks/make_covidqa.py) ----


def load_covidqa(data: Path) -> tuple[Path, QrelSet]:
    """92 scientific articles as markdown (abstract, then parts of >= 250 words) and
    the questions biomedical experts wrote on them; split groups = judged section."""
    d = data / "covidqa"
    if not (d / "docs").is_dir() or not (d / "queries.jsonl").is_file():
        raise DataMissing(
            f"COVID-QA not found in {d} (make it with python -m benchmarks.make_covidqa)"
        )
    return _load_judged(d)


# -- ConditionalQA (gov.uk guidance, questions with scenarios; make_condqa.py) ------


def _load_condqa(d: Path, what: str) -> tuple[Path, QrelSet, QrelSet]:
    if not (d / "docs").is_dir() or not (d / "queries.jsonl").is_file():
        raise DataMissing(
            f"{what} not found in {d} (make it with python -m benchmarks.make_condqa)"
        )
    docs, short = _load_judged(d)
    rows = {q["_id"]: q for q in _read_jsonl(d / "queries.jsonl")}
    long = short.with_queries(
        {q: f"{rows[q]['scenario'].strip()} {rows[q]['question'].strip()}" for q in short.queries}
    )
    return docs, short, long


def load_condqa(data: Path) -> tuple[Path, QrelSet, QrelSet]:
    """ConditionalQA's train questions over their gov.uk pages as markdown: (docs,
    the question alone, the scenario then the question as people wrote them)."""
    return _load_condqa(data / "condqa", "ConditionalQA (train)")


def load_condqa_dev_sealed(data: Path) -> tuple[Path, QrelSet, QrelSet]:
    """ConditionalQA's dev split: the issue writer's sealed held-out set. Not in any
    default corpus list; run it once, at the end, never tune on it."""
    return _load_condqa(data / "condqa-dev", "ConditionalQA dev (sealed)")


# Scenario paragraphs put before a question to make a long query (the question
# comes last, as people write it). They name no section's subject.
CONTEXTS = (
    "Some background first. I joined the platform team a few weeks ago and I am still learning"
    " my way around the handbook, the runbooks and the tools we use every day. My manager"
    " suggested I read through the documentation, but there is a lot of it and I keep getting"
    " lost between the different guides, policies and notes. I tried to find the answer myself"
    " and asked a couple of colleagues, but everyone was busy this week.",
    "Context: we had a rough week. There was an incident on Tuesday, a release slipped on"
    " Wednesday, and half the team was out sick, so I have been covering for people in areas I"
    " do not normally work on. I am writing everything down so that next time I do not have to"
    " ask the same thing twice, and I would like to get this right rather than guess.",
    "I am preparing notes for a new colleague who starts on Monday and will be shadowing me for"
    " their first month. They will have lots of questions about how we work, our tools and our"
    " processes, and I want to point them to the right part of the handbook instead of"
    " explaining from memory, since I am not always sure my memory is current.",
)


def long_form(qid: str, question: str) -> str:
    """A scenario paragraph (chosen by the query id), then the question."""
    ctx = CONTEXTS[hashlib.sha1(qid.encode()).digest()[1] % len(CONTEXTS)]
    return f"{ctx} So my question is: {question}"


def load_fixture_queries(
    kinds: tuple[str, ...] = ("paraphrase",), long: bool = False
) -> tuple[Path, QrelSet]:
    """The fixture handbook and its hand-written questions (tests/fixture_queries.json)
    as a small corpus: by default the paraphrases, which avoid the section's words.
    A query's id is a hash of its text (stable under reordering). ``long``: each
    question after a scenario paragraph (:func:`long_form`), same ids and judgements."""
    spec = json.loads((REPO / "tests" / "fixture_queries.json").read_text(encoding="utf-8"))
    queries: dict[str, str] = {}
    docs: dict[str, dict[str, int]] = {}
    judged: dict[str, list[tuple[str, int | None, tuple[str, ...]]]] = {}
    for q in spec["queries"]:
        if q["kind"] not in kinds:
            continue
        qid = "fx-" + hashlib.sha1(q["query"].encode()).hexdigest()[:10]
        did = q["path"].removesuffix(".md")
        queries[qid] = long_form(qid, q["query"]) if long else q["query"]
        docs[qid] = {did: 1}
        judged[qid] = [(did, None, (q["heading"],))]
    return FIXTURES, QrelSet(queries, docs, resolve_sections(FIXTURES, judged))


def copy_docs(src: Path, dest: Path, names: list[str] | None = None) -> list[Path]:
    """Copy markdown files (mtime kept, so a copied index sees them unchanged)."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for f in sorted(src.glob("*.md")):
        if names is None or f.name in names:
            out.append(Path(shutil.copy2(f, dest / f.name)))
    return out


# -- held-out split -----------------------------------------------------------


def split_of(key: str) -> str:
    """Deterministic half split of a query id (or a group key): ``dev`` (tuning) or
    ``test`` (held out)."""
    return "dev" if hashlib.sha1(key.encode()).digest()[0] % 2 == 0 else "test"


def split_qids(qids, which: str, groups: dict[str, str] | None = None) -> list[str]:
    """The query ids of one half. With ``groups`` (query id -> key, QrelSet.groups), a
    query is split by its group's key, so that questions on the same section (a
    question and its paraphrase) never straddle the halves."""
    g = groups or {}
    return [q for q in qids if split_of(g.get(q, q)) == which]


# -- scale corpus -------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")


def _paragraphs(text: str) -> list[str]:
    """Prose paragraphs of a markdown text (headings, fences and tables dropped)."""
    out: list[str] = []
    in_fence = False
    buf: list[str] = []
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("```") or s.startswith("~~~"):
            in_fence = not in_fence
            buf = []
            continue
        if in_fence or s.startswith("#") or s.startswith("|"):
            continue
        if not s:
            if buf:
                out.append(" ".join(buf))
            buf = []
        else:
            buf.append(s)
    if buf:
        out.append(" ".join(buf))
    return [p for p in out if len(p) > 80]


def _headings(text: str) -> list[str]:
    return [ln.lstrip("#").strip() for ln in text.split("\n") if re.match(r"#{1,6} \S", ln)]


def make_scale_docs(
    src_docs: Path,
    dest: Path,
    n_sections: int,
    seed: int,
    sections_per_doc: int = 25,
    prefix: str = "gen",
) -> int:
    """Write markdown files with about ``n_sections`` sections of varied text made from the
    product docs: each section takes a real heading and one to three real paragraphs, with
    about a fifth of the words swapped for other words of the corpus and the sentences
    shuffled, so that no two sections are the same text (FTS sees a realistic vocabulary and
    posting-list lengths). Each section is sized to be one chunk. Returns the files written."""
    rng = random.Random(seed)
    texts = [f.read_text(encoding="utf-8") for f in sorted(src_docs.rglob("*.md"))]
    paras = [p for t in texts for p in _paragraphs(t)]
    heads = [h for t in texts for h in _headings(t)]
    vocab = sorted({w for p in paras for w in _WORD.findall(p)})
    if not paras or not heads:
        raise DataMissing(f"no prose found in {src_docs} to build a scale corpus from")
    dest.mkdir(parents=True, exist_ok=True)

    def vary(p: str) -> str:
        sentences = re.split(r"(?<=[.!?])\s+", p)
        rng.shuffle(sentences)
        words = " ".join(sentences).split(" ")
        for i, w in enumerate(words):
            if _WORD.fullmatch(w) and rng.random() < 0.2:
                words[i] = rng.choice(vocab)
        out = " ".join(words)
        return out[:900]  # keep every section inside one chunk of the model's window

    files = 0
    done = 0
    while done < n_sections:
        k = min(sections_per_doc, n_sections - done)
        title = f"{rng.choice(heads)} ({prefix} {files})"
        parts = [f"# {title}", ""]
        for s in range(k):
            parts += [f"## {rng.choice(heads)} {s}", ""]
            for _ in range(rng.randint(1, 2)):
                parts += [vary(rng.choice(paras)), ""]
        (dest / f"{prefix}-{files:05d}.md").write_text("\n".join(parts), encoding="utf-8")
        files += 1
        done += k
    return files


# -- the quality benchmark's workspaces (python -m benchmarks, --model) ----------


def long_queries(qrels: QrelSet) -> QrelSet:
    """The same questions and judgements, each after a scenario paragraph (data.long_form)."""
    return qrels.with_queries({q: long_form(q, t) for q, t in qrels.queries.items()})


def rhdh_workspace(data: Path, work: Path, quick: bool) -> tuple[Path, QrelSet]:
    docs, qrels = load_rhdh(data)
    names = None
    if quick:
        names = [f.name for f in sorted(docs.glob("*.md"), key=lambda f: f.stat().st_size)[:2]]
        stems = {Path(n).stem for n in names}
        qids = [q for q in qrels.queries if set(qrels.docs[q]) <= stems][:12]
        qrels = qrels.subset(qids)
    root = work / "rhdh" / "docs"
    copy_docs(docs, root, names)
    return root, qrels


def fixtures_workspace(work: Path, quick: bool) -> tuple[Path, QrelSet, QrelSet]:
    """The fixture handbook and its paraphrase questions, short and long form
    (quick: two documents)."""
    src, qrels = load_fixture_queries()
    _, long = load_fixture_queries(long=True)
    root = work / "fixtures-quality" / "docs"
    if quick:
        docs = sorted({d for q in qrels.queries for d in qrels.docs[q]})[:2]
        qrels = qrels.subset([q for q in qrels.queries if set(qrels.docs[q]) <= set(docs)])
        for d in docs:
            (root / d).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / f"{d}.md", root / f"{d}.md")
    else:
        shutil.copytree(src, root, copy_function=shutil.copy2, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".mdseek"))  # fmt: skip
    return root, qrels, long.subset(list(qrels.queries))


def scifact_workspace(data: Path, work: Path, quick: bool) -> tuple[Path, QrelSet]:
    corpus, qrels = load_scifact(data)
    if quick:
        qids = sorted(qrels.queries, key=int)[:8]
        qrels = qrels.subset(qids)
        keep = {d for q in qids for d in qrels.docs[q]}
        others = [d["_id"] for d in corpus if d["_id"] not in keep]
        keep |= set(random.Random(0).sample(others, max(0, 30 - len(keep))))
        corpus = [d for d in corpus if d["_id"] in keep]
    root = work / "scifact" / "docs"
    write_scifact_workspace(corpus, root)
    return root, qrels
