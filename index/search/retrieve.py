"""Hybrid ranking: chunk scores pooled to sections, score fusion with a
document-context term, and why each result ranks where it does (what a query
searches for is :mod:`mdseek.index.search.query`).

Pure functions over ranked lists; :mod:`mdseek.index.engine.searcher` feeds them from
the store (BM25) and the dense matrix (cosine). The benchmark replays the same
functions from cached candidate lists (``benchmarks/replay.py``).

How a section's score is made (defaults in :data:`DEFAULT`, chosen on the dev
halves of every benchmark corpus together and checked on the held-out test
halves, see benchmarks/README.md):

1. Each retriever's chunk scores are max-pooled to sections (a section that is
   split takes its best chunk; with the default floor 0 no chunk spans two
   sections, so no two sections ever share a score).
2. Each retriever's section scores are normalised per query: BM25 min-max
   over the candidates, cosine divided by the best cosine among them (so a
   section the model finds nearly as close as the best keeps nearly all of its
   dense score). Also measured: BM25 divided by the most any row could score
   for the query's words (``lexical_norm="bm25"``), which did as well on the
   dev halves but lets the context of a long question drown its last words.
3. The section score is a convex combination ``w * dense + (1 - w) * lexical``
   (Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS
   2023); reciprocal rank fusion remains available (``fusion="rrf"``). The
   weight follows the query (:func:`convex_weights`): with
   ``dense_weight_matched`` set, the keyword side's weight grows with how
   fully the best keyword candidate matches the query's words (its BM25 over
   the most any row could score for them, to the power ``match_power``), from
   ``1 - dense_weight`` for a query no row matches well to
   ``1 - dense_weight_matched`` for one a row matches in every word.
4. Optional document context: ``final = (1 - d) * section + d * document``,
   where the document term is the best section score in the same document
   (measured, off by default: it did not win on the dev halves).
5. The score floor (hybrid only, :func:`apply_floor`): a section found by
   meaning alone whose raw cosine is under ``similarity_floor`` is left out,
   so a query about nothing in the folder is not answered with the best of a
   bad lot at a normalised 1.0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

RRF_K = 60
FTS_WEIGHTS = (2.0, 4.0, 1.0)  # title, headings (breadcrumb), body
CANDIDATES = 100  # chunks taken from each retriever before pooling

SectionKey = tuple[int, int]  # (doc id, section ordinal)
ChunkSpan = tuple[int, int, int]  # (doc id, first section ordinal, last section ordinal)


# -- ranking --------------------------------------------------------------------


@dataclass(frozen=True)
class Ranking:
    """How lexical and dense candidates become one ranking of sections."""

    fusion: str = "convex"  # "convex" (normalised scores) or "rrf" (ranks only)
    dense_weight: float = 0.8  # convex: weight of dense, lexical gets 1 - this
    # convex: the dense weight when the best keyword candidate matches every query
    # word (None: always ``dense_weight``), see :func:`convex_weights`
    dense_weight_matched: float | None = 0.15
    match_power: float = 2.0
    # convex: the dense weight when the best keyword section stands alone (no other
    # keyword section comes near it) and the query has a word in at most ``rare_df``
    # chunks (None: off), see :func:`convex_weights`
    dense_weight_decisive: float | None = 0.4
    gap_power: float = 4.0
    gap_at: int = 2  # the gap is between the best keyword section and this one
    rare_df: int | None = 3  # None: any query (no rare word needed)
    # "max": x / best; "minmax": (x - min) / (best - min); "bm25": x / the most any row
    # could score for these words (so a weak lexical match stays weak); "raw": as is
    lexical_norm: str = "minmax"
    # "bm25": BM25 / max(best BM25, this share of the query's upper bound): 1 = the
    # bound itself; lower shares let a long query's best match reach 1 sooner
    bm25_share: float = 1.0
    dense_norm: str = "max"
    rrf_k: int = RRF_K
    doc_weight: float = 0.0  # weight of the document term (0 = off)
    candidates: int = CANDIDATES
    merged: str = "first"  # a chunk covering several sections credits the "first" or "all"
    # the score floor: in hybrid search, a section no keyword candidate found and
    # whose raw cosine to the query is under this is left out (0 = off); see
    # :func:`apply_floor`. Chosen on the dev halves for the default model
    # (``python -m benchmarks.floor``, benchmarks/README.md)
    similarity_floor: float = 0.28
    # A long query's ask (query.ask_of) read beside its whole text on the dense
    # side (engine.dense_side.join_ask): "mean" (weighted by ask_weight), "max"
    # (a section takes its closer cosine) or "off" (the whole text alone)
    ask: str = "mean"
    ask_weight: float = 0.5
    # "no section matches well" (:func:`weak_match`): a search whose best candidate's
    # raw cosine stands less than ``weak_margin`` above the folder's typical cosine
    # between two of its sections, and whose best keyword candidate holds under
    # ``weak_keyword`` of the query's words (BM25 / its bound), says so (0 = off).
    # Chosen on the dev halves for the default model (``python -m
    # benchmarks.no_answer``, benchmarks/README.md)
    weak_margin: float = 0.10
    weak_keyword: float = 0.375

    def to_dict(self) -> dict:
        return asdict(self)


DEFAULT = Ranking()


@dataclass
class Scored:
    """One section in a ranking, with every part of its score."""

    key: SectionKey
    score: float = 0.0  # final
    section: float = 0.0  # fused score of the section itself, before the document term
    document: float = 0.0  # the document term (before its weight)
    ranks: dict[str, int] = field(default_factory=dict)  # retriever -> 1-based rank
    raw: dict[str, float] = field(default_factory=dict)  # retriever -> its own score
    norm: dict[str, float] = field(default_factory=dict)  # retriever -> normalised score
    chunks: dict[str, int] = field(default_factory=dict)  # retriever -> best chunk id
    weights: dict[str, float] = field(default_factory=dict)  # the fusion's, for this query
    inputs: dict[str, float | None] = field(default_factory=dict)  # what made the weights

    @property
    def best_chunk(self) -> int | None:
        """The chunk to show: the one the strongest retriever found."""
        if not self.chunks:
            return None
        name = max(self.chunks, key=lambda n: (self.norm.get(n, 0.0), -self.ranks.get(n, 10**9)))
        return self.chunks[name]

    def explain(self, ranking: Ranking) -> dict:
        """A JSON-ready account of the score."""
        parts = {}
        for name in sorted(set(self.raw) | set(self.ranks)):
            parts[name] = {
                "raw": _r(self.raw.get(name)),
                "rank": self.ranks.get(name),
                "normalised": _r(self.norm.get(name)) if ranking.fusion == "convex" else None,
            }
        if ranking.fusion == "convex":
            weights: dict[str, float | None] = {k: _r(v) for k, v in self.weights.items()}
        else:
            weights = {"rrf_k": ranking.rrf_k}
        return {
            "fusion": ranking.fusion,
            **parts,
            "weights": weights,
            **(
                {"weight_inputs": {k: _r(v) for k, v in self.inputs.items()}} if self.inputs else {}
            ),
            "section": _r(self.section),
            "document": _r(self.document),
            "document_weight": ranking.doc_weight,
            "final": _r(self.score),
        }


def convex_weights(
    ranking: Ranking,
    lexical_best: float | None = None,
    lexical_max: float | None = None,
    gap: float | None = None,
    rarest: int | None = None,
) -> dict[str, float]:
    """The convex fusion's weights for one query (see the module, step 3):
    ``lexical_best`` is the best keyword candidate's BM25 and ``lexical_max``
    the most any row could score for the query's words; ``gap``: how far the
    best keyword section stands above the next (:func:`keyword_gap`);
    ``rarest``: how many chunks hold the query's rarest word."""
    w = ranking.dense_weight
    if ranking.dense_weight_matched is not None and lexical_best and lexical_max:
        match = min(1.0, max(0.0, lexical_best / lexical_max)) ** ranking.match_power
        w += (ranking.dense_weight_matched - w) * match
    decisive = ranking.dense_weight_decisive
    rare = ranking.rare_df is None or (rarest is not None and 0 < rarest <= ranking.rare_df)
    if decisive is not None and gap and rare and decisive < w:
        w += (decisive - w) * min(1.0, gap) ** ranking.gap_power
    return {"dense": w, "lexical": 1.0 - w}


