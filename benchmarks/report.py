"""Render a results dict (see benchmarks/__main__.py) as markdown tables."""

from __future__ import annotations

README_START = "<!-- results:start -->"
README_END = "<!-- results:end -->"


def _f(x, nd: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def _pct(x) -> str:
    return "–" if x is None else f"{x * 100:.1f}%"


def _ms(s: dict | None, key: str = "median_ms") -> str:
    if not s or s.get(key) is None:
        return "–"
    v = s[key]
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def table(head: list[str], rows: list[list]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


# (corpus, level, column label) of the quality tables, in order.
LEVELS = [
    ("scifact", "doc", "SciFact"),
    ("rhdh", "doc", "docs"),
    ("rhdh", "section", "docs §"),
    ("rhdh-long", "section", "docs long §"),
    ("fixtures", "section", "fixtures §"),
    ("fixtures-long", "section", "fixtures long §"),
    ("emanual", "section", "E-Manual §"),
    ("emanual-long", "section", "E-Manual long §"),
    ("condqa", "section", "ConditionalQA §"),
    ("condqa-long", "section", "ConditionalQA long §"),
    ("condqa-dev-sealed", "section", "ConditionalQA dev (sealed) §"),
    ("condqa-dev-sealed-long", "section", "ConditionalQA dev (sealed) long §"),
]


def _split_cells(m: dict, level: str) -> list[str]:
    out = []
    for split in ("dev", "test"):
        d = m.get(split, {}).get(level)
        out += [_f(d["ndcg@10"]), _f(d["recall@10"]), _f(d["mrr@10"])] if d else ["–"] * 3
    return out


def render_quality(q: dict) -> list[str]:
    corpora = q.get("corpora", {})
    if not corpora:
        return []
    L = ["### Retrieval quality (the product path: `Engine.search`, query embedding included)", ""]
    L.append(
        "Every corpus's queries are split in two halves by a hash of the query id: choices are made on"
        " `dev`, `test` is held out. Section level: a returned section counts when it is the judged"
        " section (same file, same heading line). The plain baseline (`benchmarks/baseline.py`): one vector"
        " per heading section, FTS5 BM25 over every query word, RRF k=60, same model and sections."
    )
    L.append("")
    rows = []
    for name, level, _label in LEVELS:
        c = corpora.get(name)
        if not c or level not in c.get("levels", []):
            continue
        for who, modes in (("mdseek", c["modes"]), ("plain baseline", c.get("baseline", {}))):
            for mode in ("hybrid", "lexical", "dense"):
                if mode not in modes:
                    continue
                m = modes[mode]
                star = "**" if who == "mdseek" and mode == "hybrid" else ""
                cells = _split_cells(m, level)
                cells[0] = f"{star}{cells[0]}{star}"
                cells[3] = f"{star}{cells[3]}{star}"
                all_n = m.get("all", {}).get(level, {}).get("ndcg@10")
                rows.append(
                    [
                        f"{c['label']} ({c['queries']} q)",
                        "document" if level == "doc" else "section",
                        f"{who} {mode}",
                        *cells,
                        _f(all_n),
                    ]
                )
    L += table(
        [
            "corpus",
            "level",
            "system",
            "dev nDCG@10",
            "dev R@10",
            "dev MRR@10",
            "test nDCG@10",
            "test R@10",
            "test MRR@10",
            "all nDCG@10",
        ],
        rows,
    )
    L.append("")
    rh = corpora.get("rhdh", {})
    for name, label in (
        ("whole_document", "1 vector per document"),
        ("fixed_1200_chars", "1,200-char chunks"),
    ):
        b = rh.get("dense_baselines", {}).get(name)
        if b:
            L.append(
                f"- product docs, document level, dense {label} ({b['vectors']} vectors): nDCG@10 {_f(b['doc']['ndcg@10'])}, Recall@10 {_f(b['doc']['recall@10'])}."
            )
    sf = corpora.get("scifact")
    if sf:
        L.append(
            f"- SciFact published nDCG@10 (all 300 queries): BM25 0.665, all-MiniLM-L6-v2 0.645; mdseek hybrid {_f(sf['modes']['hybrid']['all']['doc']['ndcg@10'])}, lexical {_f(sf['modes']['lexical']['all']['doc']['ndcg@10'])}, dense {_f(sf['modes']['dense']['all']['doc']['ndcg@10'])}."
        )
    for c in corpora.values():
        ix = c.get("index", {})
        L.append(
            f"- {c['label']}: {ix.get('files')} files, {ix.get('sections')} sections, {ix.get('chunks')} chunks; median query {c['modes']['hybrid'].get('median_query_ms')} ms (hybrid)."
        )
    chk = q.get("replay_check")
    if chk:
        L.append(
            f"- Ablation replay equals `Engine.search` on the default configuration (first 25 queries): {chk}."
        )
    L.append("")
    ab = q.get("ablations")
    if ab:
        names = [
            (n, lvl, lab)
            for n, lvl, lab in LEVELS
            if any(f"{n}/dev" in r and lvl in r[f"{n}/dev"] for r in ab["chain"])
        ]
        head = (
            ["change (hybrid)"]
            + [f"{lab} {s}" for _, _, lab in names for s in ("dev", "test")]
            + ["mean dev", "mean test"]
        )

        def cells(r: dict) -> list[str]:
            out = []
            for n, lvl, _ in names:
                out += [_f(r[f"{n}/{s}"].get(lvl, {}).get("ndcg@10")) for s in ("dev", "test")]
            return out + [_f(r["objective_dev"], 4), _f(r["objective_test"], 4)]

        L.append("### One change at a time (nDCG@10, replayed from cached candidates)")
        L.append("")
        L.append(
            "From mdseek before retrieval v2 to the default, each row adds one change to the row above."
            " `mean` is the tuning objective: the mean of the columns' nDCG@10 on one half."
        )
        L.append("")
        rows = [[r["label"], *cells(r)] for r in ab["chain"]]
        for r in ab.get("modes", []):
            rows.append([f"default, {r['label']} only", *cells(r)])
        bl = ab.get("baseline")
        if bl:
            rows.append(["plain baseline (hybrid)", *cells(bl)])
        L += table(head, rows)
        L.append("")
        L.append("### Each knob around the default (nDCG@10; `*` = default)")
        L.append("")
        rows = [
            [f"{r['knob']} = {r['label']}" + (" *" if r.get("default") else ""), *cells(r)]
            for r in ab["knobs"]
        ]
        L += table(["knob"] + head[1:], rows)
        L.append("")
        L.append("### Tuned on dev, checked on test (mean nDCG@10 over the columns above)")
        L.append("")
        L.append(
            "For each knob: the value best on the dev halves, and what moving the default to it would"
            " gain on dev and on the held-out test halves."
        )
        L.append("")
        rows = []
        by_knob: dict[str, list[dict]] = {}
        for r in ab["knobs"]:
            by_knob.setdefault(r["knob"], []).append(r)
        for knob, rs in by_knob.items():
            default = next((r for r in rs if r.get("default")), None)
            best = max(rs, key=lambda r: r["objective_dev"])
            if default is None:
                continue
            rows.append([
                knob, default["label"], best["label"],
                f"{best['objective_dev'] - default['objective_dev']:+.4f}",
                f"{best['objective_test'] - default['objective_test']:+.4f}",
            ])  # fmt: skip
        L += table(["knob", "default", "best on dev", "gain on dev", "gain on test"], rows)
        L.append("")
    return L


def render(res: dict) -> str:
    meta = res["meta"]
    m = meta["machine"]
    L: list[str] = []
    L.append(
        f"Run {meta['date']} on {m['cpu']} ({m['cores']} cores, {m['memory_gb']} GiB), Python {m['python']},"
        f" torch {m['torch']}, model {meta.get('model_id', '?')} (window {meta['config'].get('window')} tokens)."
    )
    L.append(
        f"Command: `{meta['command']}`; wall time {meta['wall_seconds'] / 60:.1f} min"
        + (
            " (**--quick smoke run on tiny subsets: the numbers mean nothing**)"
            if meta["quick"]
            else ""
        )
        + f"; 1-minute load average {meta.get('load_average_start')} at the start, {meta.get('load_average_end')} at the end"
        + " (other work on the machine slows every timed figure; the ratios are measured side by side)."
    )
    cfg = meta["config"]
    rk = cfg.get("ranking", {})
    L.append(
        f"Defaults measured: {rk.get('fusion')} fusion, dense weight {rk.get('dense_weight')}, lexical / dense"
        f" normalisation {rk.get('lexical_norm')} / {rk.get('dense_norm')}, document weight {rk.get('doc_weight')},"
        f" {rk.get('candidates')} candidate chunks per retriever, score floor {rk.get('similarity_floor')}; FTS weights (title/headings/body) {cfg.get('fts_weights')},"
        f" porter stemming, stop words out, words in over {cfg.get('max_df')} of the chunks out; chunk floor {cfg.get('chunk_floor')} tokens."
    )
    for s in res.get("skipped", []):
        L.append(f"- {s}")
    L.append("")

    q = res.get("quality", {})
    L += render_quality(q)
    from .judge import render_section

    L += render_section(q.get("judge", {}))

    cov = res.get("coverage")
    if cov:
        L.append("### Coverage: share of body tokens inside some vector's window (same tokenizer)")
        L.append("")
        rows = []
        for name, c in cov.items():
            rows.append(
                [
                    name,
                    c["files"],
                    f"{_pct(c['mdseek']['coverage'])} ({c['mdseek']['vectors']})",
                    f"{_pct(c['whole_document']['coverage'])} ({c['whole_document']['vectors']})",
                    f"{_pct(c['fixed_1200_chars']['coverage'])} ({c['fixed_1200_chars']['vectors']})",
                ]
            )
        L += table(
            [
                "corpus",
                "files",
                "mdseek chunker (vectors)",
                "1 vector per document",
                "1,200-char chunks on blank lines",
            ],
            rows,
        )
        L.append("")

    sp = res.get("speed", {})
    tp = sp.get("throughput")
    if tp:
        L.append("### Index throughput and incremental reindex")
        L.append("")
        rows = [
            [
                "full index (chunks/s)",
                f"{tp['chunks_per_s']:.1f} ({tp['chunks']} chunks, {tp['index_seconds']:.0f} s; parse+chunk+store {tp['parse_chunk_store_seconds']:.1f} s)",
                f"{tp['bare_chunks_per_s']:.1f} (bare {tp.get('backend') or 'model'} encode, {tp['bare_encode_seconds']:.0f} s)",
                f"{tp['overhead_ratio']:.2f}× the bare time",
            ],
        ]
        inc = sp.get("incremental")
        if inc:
            rows.append(
                [
                    f"one-line edit in {inc['document']} ({inc['document_chunks']} chunks)",
                    f"{inc['chunks_embedded']} chunk(s) embedded, {inc['reindex_seconds']:.2f} s",
                    f"{inc['document_chunks']} chunks re-embedded, {inc['whole_document_embed_seconds']:.2f} s",
                    f"{inc['speedup']}× faster",
                ]
            )
            rows.append(
                [
                    f"reconcile with nothing changed ({inc['unchanged_reconcile_files']} files)",
                    f"{inc['unchanged_reconcile_seconds']:.2f} s",
                    "",
                    "",
                ]
            )
        L += table(["measure", "mdseek", "baseline", "ratio"], rows)
        L.append("")
    lat = sp.get("latency")
    if lat:
        L.append(
            "### Query latency and memory (median / p95 ms over many queries, query embedding included)"
        )
        L.append("")
        rows = []
        for r in lat:
            bf = r["brute_force"]["median_ms"]
            hy = r["hybrid"]["median_ms"]
            de = r["dense"]["median_ms"]
            rows.append(
                [
                    r["chunks"],
                    f"{r['real_vectors']} / {r['synthetic_vectors']}",
                    f"{_ms(r['hybrid'])} / {_ms(r['hybrid'], 'p95_ms')}",
                    f"{_ms(r['dense'])} / {_ms(r['dense'], 'p95_ms')}",
                    f"{_ms(r['lexical'])} / {_ms(r['lexical'], 'p95_ms')}",
                    f"{_ms(r['brute_force'])} / {_ms(r['brute_force'], 'p95_ms')}",
                    f"{bf / de:.1f}×" if de else "–",
                    f"{bf / hy:.1f}×" if hy else "–",
                    f"{_ms(r['parts']['query_embedding'])} / {_ms(r['parts']['lexical'])} ({_ms(r['parts']['fts5_bm25'])} in FTS5) / {_ms(r['parts']['dense_matrix'])}",
                    f"{r['rss_mb']['index_loaded']:.0f} ({r['rss_mb']['index_share']:+.0f})",
                ]
            )
        L += table(
            [
                "chunks",
                "distinct vectors: real / synthetic",
                "hybrid",
                "dense only",
                "lexical only",
                "brute force",
                "brute / dense",
                "brute / hybrid",
                "embed / lexical / matrix (median)",
                "RSS MB (index share)",
            ],
            rows,
        )
        L.append("")
        L.append(
            "Scale corpora: the product docs plus generated sections (real headings and paragraphs, a fifth of the words"
            " swapped, sentences shuffled). Real chunks keep their real vectors; generated chunks get synthetic random unit"
            " vectors (a matrix product and a top-k cost the same whatever unit vectors are in the matrix). Brute force ="
            " embed the query, re-read every vector from SQLite, numpy product, top-k. RSS includes the model (~"
            f"{lat[0]['rss_mb']['model_loaded']:.0f} MB with nothing loaded). Plot: `latency.png`."
        )
        L.append("")
        mem = [r for r in lat if r.get("lexical_from", "memory") == "memory"]
        fts = [str(r["chunks"]) for r in lat if r.get("lexical_from") == "FTS5"]
        builds = ", ".join(
            f"{r['lexical_build_seconds']} s at {r['chunks']}"
            for r in lat
            if "lexical_build_seconds" in r
        )
        overlap = ", ".join(
            f"{r['parts'].get('top10_overlap_memory_vs_fts5')} at {r['chunks']}" for r in mem
        )
        L.append(
            "Lexical side as in the server and `mdseek mcp`: BM25 from in-memory postings (`index/search/lexical.py`,"
            " FTS5's own formula and document frequencies) from `LEXICAL_IN_MEMORY_MIN` chunks"
            + (
                f"; below it (here at {', '.join(fts)} chunks) FTS5 ranks, as fast there"
                if fts
                else ""
            )
            + ". Postings read from FTS5 in "
            + builds
            + " chunks."
            " The FTS5 figure in parentheses is the same query ranked by FTS5's `bm25()` in SQLite, as the"
            " one-shot CLI does; mean top-10 overlap of the two rankings where memory ranks: "
            + (overlap or "–")
            + " of 10."
        )
        L.append("")

    from .speed import render_backends_and_cli

    L += render_backends_and_cli(sp)
    lsp = res.get("lsp")
    if lsp:
        L.append(
            f"### Language server ({lsp.get('files')} files; {lsp.get('queries')} workspace-symbol queries; {lsp.get('vscode_version', '')})"
        )
        L.append("")
        a, b = lsp.get("mdseek", {}), lsp.get("vscode", {})

        def col(d: dict, fn) -> str:
            if "skipped" in d:
                return d["skipped"]
            try:
                return fn(d)
            except (KeyError, TypeError):
                return "–"

        rows = [
            [
                "process start → first workspace/symbol answer",
                col(
                    a,
                    lambda d: (
                        f"{d['start_to_first_workspace_symbol_seconds']:.2f} s ({d['first_answer_results']} results)"
                    ),
                ),
                col(
                    b,
                    lambda d: (
                        f"{d['start_to_first_workspace_symbol_seconds']:.2f} s ({d['first_answer_results']} results)"
                    ),
                ),
            ],
            [
                "process start → first hybrid `mdseek/search` answer, median of starts (first start)",
                col(
                    a,
                    lambda d: (
                        f"**{_f(d['first_hybrid_seconds_median'], 2)} s** of {d['starts']} ({_f(d['start_to_first_hybrid_search_seconds'], 2)} s)"
                    ),
                ),
                "–",
            ],
            [
                "`mdseek/search` back to back in the 2 s after each later start's first hybrid answer (median / p95 / max ms)",
                col(
                    a,
                    lambda d: (
                        f"{_ms(d['search_after_ready'])} / {_ms(d['search_after_ready'], 'p95_ms')} / {d['search_after_ready']['max_ms']} ({d['search_after_ready']['n']} searches)"
                        if d.get("search_after_ready")
                        else "–"
                    ),
                ),
                "–",
            ],
            [
                "process start → initialize answered, median of starts",
                col(a, lambda d: _f(d["initialize_seconds_median"], 2) + " s"),
                col(b, lambda d: _f(d["initialize_seconds"], 2) + " s (one start)"),
            ],
            [
                "process start → first non-empty answer",
                col(
                    a, lambda d: _f(d["start_to_first_nonempty_workspace_symbol_seconds"], 2) + " s"
                ),
                col(
                    b, lambda d: _f(d["start_to_first_nonempty_workspace_symbol_seconds"], 2) + " s"
                ),
            ],
            [
                "documentSymbol, first per file (median / p95 ms)",
                col(
                    a,
                    lambda d: (
                        f"{_ms(d['document_symbol_first'])} / {_ms(d['document_symbol_first'], 'p95_ms')}"
                    ),
                ),
                col(
                    b,
                    lambda d: (
                        f"{_ms(d['document_symbol_first'])} / {_ms(d['document_symbol_first'], 'p95_ms')}"
                    ),
                ),
            ],
            [
                "documentSymbol, warm (median / p95 ms)",
                col(
                    a,
                    lambda d: (
                        f"{_ms(d['document_symbol_warm'])} / {_ms(d['document_symbol_warm'], 'p95_ms')}"
                    ),
                ),
                col(
                    b,
                    lambda d: (
                        f"{_ms(d['document_symbol_warm'])} / {_ms(d['document_symbol_warm'], 'p95_ms')}"
                    ),
                ),
            ],
            [
                "workspace/symbol (median / p95 ms)",
                col(
                    a,
                    lambda d: (
                        f"{_ms(d['workspace_symbol'])} / {_ms(d['workspace_symbol'], 'p95_ms')} ({d['workspace_symbol_mean_results']} results)"
                    ),
                ),
                col(
                    b,
                    lambda d: (
                        f"{_ms(d['workspace_symbol'])} / {_ms(d['workspace_symbol'], 'p95_ms')} ({d['workspace_symbol_mean_results']} results)"
                    ),
                ),
            ],
            [
                "shutdown + exit → process gone",
                col(a, lambda d: _f(d.get("shutdown_seconds"), 2) + " s"),
                col(b, lambda d: _f(d.get("shutdown_seconds"), 2) + " s"),
            ],
            [
                "server RSS after the run",
                col(a, lambda d: f"{d['rss_mb']:.0f} MB"),
                col(b, lambda d: f"{d['rss_mb']:.0f} MB"),
            ],
        ]
        L += table(
            ["measure", "mdseek (`python -m mdseek serve`)", "VS Code markdown server"], rows
        )
        L.append("")
        sv = lsp.get("save") or {}
        if "skipped" in sv:
            L.append(f"Save -> searchable: {sv['skipped']}")
            L.append("")
        elif sv:
            L.append(
                f"#### Save -> searchable through the server (`{sv['file']}`, {sv['chunks']} chunks,"
                f" {sv['edits']} one-line edits, `didSave` over stdio, debounce included)"
            )
            L.append("")
            srows = []
            for key, label in (
                ("searchable_ms", "save -> searchable, as the client sees it"),
                ("server_total_ms", "server: the update's own time"),
                ("server_chunk_ms", "server: parse + chunk"),
                ("server_write_ms", "server: SQLite write"),
                ("server_embed_ms", "server: embedding the changed chunks"),
            ):
                v = sv.get(key)
                if v:
                    srows.append([label, f"{v['p50']:.0f}", f"{v['p95']:.0f}"])
            L += table(["measure", "p50 ms", "p95 ms"], srows)
            L.append("")
            L.append(
                "The client polls `mdseek/status` every 5 ms until the update is done, then checks with"
                " `mdseek/search` that the edit's new word is found (`python -m benchmarks.save_latency`)."
            )
            L.append("")
        L.append(
            "mdseek's workspace/symbol is a hybrid semantic search; VS Code's is a fuzzy match over heading names."
            " The harness answers VS Code's `markdown/parse` and `markdown/fs/*` requests from memory (files tokenized with"
            " markdown-it-py before the clock starts)."
            f" mdseek's bytecode: {lsp.get('bytecode', 'as found')}."
        )
        L.append("")
    return "\n".join(L) + "\n"
