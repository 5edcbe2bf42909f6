"""A search query, read once.

:meth:`Query.parse` turns the text a user typed into one value: the text as
searched, its distinct words, the last word when it is typed as a prefix, and
the question of a long query. Everything after reads that value and never the
text again: the lexical side derives its terms from it (:meth:`Query.terms_for`:
stop words out, words in most chunks out, with why), the dense side embeds
its text and question, and the engine hands fusion, snippets and explain the
same value with both sides' readings on it (:meth:`Query.with_terms`,
:meth:`Query.with_vector`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .lexical import BM25_K1, bm25_idf

if TYPE_CHECKING:
    import numpy as np

MAX_QUERY_CHARS = 4096  # far beyond the model's window; every word of it is read
MAX_DF = 0.5  # lexical: words in more than this share of the chunks are left out
QUESTION_MIN_WORDS = 20  # a query this long with several sentences: its question counts twice

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
_UNSEARCHABLE = re.compile("[\x00\ud800-\udfff]")

# English function words: they carry no topic, and OR-ed into a MATCH they make
# it match nearly every row (slow at scale, and noise in the candidate list).
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could couldn did didn do does doesn doing don
    down during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just let me more most mustn my
    myself no nor not now of off on once only or other ought our ours ourselves out over own
    same shan she should shouldn so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was wasn we were weren what
    when where which while who whom why will with won would wouldn you your yours yourself
    yourselves s t d ll m re ve y also get got getting
    """.split()
)


def clean(text: str | None) -> str:
    """Query text anything can search: lone surrogates (pasted text, a non-UTF-8
    argv) and NUL become spaces, so the rest of the query is still searched;
    capped at :data:`MAX_QUERY_CHARS`."""
    return _UNSEARCHABLE.sub(" ", (text or "")[:MAX_QUERY_CHARS])


def words_of(text: str) -> list[str]:
    """Distinct lower-cased words of ``text`` in order (every word, no cap)."""
    return list(dict.fromkeys(_WORD.findall(text.lower())))


def question_of(text: str) -> str | None:
    """The question inside a long query (a scenario or a pasted paragraph, then
    what is asked): the last sentence that ends in ``?``, else the last sentence.
    None for a query of one sentence or under :data:`QUESTION_MIN_WORDS` words."""
    text = text.strip()
    if len(text.split()) < QUESTION_MIN_WORDS:
        return None
    sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
    if len(sentences) < 2:
        return None
    asked = [s for s in sentences if s.rstrip().endswith("?")]
    return (asked or sentences)[-1].strip()