def keyword_gap(pooled: Sequence[tuple[SectionKey, float, int]], at: int = 2) -> float | None:
    """How far the best keyword section stands above the ``at``-th: 1 - its
    BM25 / the best's (1 when fewer sections matched; None when none did)."""
    if not pooled or pooled[0][1] <= 0:
        return None
    if len(pooled) < at:
        return 1.0
    return max(0.0, 1.0 - pooled[at - 1][1] / pooled[0][1])


def _r(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def pool_to_sections(
    ranked_chunks: Sequence[tuple[int, float]],
    chunk_sections: Mapping[int, ChunkSpan],
    merged: str = "first",
) -> list[tuple[SectionKey, float, int]]:
    """Max-pool chunk scores to sections: (section, score, best chunk id), best first.

    A section split over several chunks takes its best chunk. A chunk that covers
    several sections (only with a merge floor above 0) credits its first section
    only (``merged="first"``: sections never share a score) or, as mdseek did
    before, every section it covers (``"all"``)."""
    best: dict[SectionKey, tuple[float, int, int]] = {}
    for order, (cid, score) in enumerate(ranked_chunks):
        span = chunk_sections.get(cid)
        if span is None:
            continue
        doc, first, last = span
        for ordinal in range(first, (last if merged == "all" else first) + 1):
            key = (doc, ordinal)
            cur = best.get(key)
            if cur is None or score > cur[0]:
                best[key] = (score, cid, order)
    items = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][2], kv[0]))
    return [(k, v[0], v[1]) for k, v in items]


