"""GitHub's heading anchors (github-slugger): the slug of a heading's rendered
text, unique in one document.
"""

from __future__ import annotations

from functools import cache


# github-slugger (what GitHub's heading ids follow; its regex.js is generated
# from Unicode general categories) lowercases, then removes every code point
# except letters, marks (Mn, Mc, Me), decimal and letter numbers, connector
# punctuation, Alphabetic symbols (e.g. circled letters), surrogates, the ASCII
# hyphen-minus and the ASCII space; spaces then become "-". No trimming and no
# Unicode normalisation: a heading typed in decomposed form (NFD) gets another
# anchor, as on GitHub. Other numbers (¼, ²), other dashes, every other
# punctuation, symbol, separator, control and format character are dropped.
@cache
def _slug_drop():  # the regex module costs ~20 ms to import: only when a heading is slugged
    import regex

    return regex.compile(r"[^\p{Alphabetic}\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc}\p{Cs}\- ]")


def github_slug(text: str) -> str:
    """GitHub's heading anchor for the rendered text of a heading (github-slugger)."""
    return _slug_drop().sub("", text.lower()).replace(" ", "-")


class Slugger:
    """Unique slugs in one document: ``x``, ``x-1``, ``x-2`` (github-slugger)."""

    def __init__(self) -> None:
        self.occurrences: dict[str, int] = {}

    def slug(self, text: str) -> str:
        base = github_slug(text)
        result = base
        while result in self.occurrences:
            self.occurrences[base] += 1
            result = f"{base}-{self.occurrences[base]}"
        self.occurrences[result] = 0
        return result