def ask_of(text: str) -> str | None:
    """What a long query asks, read apart from its scenario: its last sentence
    ending in ``?``, with the questions right before it (``...? ...?``). None for
    a query under :data:`QUESTION_MIN_WORDS` words, one with no sentence ending
    in ``?`` (a scenario alone: the whole text is read), or one whose questions
    are the whole text up to there (nothing to read apart)."""
    text = text.strip()
    if len(text.split()) < QUESTION_MIN_WORDS:
        return None
    sentences = [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    asked = [i for i, s in enumerate(sentences) if s.endswith("?")]
    if not asked:
        return None
    first = last = asked[-1]
    while first > 0 and sentences[first - 1].endswith("?"):
        first -= 1
    if first == 0:
        return None
    ask = " ".join(sentences[first : last + 1]).strip()
    return ask or None


@dataclass(frozen=True)
class QueryTerms:
    """What the lexical side searches for, and what it left out and why."""

    words: list[str]  # distinct words searched, in query order
    prefix: str | None = None  # the last word, matched as a prefix (as-you-type)
    dropped: dict[str, str] = field(default_factory=dict)  # word -> reason
    idf: dict[str, float] = field(default_factory=dict)  # word -> BM25 IDF, when known
    emphasis: list[str] = field(default_factory=list)  # words of the question, counted twice
    df: dict[str, int] = field(default_factory=dict)  # word -> chunks holding it, when known

    @property
    def rarest(self) -> int | None:
        """How many chunks hold the rarest word searched that some chunk holds
        (the prefix as a whole word), None when unknown or when none is held: a
        word in few chunks is one the keyword side can place and meaning may not
        (:func:`retrieve.convex_weights`)."""
        counts = [self.df.get(w, 0) for w in [*self.words, self.prefix or ""]]
        return min((n for n in counts if n > 0), default=None)

    @property
    def phrases(self) -> list[str]:
        """The words a MATCH ORs together, the question's twice (not the prefix)."""
        return self.words + self.emphasis

    @property
    def bm25_max(self) -> float | None:
        """An upper bound of any row's BM25 for these words: each term's frequency
        part f * (k1 + 1) / (f + k1 * norm) stays below k1 + 1 whatever the column
        weights make of f, so no row scores (k1 + 1) * sum(IDF). None when the
        document frequencies are unknown."""
        if not self.idf or self.prefix:
            return None
        return (BM25_K1 + 1.0) * sum(self.idf.get(w, 0.0) for w in self.phrases)

    def match(self) -> str:
        """The FTS5 MATCH expression: every word quoted (so ``AND``, ``NEAR``, ``-``,
        ``:``, ``*``, parentheses and quotes are plain text), OR-ed so BM25 ranks
        partial matches. Empty when there is nothing to search."""
        # A phrase repeated in the MATCH counts twice in FTS5's bm25().
        parts = ['"' + w.replace('"', '""') + '"' for w in self.phrases]
        if self.prefix:
            parts.append('"' + self.prefix.replace('"', '""') + '"*')
        return " OR ".join(parts)

    def explain(self) -> dict:
        """What explain shows of the lexical side: the terms searched (a prefix
        with ``*``), the words dropped and why, the question's words."""
        out: dict = {
            "query_terms": self.words + ([self.prefix + "*"] if self.prefix else []),
            "dropped_terms": self.dropped,
        }
        if self.emphasis:
            out["question_terms"] = self.emphasis
        return out


@dataclass(frozen=True)
class Query:
    """One search query, analysed once (:meth:`parse`), read by every stage.

    ``terms`` and ``vector`` are the two retrievers' readings of it, set by the
    engine once each side has run: fusion reads the BM25
    bound of ``terms``, explain its words, snippets :attr:`highlight`."""

    text: str  # as searched (see :func:`clean`)
    words: tuple[str, ...]  # distinct lower-cased words, in order
    prefix_last: bool = False  # as you type: the last word may be a prefix
    question: str | None = None  # a long query's question (see :func:`question_of`)
    question_words: frozenset[str] = frozenset()
    ask: str | None = None  # what a long query asks, for the dense side (see :func:`ask_of`)
    seeded: bool = False  # a section's own text (related): the vector comes with it
    terms: QueryTerms | None = None  # the lexical side's terms, once it has run
    vector: np.ndarray | None = field(default=None, compare=False)  # the dense side's

    @property
    def rare_rule_input(self) -> int | None:
        """What the rare-word rule of fusion reads (``retrieve.convex_weights``'s
        ``rarest``): how many chunks hold the rarest word searched; None for a
        query read in parts (a scenario, then its ask), whose scenario's
        incidental words must not take the keywords' say, and before the
        lexical side has run."""
        if self.ask or self.terms is None:
            return None
        return self.terms.rarest

    @classmethod
    def parse(cls, text: str | None, prefix_last: bool = False, question: bool = True) -> Query:
        """Read ``text`` once. ``question``: find a long query's question, whose
        words count twice on both sides (off for a section's own text)."""
        text = clean(text)
        asked = question_of(text) if question else None
        return cls(
            text,
            tuple(words_of(text)),
            prefix_last,
            asked,
            frozenset(words_of(asked)) if asked else frozenset(),
            ask_of(text) if question else None,
        )

    @classmethod
    def seed(cls, text: str, vector: np.ndarray | None) -> Query:
        """A section's own text and vector as a query (related sections)."""
        q = cls.parse(text, question=False)
        return dataclasses.replace(q, seeded=True, vector=vector)

    def with_terms(self, terms: QueryTerms | None) -> Query:
        """This query with the lexical side's terms."""
        return dataclasses.replace(self, terms=terms)

    def with_vector(self, vector: np.ndarray | None) -> Query:
        """This query with the dense side's vector."""
        return dataclasses.replace(self, vector=vector)

    @property
    def bm25_max(self) -> float | None:
        """The BM25 upper bound of the lexical terms (None before the lexical side ran)."""
        return self.terms.bm25_max if self.terms is not None else None

    @property
    def blank(self) -> bool:
        return not self.text.strip()

    @property
    def highlight(self) -> list[str]:
        """Words worth highlighting in a snippet."""
        return [w for w in self.words if len(w) > 2 and w not in STOP_WORDS]

    def unsearchable(self) -> str | None:
        """The note for a query with no word worth searching (only stop words, or no
        word at all), else None. Ranking such a query would still put some section
        first with a normalised score of 1.0, which looks confident and means nothing."""
        words = self.words
        if any(w not in STOP_WORDS for w in words):
            return None
        if not words:
            return "the query has no searchable words: name what you are looking for"
        shown = ", ".join(words[:8]) + (", ..." if len(words) > 8 else "")
        return (
            f"the query has no searchable words ({shown}: too common to search by):"
            " name what you are looking for"
        )

    def terms_for(
        self,
        doc_freq: Mapping[str, int] | None = None,
        rows: int = 0,
        max_df: float = MAX_DF,
        stop_words: frozenset[str] = STOP_WORDS,
    ) -> QueryTerms:
        """The words the lexical retriever searches for: all of them, read whole
        (no cap on length), minus

        * stop words (unless the query has nothing else), and
        * words in more than ``max_df`` of the ``rows`` indexed chunks (``doc_freq``:
          word -> number of chunks holding it). BM25 gives such a word an IDF of
          about zero, so it cannot change the order; it would only make the MATCH
          visit nearly every row. The rarest word is always kept.

        With ``prefix_last``, the last word is matched as a prefix when the text
        does not end in a space (search as you type). The words of a long
        query's question count twice (not while typing), so the context before
        it cannot outvote what is asked."""
        text, words = self.text, list(self.words)
        prefix = None
        if self.prefix_last and words and text and not text[-1].isspace() and len(words[-1]) >= 2:
            if words[-1] not in stop_words or len(words) == 1:
                prefix = words.pop()
                if prefix in words:
                    prefix = None
        dropped: dict[str, str] = {}
        kept = [w for w in words if w not in stop_words]
        if kept or prefix:
            dropped.update({w: "stop word" for w in words if w in stop_words})
        else:
            kept = words
        if doc_freq is not None and rows > 0 and max_df < 1.0 and kept:
            common = [w for w in kept if doc_freq.get(w, 0) > max_df * rows]
            if common:
                if len(common) == len(kept) and not prefix:
                    common.remove(min(common, key=lambda w: doc_freq.get(w, 0)))
                for w in common:
                    dropped[w] = f"in {doc_freq.get(w, 0) / rows:.0%} of chunks"
                gone = set(common)
                kept = [w for w in kept if w not in gone]
        idf = {}
        df = {}
        if doc_freq is not None and rows > 0:
            idf = {w: bm25_idf(doc_freq.get(w, 0), rows) for w in kept}
            df = {w: doc_freq[w] for w in [*kept, prefix or ""] if w in doc_freq}
        emphasis: list[str] = []
        if self.question and not prefix:
            emphasis = [w for w in kept if w in self.question_words]
        return QueryTerms(kept, prefix, dropped, idf, emphasis, df)