def _normalise(
    scores: list[float], how: str, bound: float | None = None, share: float = 1.0
) -> tuple[float, float]:
    """(offset, scale) so that (x - offset) * scale maps the list into [0, 1].
    ``how="bm25"``: divided by the larger of the best score and ``share`` of the
    query's BM25 upper bound ``bound``."""
    hi = max(scores)
    if how == "bm25" and bound:
        return 0.0, 1.0 / max(hi, share * bound)
    if how in ("max", "bm25"):
        return 0.0, (1.0 / hi if hi > 0 else 0.0)
    if how == "minmax":
        lo = min(scores)
        if hi > lo:
            return lo, 1.0 / (hi - lo)
        # one candidate, or all equal: each is the best (not the worst)
        return 0.0, (1.0 / hi if hi > 0 else 0.0)
    if how == "raw":
        return 0.0, 1.0
    raise ValueError(f"unknown normalisation {how!r}")


def _unscored(s: Scored, name: str, unscored: Mapping[str, set[int]] | None) -> bool:
    """Whether retriever ``name`` could not score section ``s`` (every chunk
    that brought it in is one the retriever has no score for)."""
    if not unscored or name in s.raw or not unscored.get(name):
        return False
    return bool(s.chunks) and all(cid in unscored[name] for cid in s.chunks.values())


