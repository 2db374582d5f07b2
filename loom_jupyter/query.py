"""What of a search query is searched: its first words, whoever sent it.

A person's paste, a sidebar page and the model all send search text; each reaches
the archive, the results' headings and their snippets only as :func:`clip_query`
cut it, so a query of any length costs what its first :data:`MAX_QUERY_WORDS`
words cost, and the result says what was left out (:attr:`ClippedQuery.note`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_QUERY_CHARS", "MAX_QUERY_WORDS", "WORD", "ClippedQuery", "clip_query"]

MAX_QUERY_WORDS = 64
"""A query is its first this many words."""

MAX_QUERY_CHARS = 4096
"""...within this many characters (64 words are far shorter; one megabyte-long
"word" is not)."""

WORD = re.compile(r"[^\W_]+")
"""A search word: a run of letters and digits."""


@dataclass(frozen=True)
class ClippedQuery:
    """The part of a query that is searched, and whether something was left out."""

    text: str
    words: int
    cut_words: bool = False
    cut_chars: bool = False

    @property
    def note(self) -> str:
        """``"searched the first 64 words"`` when the query was cut, else ``""``."""
        if self.cut_words:
            return f"searched the first {self.words} words"
        if self.cut_chars:
            return f"searched the first {MAX_QUERY_CHARS:,} characters"
        return ""


def clip_query(text: str) -> ClippedQuery:
    """The first :data:`MAX_QUERY_WORDS` words of ``text`` within :data:`MAX_QUERY_CHARS`,
    found in time bounded by what is kept, not by the length of ``text``."""
    head = text[:MAX_QUERY_CHARS]
    words = 0
    for match in WORD.finditer(head):
        words += 1
        if words == MAX_QUERY_WORDS:
            rest = WORD.search(text, match.end(), match.end() + MAX_QUERY_CHARS) is not None
            return ClippedQuery(head[: match.end()], words, cut_words=rest)
    return ClippedQuery(head, words, cut_chars=len(text) > MAX_QUERY_CHARS)
