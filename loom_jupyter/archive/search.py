"""Full-text search over turns: a safe FTS5 query builder and bm25 ranking.

User text never reaches FTS5 syntax: it is cut into word tokens, each token is
quoted as an FTS5 string, and the tokens are OR-joined, so quotes, ``*``,
``NEAR``, ``AND``/``OR``/``NOT``, parentheses, colons and hyphens are plain
words (or separators) and no input raises an FTS syntax error. Ranking is
bm25 (more matching, rarer words rank higher); ties go to the newest turn.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, cast

from loom_jupyter.archive.records import SearchHit

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.archive.db import Tx
    from loom_jupyter.messages import TurnRole

__all__ = ["MAX_QUERY_TOKENS", "build_match_query", "query_tokens", "search_turns"]

MAX_QUERY_TOKENS = 32
"""Longer queries are cut: a few dozen words already pin a turn down."""

_WORD = re.compile(r"\w+", re.UNICODE)

# Words so common they only slow a query down and blur the ranking; they are
# dropped unless the query has nothing else.
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def query_tokens(text: str) -> list[str]:
    """The distinct search words of ``text``, in order, stopwords dropped when possible."""
    words: list[str] = []
    for match in _WORD.finditer(text.casefold()):
        word = match.group()
        if any(ch.isalnum() for ch in word) and word not in words:
            words.append(word)
    meaningful = [w for w in words if w not in _STOPWORDS]
    return (meaningful or words)[:MAX_QUERY_TOKENS]


def build_match_query(text: str) -> str | None:
    """An FTS5 MATCH expression for any user text, or ``None`` when it has no words."""
    tokens = query_tokens(text)
    if not tokens:
        return None
    # A token holds only word characters, so wrapping it in quotes is a safe FTS5 string.
    return " OR ".join(f'"{token}"' for token in tokens)


async def search_turns(
    db: Tx, *, session_ids: Sequence[str], query: str, limit: int
) -> list[SearchHit]:
    """Turns of ``session_ids`` matching ``query``, best first (bm25, then newest)."""
    match = build_match_query(query)
    if match is None or not session_ids or limit <= 0:
        return []
    marks = ", ".join("?" for _ in session_ids)
    rows = await db.fetchall(
        f"""
        SELECT t.session_id, t.turn_number, t.role, t.content, t.created_at, t.tool_name,
               bm25(turns_fts) AS rank
        FROM turns_fts JOIN conversation_turns AS t ON t.id = turns_fts.rowid
        WHERE turns_fts MATCH ? AND t.session_id IN ({marks})
        ORDER BY rank, t.id DESC
        LIMIT ?
        """,
        [match, *session_ids, limit],
    )
    return [
        SearchHit(
            session_id=row["session_id"],
            turn_number=row["turn_number"],
            role=cast("TurnRole", row["role"]),
            content=row["content"],
            score=-float(row["rank"]),
            created_at=row["created_at"],
            tool_name=row["tool_name"],
        )
        for row in rows
    ]
