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
        + (" (**--quick smoke run on tiny subsets: the numbers mean nothing**)" if meta["quick"] else "")
        + f"; 1-minute load average {meta.get('load_average_start')} at the start, {meta.get('load_average_end')} at the end"
        + " (other work on the machine slows every timed figure; the ratios are measured side by side)."
    )
    cfg = meta["config"]
    L.append(
        f"Defaults measured: RRF k {cfg['rrf_k']}, FTS weights (title/headings/body) {cfg['fts_weights']},"
        f" {cfg['candidates']} candidate chunks per retriever, chunk floor {cfg['chunk_floor']} tokens, porter stemming."
    )
    for s in res.get("skipped", []):
        L.append(f"- {s}")
    L.append("")

    q = res.get("quality", {})
    if q.get("scifact") or q.get("rhdh"):
        L.append("### Retrieval quality")
        L.append("")
        rows = []
        sf = q.get("scifact")
        if sf:
            pub = {"lexical": "BM25 0.665", "dense": "all-MiniLM-L6-v2 0.645", "hybrid": ""}
            for mode in ("hybrid", "lexical", "dense"):
                d = sf["modes"][mode]["doc"]
                rows.append([f"SciFact test ({sf['modes'][mode]['queries']} q)", "document", mode, _f(d["ndcg@10"]), "", _f(d["recall@100"]), _f(d["mrr@10"]), pub[mode]])
        rh = q.get("rhdh")
        if rh:
            for level in ("doc", "section"):
                for mode in ("hybrid", "lexical", "dense"):
                    d = rh["modes"][mode][level]
                    rows.append([f"product docs ({rh['modes'][mode]['queries']} q)", "document" if level == "doc" else "section (approx.)", mode, _f(d["ndcg@10"]), _f(d["recall@10"]), _f(d["recall@100"]), _f(d["mrr@10"]), ""])
            for name, label in (("whole_document", "baseline: 1 vector/document"), ("fixed_1200_chars", "baseline: 1,200-char chunks")):
                b = rh.get("baselines", {}).get(name)
                if not b:
                    continue
                d = b["doc"]
                rows.append(["product docs", "document", f"dense, {label} ({b['vectors']} vectors)", _f(d["ndcg@10"]), _f(d["recall@10"]), _f(d["recall@100"]), _f(d["mrr@10"]), ""])
                if "section" in b:
                    d = b["section"]
                    rows.append(["product docs", "section (approx.)", f"dense, {label}", _f(d["ndcg@10"]), _f(d["recall@10"]), _f(d["recall@100"]), _f(d["mrr@10"]), ""])
        L += table(["corpus", "level", "mode", "nDCG@10", "Recall@10", "Recall@100", "MRR@10", "published nDCG@10"], rows)
        L.append("")
        if sf:
            ix = sf.get("index", {})
            L.append(
                f"SciFact: {ix.get('files')} abstracts → {ix.get('chunks')} chunks, indexed in {_f(ix.get('seconds'), 0)} s."
                f" Lexical vs published BM25: {sf['modes']['lexical']['doc']['ndcg@10'] - 0.665:+.3f}."
                " Recall@100 counts distinct documents among the first 100 sections returned;"
                " each retriever contributes at most its 100 best chunks."
            )
        if rh:
            L.append(
                "Product docs: document level uses the reliable qrels; section level is approximate"
                " (a hit is a returned section span holding the judged section's start line)."
            )
        chk = q.get("replay_check")
        if chk:
            L.append(f"Ablation replay equals `Engine.search` on the default configuration: {chk}.")
        L.append("")

    ab = q.get("ablations")
    if ab:
        L.append("### What the fusion and FTS choices do (nDCG@10; dev half / held-out test half)")
        L.append("")
        names = [n for n in ("scifact", "rhdh") if any(f"{n}/dev" in r for r in ab["rows"])]
        head = ["knob", "mode", "value"]
        for n in names:
            label = "SciFact" if n == "scifact" else "docs"
            head += [f"{label} dev", f"{label} test"]
            if n == "rhdh":
                head += ["docs § dev", "docs § test"]
        rows = []
        for r in ab["rows"]:
            row = [r["knob"], r["mode"], r["value"] + (" *" if r["default"] else "")]
            for n in names:
                row += [_f(r[f"{n}/dev"]["doc_ndcg@10"]), _f(r[f"{n}/test"]["doc_ndcg@10"])]
                if n == "rhdh":
                    row += [_f(r[f"{n}/dev"].get("section_ndcg@10")), _f(r[f"{n}/test"].get("section_ndcg@10"))]
            rows.append(row)
        L += table(head, rows)
        L.append("")
        L.append("`*` = current default. Best on the dev half, and what it does on the held-out half (mean nDCG@10 over the columns):")
        L.append("")
        rows = [[c["knob"], c["mode"], c["default"], c["best_on_dev"], _f(c["dev_gain"], 4), _f(c["test_gain"], 4)] for c in ab["choices"]]
        L += table(["knob", "mode", "default", "best on dev", "gain on dev", "gain on test"], rows)
        L.append("")
    fl = q.get("floor")
    if fl:
        L.append("Chunk floor (lexical only, product docs, re-chunked without embedding):")
        L.append("")
        rows = []
        for floor in sorted({r["floor"] for r in fl}):
            d = {r["split"]: r for r in fl if r["floor"] == floor}
            rows.append([floor, d["dev"]["chunks"], _f(d["dev"]["doc_ndcg@10"]), _f(d["test"]["doc_ndcg@10"]), _f(d["dev"]["section_ndcg@10"]), _f(d["test"]["section_ndcg@10"])])
        L += table(["floor (tokens)", "chunks", "doc dev", "doc test", "§ dev", "§ test"], rows)
        L.append("")

    cov = res.get("coverage")
    if cov:
        L.append("### Coverage: share of body tokens inside some vector's window (same tokenizer)")
        L.append("")
        rows = []
        for name, c in cov.items():
            rows.append([name, c["files"], f"{_pct(c['mdseek']['coverage'])} ({c['mdseek']['vectors']})", f"{_pct(c['whole_document']['coverage'])} ({c['whole_document']['vectors']})", f"{_pct(c['fixed_1200_chars']['coverage'])} ({c['fixed_1200_chars']['vectors']})"])
        L += table(["corpus", "files", "mdseek chunker (vectors)", "1 vector per document", "1,200-char chunks on blank lines"], rows)
        L.append("")

    sp = res.get("speed", {})
    tp = sp.get("throughput")
    if tp:
        L.append("### Index throughput and incremental reindex")
        L.append("")
        rows = [
            ["full index (chunks/s)", f"{tp['chunks_per_s']:.1f} ({tp['chunks']} chunks, {tp['index_seconds']:.0f} s; parse+chunk+store {tp['parse_chunk_store_seconds']:.1f} s)", f"{tp['bare_chunks_per_s']:.1f} (bare {tp.get('backend') or 'model'} encode, {tp['bare_encode_seconds']:.0f} s)", f"{tp['overhead_ratio']:.2f}× the bare time"],
        ]
        inc = sp.get("incremental")
        if inc:
            rows.append([
                f"one-line edit in {inc['document']} ({inc['document_chunks']} chunks)",
                f"{inc['chunks_embedded']} chunk(s) embedded, {inc['reindex_seconds']:.2f} s",
                f"{inc['document_chunks']} chunks re-embedded, {inc['whole_document_embed_seconds']:.2f} s",
                f"{inc['speedup']}× faster",
            ])
            rows.append([f"reconcile with nothing changed ({inc['unchanged_reconcile_files']} files)", f"{inc['unchanged_reconcile_seconds']:.2f} s", "", ""])
        L += table(["measure", "mdseek", "baseline", "ratio"], rows)
        L.append("")
    lat = sp.get("latency")
    if lat:
        L.append("### Query latency and memory (median / p95 ms over many queries, query embedding included)")
        L.append("")
        rows = []
        for r in lat:
            bf = r["brute_force"]["median_ms"]
            hy = r["hybrid"]["median_ms"]
            de = r["dense"]["median_ms"]
            rows.append([
                r["chunks"], f"{r['real_vectors']} / {r['synthetic_vectors']}",
                f"{_ms(r['hybrid'])} / {_ms(r['hybrid'], 'p95_ms')}",
                f"{_ms(r['dense'])} / {_ms(r['dense'], 'p95_ms')}",
                f"{_ms(r['lexical'])} / {_ms(r['lexical'], 'p95_ms')}",
                f"{_ms(r['brute_force'])} / {_ms(r['brute_force'], 'p95_ms')}",
                f"{bf / de:.1f}×" if de else "–",
                f"{bf / hy:.1f}×" if hy else "–",
                f"{_ms(r['parts']['query_embedding'])} / {_ms(r['parts']['fts'])} ({_ms(r['parts'].get('fts_without_stop_words'))} w/o stop words) / {_ms(r['parts']['dense_matrix'])}",
                f"{r['rss_mb']['index_loaded']:.0f} ({r['rss_mb']['index_share']:+.0f})",
            ])
        L += table(["chunks", "distinct vectors: real / synthetic", "hybrid", "dense only", "lexical only", "brute force", "brute / dense", "brute / hybrid", "embed / FTS / matrix (median)", "RSS MB (index share)"], rows)
        L.append("")
        L.append(
            "Scale corpora: the product docs plus generated sections (real headings and paragraphs, a fifth of the words"
            " swapped, sentences shuffled). Real chunks keep their real vectors; generated chunks get synthetic random unit"
            " vectors (a matrix product and a top-k cost the same whatever unit vectors are in the matrix). Brute force ="
            " embed the query, re-read every vector from SQLite, numpy product, top-k. RSS includes the model (~"
            f"{lat[0]['rss_mb']['model_loaded']:.0f} MB with nothing loaded). Plot: `latency.png`."
        )
        L.append("")

    from .speed import render_backends_and_cli

    L += render_backends_and_cli(sp)
    lsp = res.get("lsp")
    if lsp:
        L.append(f"### Language server ({lsp.get('files')} files; {lsp.get('queries')} workspace-symbol queries; {lsp.get('vscode_version', '')})")
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
            ["process start → first workspace/symbol answer", col(a, lambda d: f"{d['start_to_first_workspace_symbol_seconds']:.2f} s ({d['first_answer_results']} results)"), col(b, lambda d: f"{d['start_to_first_workspace_symbol_seconds']:.2f} s ({d['first_answer_results']} results)")],
            ["process start → first hybrid `mdseek/search` answer", col(a, lambda d: _f(d["start_to_first_hybrid_search_seconds"], 2) + " s"), "–"],
            ["process start → first non-empty answer", col(a, lambda d: _f(d["start_to_first_nonempty_workspace_symbol_seconds"], 2) + " s"), col(b, lambda d: _f(d["start_to_first_nonempty_workspace_symbol_seconds"], 2) + " s")],
            ["documentSymbol, first per file (median / p95 ms)", col(a, lambda d: f"{_ms(d['document_symbol_first'])} / {_ms(d['document_symbol_first'], 'p95_ms')}"), col(b, lambda d: f"{_ms(d['document_symbol_first'])} / {_ms(d['document_symbol_first'], 'p95_ms')}")],
            ["documentSymbol, warm (median / p95 ms)", col(a, lambda d: f"{_ms(d['document_symbol_warm'])} / {_ms(d['document_symbol_warm'], 'p95_ms')}"), col(b, lambda d: f"{_ms(d['document_symbol_warm'])} / {_ms(d['document_symbol_warm'], 'p95_ms')}")],
            ["workspace/symbol (median / p95 ms)", col(a, lambda d: f"{_ms(d['workspace_symbol'])} / {_ms(d['workspace_symbol'], 'p95_ms')} ({d['workspace_symbol_mean_results']} results)"), col(b, lambda d: f"{_ms(d['workspace_symbol'])} / {_ms(d['workspace_symbol'], 'p95_ms')} ({d['workspace_symbol_mean_results']} results)")],
            ["shutdown + exit → process gone", col(a, lambda d: _f(d.get("shutdown_seconds"), 2) + " s"), col(b, lambda d: _f(d.get("shutdown_seconds"), 2) + " s")],
            ["server RSS after the run", col(a, lambda d: f"{d['rss_mb']:.0f} MB"), col(b, lambda d: f"{d['rss_mb']:.0f} MB")],
        ]
        L += table(["measure", "mdseek (`python -m mdseek serve`)", "VS Code markdown server"], rows)
        L.append("")
        L.append(
            "mdseek's workspace/symbol is a hybrid semantic search; VS Code's is a fuzzy match over heading names."
            " The harness answers VS Code's `markdown/parse` and `markdown/fs/*` requests from memory (files tokenized with"
            " markdown-it-py before the clock starts)."
        )
        L.append("")
    return "\n".join(L) + "\n"