def rank_sections(
    lists: Mapping[str, Sequence[tuple[int, float]]],
    chunk_sections: Mapping[int, ChunkSpan],
    ranking: Ranking = DEFAULT,
    extra: Mapping[str, Mapping[int, float]] | None = None,
    lexical_max: float | None = None,
    unscored: Mapping[str, set[int]] | None = None,
    lexical_rarest: int | None = None,
) -> list[Scored]:
    """Fuse per-retriever chunk lists ((chunk id, score), best first) into one
    ranking of sections.

    ``extra``: retriever -> chunk id -> score for chunks outside that retriever's
    list (the dense score of a lexical candidate is exact and cheap): they fill
    in a section's score without giving it a rank. ``lexical_max``: the query's
    BM25 upper bound (:attr:`query.QueryTerms.bm25_max`) for ``lexical_norm="bm25"``.
    ``unscored``: retriever -> chunk ids it cannot score at all (no vector yet,
    while a folder's first index runs): a section known only through such
    chunks is ranked by the other retrievers' weights alone, as if that
    retriever agreed, instead of as if it had scored the section 0."""
    out: dict[SectionKey, Scored] = {}
    gap = None
    for name, ranked in lists.items():
        pooled = pool_to_sections(ranked[: ranking.candidates], chunk_sections, ranking.merged)
        if name == "lexical":
            gap = keyword_gap(pooled, ranking.gap_at)
        for rank, (key, score, cid) in enumerate(pooled, start=1):
            s = out.get(key)
            if s is None:
                s = out[key] = Scored(key)
            s.ranks[name] = rank
            s.raw[name] = score
            s.chunks[name] = cid
    if extra:
        for name, scores in extra.items():
            for cid, score in scores.items():
                span = chunk_sections.get(cid)
                if span is None:
                    continue
                s = out.get((span[0], span[1]))
                if s is not None and name not in s.ranks and score > s.raw.get(name, float("-inf")):
                    s.raw[name] = score
    if not out:
        return []
    names = list(lists)
    if ranking.fusion == "rrf":
        for s in out.values():
            s.section = sum(1.0 / (ranking.rrf_k + r) for r in s.ranks.values())
    elif ranking.fusion == "convex":
        best = max((sc for _, sc in lists.get("lexical", ())), default=None)
        weights = convex_weights(ranking, best, lexical_max, gap, lexical_rarest)
        inputs = {
            "keyword_best": best,
            "keyword_bound": lexical_max,
            "keyword_gap": gap,
            "rarest_word_chunks": lexical_rarest,
        }
        if len(names) == 1:
            weights = {names[0]: 1.0}
        for name in names:
            vals = [s.raw[name] for s in out.values() if name in s.raw]
            if not vals:
                continue
            how = ranking.dense_norm if name == "dense" else ranking.lexical_norm
            bound = lexical_max if name == "lexical" else None
            off, scale = _normalise(vals, how, bound, ranking.bm25_share)
            for s in out.values():
                if name in s.raw:
                    s.norm[name] = max(0.0, (s.raw[name] - off) * scale)
        for s in out.values():
            known = [n for n in names if not _unscored(s, n, unscored)]
            total = sum(weights.get(n, 0.0) for n in known) or 1.0
            s.section = sum(weights.get(n, 0.0) * s.norm.get(n, 0.0) for n in known) / total
            s.weights = weights
            s.inputs = inputs
    else:
        raise ValueError(f"unknown fusion {ranking.fusion!r}")
    best_in_doc: dict[int, float] = {}
    for s in out.values():
        d = s.key[0]
        if s.section > best_in_doc.get(d, float("-inf")):
            best_in_doc[d] = s.section
    dw = ranking.doc_weight
    for s in out.values():
        s.document = best_in_doc[s.key[0]]
        s.score = (1.0 - dw) * s.section + dw * s.document
    return sorted(
        out.values(), key=lambda s: (-s.score, min(s.ranks.values(), default=10**9), s.key)
    )


def below_floor(s: Scored, floor: float) -> bool:
    """Whether a ranked section has no evidence worth showing: found by meaning
    alone (not among the keyword candidates) with a raw cosine under ``floor``."""
    return "lexical" not in s.raw and "dense" in s.raw and s.raw["dense"] < floor


def apply_floor(ranked: Sequence[Scored], floor: float) -> tuple[list[Scored], int]:
    """(the sections kept, in order; how many were cut) by the score floor
    (:attr:`Ranking.similarity_floor`): a section found by meaning alone whose
    raw cosine is under ``floor`` is left out, whatever its normalised score
    (cosine / best cosine makes the best of a bad lot 1.0). A section with a
    keyword match is always kept; a section with no vector yet has no cosine
    and is kept. ``floor`` 0 keeps everything."""
    if floor <= 0:
        return list(ranked), 0
    kept = [s for s in ranked if not below_floor(s, floor)]
    return kept, len(ranked) - len(kept)


def floor_note(kept: int, cut: int, floor: float, weak: bool = False) -> str:
    """What a search says when the score floor (:func:`apply_floor`) left it
    with fewer results than asked for; ``weak``: after :data:`NO_GOOD_MATCH`,
    which has said that nothing matched well."""
    why = f"found by meaning alone with a similarity under {floor:g} (the score floor)"
    if weak:  # the shown ones, if any, are only the nearest
        if not kept:
            return f"all {cut} candidate sections were {why}"
        many = cut > 1
        return (
            f"{cut} more section{'s' if many else ''}, {why}, {'were' if many else 'was'} left out"
        )
    if not kept:
        return f"nothing matched well: all {cut} candidate sections were {why}"
    return (
        f"only {kept} section{'s' if kept > 1 else ''} matched well; {cut} more, {why},"
        " were left out"
    )


