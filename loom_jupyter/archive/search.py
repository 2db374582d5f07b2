"""Full-text search over turns: safe FTS5 queries, per-term bm25, context re-ranking.

User text never reaches FTS5 syntax: it is cut into word tokens and each token (or
identifier phrase) is quoted as an FTS5 string, so quotes, ``*``, ``NEAR``,
``AND``/``OR``/``NOT``, parentheses, colons and hyphens are plain words (or
separators) and no input raises an FTS syntax error. The ranking method is described
in :mod:`loom_jupyter.archive.ranking`; ties go to the newest turn.

Three statements per search, each driven by an index: the sessions' spans of turn
ids (plus which capitalised query words label turns as speakers), each term's bm25
matches within those spans, and the rows of the best re-ranked turns. Turn ids grow
with turn numbers inside a session (appends and forks insert in order), so a
session's turns lie between the ids of its first and last turn: FTS skips other
sessions' rows without reading them, and when no other session's turn lies in the
span (the usual case) the turn number is computed from the id without a table read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from loom_jupyter.archive.ranking import (
    SPEAKER_BOOST,
    QueryPlan,
    TurnKey,
    estimated_frequency,
    fts_row_count,
    fts_string,
    idf_correction,
    lucene_idf,
    match_expression,
    own_scores,
    plan_query,
    shortlist,
    spoken_by,
    spread_context,
)
from loom_jupyter.archive.records import SearchHit

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from loom_jupyter.archive.db import Tx
    from loom_jupyter.messages import TurnRole

__all__ = [
    "CANDIDATES",
    "COMMON_TERM",
    "TERM_MATCHES",
    "build_match_query",
    "query_tokens",
    "search_turns",
]

CANDIDATES = 64
"""Best-matching turns re-ranked with their context; more changes nothing on LoCoMo."""

TERM_MATCHES = 200
"""Per query term, at most this many matching turns (the newest) are scored; only a
very common word in a very long session reaches it."""


COMMON_TERM = 1000
"""A term in this many turns or more is common: its count of turns is estimated from
its newest matches, and it adds its idf to each turn holding it, without bm25's
term-frequency and length weighting (which would read all of its matches)."""


def query_tokens(text: str) -> list[str]:
    """The distinct search words of ``text``, in order, stopwords dropped when possible."""
    return list(plan_query(text).words)


def build_match_query(text: str) -> str | None:
    """An FTS5 MATCH expression for any user text, or ``None`` when it has no words."""
    return match_expression(plan_query(text))


@dataclass(frozen=True)
class _Span:
    """A session's turns: ids ``first..last`` and ``turns`` turns in all."""

    session_id: str
    first: int
    last: int
    turns: int

    @property
    def alone(self) -> bool:
        """No other session's turn lies between its first and last turn."""
        return self.last - self.first + 1 == self.turns


def _sessions(session_ids: Sequence[str]) -> str:
    return "WITH s(id) AS (VALUES " + ", ".join("(?)" for _ in session_ids) + ") "


# Rows of the first statement: (kind, word or session id, first id, last id, turns).
_SPAN = (
    "SELECT 'span', c.id,"
    " (SELECT id FROM conversation_turns WHERE session_id = c.id ORDER BY turn_number LIMIT 1),"
    " (SELECT id FROM conversation_turns WHERE session_id = c.id"
    " ORDER BY turn_number DESC LIMIT 1), c.turn_count"
    " FROM cowork_sessions AS c WHERE c.id IN (SELECT id FROM s) AND c.turn_count > 0"
)
# The CROSS JOINs pin the plans to FTS first: driving from the session index instead
# re-runs the full-text query once per turn (hundreds of times slower).
_JOINED = (
    " FROM turns_fts CROSS JOIN conversation_turns AS t ON t.id = turns_fts.rowid"
    " WHERE turns_fts MATCH ? AND t.session_id IN (SELECT id FROM s)"
)
# Does some turn start with "<word>:"? (A proper word is alphabetic: no LIKE wildcard.)
_SPEAKER = f"SELECT * FROM (SELECT 'speaker', ?, 0, 0, 0{_JOINED} AND t.content LIKE ? LIMIT 1)"

# Rows of the second statement: (kind, term, session id, turn number, value).
# FTS5's own count of rows heads the "averages" record of its data table.
_ROWS = "SELECT 'rows', NULL, NULL, NULL, block FROM turns_fts_data WHERE id = 1"
_TOP = "SELECT 'top', NULL, NULL, NULL, (SELECT max(id) FROM conversation_turns)"
# Each term's newest COMMON_TERM matches in the whole archive: their count, and the
# oldest id they reach. Materialised: the hits read it again.
_PROBE = (
    "SELECT ?, count(*), min(r) FROM (SELECT turns_fts.rowid AS r FROM turns_fts"
    f" WHERE turns_fts MATCH ? ORDER BY turns_fts.rowid DESC LIMIT {COMMON_TERM})"
)
_DF = "SELECT 'df', term, NULL, oldest, seen FROM probe"
# bm25() first counts every row of the term in the archive; for a common term that
# costs more than everything else, so it is left out (NULL) and the term scored by
# presence.
_BM25 = (
    f"CASE WHEN (SELECT seen FROM probe WHERE term = ?) < {COMMON_TERM} THEN bm25(turns_fts) END"
)
_NEWEST = f" ORDER BY turns_fts.rowid DESC LIMIT {TERM_MATCHES})"
_IN_SPAN = " AND turns_fts.rowid BETWEEN ? AND ?"
_HIT_ALONE = (
    f"SELECT * FROM (SELECT 'hit', ?, NULL, turns_fts.rowid - ? + 1, {_BM25}"
    f" FROM turns_fts WHERE turns_fts MATCH ?{_IN_SPAN}{_NEWEST}"
)
_HIT_JOINED = (
    f"SELECT * FROM (SELECT 'hit', ?, t.session_id, t.turn_number, {_BM25}"
    f"{_JOINED}{_IN_SPAN}{_NEWEST}"
)