FLOOR_MODEL = "sentence-transformers/all-MiniLM-L6-v2"  # the model the floor was measured with


def floor_for(model_id: str, ranking: Ranking) -> float:
    """The score floor for a model: :attr:`Ranking.similarity_floor` for the
    model it was measured with (any of its ids, prompts aside), else 0: another
    model's cosines run on another scale, and a floor it was never measured
    with could cut its right answers."""
    return ranking.similarity_floor if model_id.startswith(FLOOR_MODEL + "@") else 0.0


# What a search says when nothing in the folder answers it (:func:`weak_match`),
# in every front end's words: the CLI's ``note:``, MCP's and ``mdseek/search``'s note.
NO_GOOD_MATCH = (
    "no section matches well: nothing here is close in meaning to the query (try other words)"
)


def evidence(
    ranked: Sequence[Scored],
    typical: float | None = None,
    every_word: bool = False,
    in_parts: bool = False,
) -> dict[str, float | None]:
    """How well a query's candidates match on an absolute scale, before the
    score floor (normalised scores cannot say it: the best of a bad lot is 1.0):
    ``cosine`` and ``cosine_2``, the best and second raw cosines of any candidate
    section (None without a query vector); ``typical``, the folder's typical
    cosine between two of its sections (``DenseIndex.typical``), what a
    cosine is measured against; ``keyword``, the best keyword candidate's BM25
    over the most any row could score for the query's words (1: a row matches
    every word; 0: none matched); ``every_word``, whether that candidate holds
    every word searched (1) or not (0); ``in_parts``, whether the dense side read
    the query in parts (a scenario, then its question: ``Query.ask``) (1) or
    whole (0)."""
    cos = sorted((s.raw["dense"] for s in ranked if "dense" in s.raw), reverse=True)
    inputs = ranked[0].inputs if ranked else {}
    best, bound = inputs.get("keyword_best"), inputs.get("keyword_bound")
    return {
        "cosine": _r(cos[0]) if cos else None,
        "cosine_2": _r(cos[1]) if len(cos) > 1 else None,
        "typical": _r(typical) if typical is not None else None,
        "keyword": _r(min(1.0, best / bound)) if best and bound else 0.0,
        "every_word": 1.0 if every_word else 0.0,
        "in_parts": 1.0 if in_parts else 0.0,
    }


# The most uniform folder the rule was measured on (the RHDH docs' typical cosine,
# 0.376): a folder more uniform still (many notes from one template) is read as
# that, so its answers are not held to a bar no measurement has seen
TYPICAL_MAX = 0.38


def weak_match(ev: Mapping[str, float | None], margin: float, keyword: float) -> bool:
    """Whether no candidate answers the query (:data:`NO_GOOD_MATCH`): the best
    cosine stands less than ``margin`` above the folder's typical cosine (at
    most :data:`TYPICAL_MAX`), the best keyword match is under ``keyword`` and
    no keyword candidate holds every word searched (an identifier, a rare name:
    an answer however far its meaning).
    Never weak: a search with no query vector (it has no cosine), and a long
    query read in parts (a scenario, then its question), whose scenario lowers
    every cosine: the rule was fitted on questions alone, and on the E-Manual's
    questions after a scenario it would note 6-7% of the answerable ones
    (benchmarks/README.md, "Nothing matches well")."""
    best = ev.get("cosine")
    if best is None or margin <= 0 or ev.get("every_word") or ev.get("in_parts"):
        return False
    over = best - min(TYPICAL_MAX, ev.get("typical") or 0.0)
    return over < margin and (ev.get("keyword") or 0.0) < keyword


def weak_for(model_id: str, ranking: Ranking) -> tuple[float, float]:
    """The weak-match thresholds (margin, keyword) for a model: the ranking's for
    the model they were measured with, else (0, 0), off (:func:`floor_for`)."""
    if model_id.startswith(FLOOR_MODEL + "@"):
        return ranking.weak_margin, ranking.weak_keyword
    return 0.0, 0.0