async def _spans_and_speakers(
    db: Tx, session_ids: Sequence[str], plan: QueryPlan
) -> tuple[list[_Span], frozenset[str]]:
    """The sessions' turn spans, and the query's capitalised words that label turns
    of these sessions as a speaker's (``"Name: ..."``)."""
    params: list[object] = list(session_ids)
    for word in plan.proper:
        params += [word, "^" + fts_string(word), f"{word}:%"]
    branches = [_SPAN] + [_SPEAKER] * len(plan.proper)
    spans: list[_Span] = []
    speakers: set[str] = set()
    for kind, name, first, last, turns in await db.fetchall(
        _sessions(session_ids) + " UNION ALL ".join(branches), params
    ):
        if kind == "span":
            spans.append(_Span(name, first, last, turns))
        else:
            speakers.add(name)
    return spans, frozenset(speakers)


async def _term_matches(
    db: Tx, session_ids: Sequence[str], spans: Sequence[_Span], terms: Sequence[str]
) -> list[tuple[TurnKey, float]]:
    """Every (turn, score) match of each term: bm25 with Lucene's idf."""
    alone = spans[0] if len(spans) == 1 and spans[0].alone else None
    low, high = min(s.first for s in spans), max(s.last for s in spans)
    params: list[object] = list(session_ids)
    for term in terms:
        params += [term, fts_string(term)]
    for term in terms:
        params += [term] if alone is None else [term, alone.first]
        params += [term, fts_string(term), low, high]
    hit = _HIT_JOINED if alone is None else _HIT_ALONE
    probes = " UNION ALL ".join([_PROBE] * len(terms))
    sql = (
        _sessions(session_ids)[:-1]
        + f", probe(term, seen, oldest) AS MATERIALIZED ({probes}) "
        + " UNION ALL ".join([_ROWS, _TOP, _DF] + [hit] * len(terms))
    )
    total = newest = 0
    probed: dict[str, tuple[int, int]] = {}
    hits: list[tuple[str, TurnKey, float | None]] = []
    for kind, term, session_id, number, value in await db.fetchall(sql, params):
        if kind == "hit":
            hits.append((term, (session_id or spans[0].session_id, number), value))
        elif kind == "df":
            probed[term] = (value, number or 0)
        elif kind == "top":
            newest = value or 0
        else:
            total = fts_row_count(value)
    frequency = {
        term: seen if seen < COMMON_TERM else estimated_frequency(seen, oldest, newest)
        for term, (seen, oldest) in probed.items()
    }
    # The record is written at commit; never let it claim fewer rows than a term matches.
    total = max([total, *frequency.values()])
    # FTS5's bm25() is negative (lower is better); a common term (no bm25) counts its
    # idf once per turn.
    weight = {term: idf_correction(total, count) for term, count in frequency.items()}
    idf = {term: lucene_idf(total, count) for term, count in frequency.items()}
    return [(key, idf[term] if bm25 is None else -bm25 * weight[term]) for term, key, bm25 in hits]


async def _turn_rows(db: Tx, keys: Sequence[TurnKey]) -> list[sqlite3.Row]:
    if not keys:
        return []
    pairs = ", ".join("(?, ?)" for _ in keys)
    # Driving from the key list keeps every lookup on the (session_id, turn_number) index.
    return await db.fetchall(
        "SELECT t.id, t.session_id, t.turn_number, t.role, t.content, t.created_at, t.tool_name"
        f" FROM (VALUES {pairs}) AS k CROSS JOIN conversation_turns AS t"
        " ON t.session_id = k.column1 AND t.turn_number = k.column2",
        [value for key in keys for value in key],
    )


def _hit(row: sqlite3.Row, score: float) -> SearchHit:
    return SearchHit(
        session_id=row["session_id"],
        turn_number=row["turn_number"],
        role=cast("TurnRole", row["role"]),
        content=row["content"],
        score=score,
        created_at=row["created_at"],
        tool_name=row["tool_name"],
    )


async def search_turns(
    db: Tx, *, session_ids: Sequence[str], query: str, limit: int
) -> list[SearchHit]:
    """Turns of ``session_ids`` best answering ``query``, best first (then newest)."""
    plan = plan_query(query)
    if plan.empty or not session_ids or limit <= 0:
        return []
    spans, speakers = await _spans_and_speakers(db, session_ids, plan)
    if not spans:
        return []
    # A speaker's name labels half the turns: it steers by a boost, not as a term,
    # unless the query has nothing else.
    terms = plan.terms(speakers) or plan.terms()
    matches = await _term_matches(db, session_ids, spans, terms)
    last_turn = {span.session_id: span.turns for span in spans}
    scores = spread_context(own_scores(matches, len(terms), CANDIDATES), last_turn)
    boost = SPEAKER_BOOST if speakers else 0.0
    ranked: list[tuple[float, int, sqlite3.Row]] = []
    for row in await _turn_rows(db, shortlist(scores, limit, boost)):
        score = scores[(row["session_id"], row["turn_number"])]
        if spoken_by(row["content"], speakers):
            score *= 1.0 + boost
        ranked.append((score, row["id"], row))
    ranked.sort(key=lambda item: (-item[0], -item[1]))
    return [_hit(row, score) for score, _, row in ranked[:limit]]
