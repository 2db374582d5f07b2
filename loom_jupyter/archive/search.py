"""Full-text search over turns: safe FTS5 queries, per-term bm25, context re-ranking.

User text never reaches FTS5 syntax: it is cut into word tokens and each token (or
identifier phrase) is quoted as an FTS5 string, so quotes, ``*``, ``NEAR``,
``AND``/``OR``/``NOT``, parentheses, colons and hyphens are plain words (or
separators) and no input raises an FTS syntax error. The ranking method is described
in :mod:`loom_jupyter.archive.ranking`; ties go to the newest turn.

Three statements per search, each driven by an index, their work bounded however
large the archive grows: (1) the sessions' spans of turn ids, which capitalised query
words label turns as speakers, and each term's newest matches in the whole archive
(how common it is); (2) each term's newest matches inside the spans, scored and
summed per turn in SQL so only the best :data:`CANDIDATES` turns come back; (3) the
rows of the best re-ranked turns. Turn ids grow with turn numbers inside a session
(appends and forks insert in order), so a session's turns lie between the ids of its
first and last turn and FTS5 skips other sessions' rows without reading them; when
no other session's turn lies in the span (the usual case) no table is joined.

bm25() counts every match of its term in the archive before scoring the first row,
so a term in :data:`COMMON_TERM` turns or more skips it: its count is estimated from
its newest matches and it adds its (small) idf to each turn holding it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from loom_jupyter.archive.ranking import (
    SPEAKER_BOOST,
    QueryPlan,
    TurnKey,
    coordination,
    estimated_frequency,
    fts_row_count,
    fts_string,
    idf_correction,
    lucene_idf,
    match_expression,
    plan_query,
    shortlist,
    spoken_by,
    spread_context,
)
from loom_jupyter.archive.session_live import turn_count
from loom_jupyter.records import SearchHit

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


@dataclass(frozen=True)
class _Survey:
    """What the first statement learns: the sessions' spans, the speakers the query
    names, the archive's row count and newest id, and each term's probe."""

    spans: list[_Span]
    speakers: frozenset[str]
    rows: int
    newest: int
    probes: dict[str, tuple[int, int]]

    def frequency(self, term: str) -> int:
        """Turns holding ``term``: counted when rare, estimated when common."""
        seen, oldest = self.probes[term]
        return seen if seen < COMMON_TERM else estimated_frequency(seen, oldest, self.newest)


def _sessions(session_ids: Sequence[str]) -> str:
    return "WITH s(id) AS (VALUES " + ", ".join("(?)" for _ in session_ids) + ") "


# Rows of the first statement: (kind, name, a, b, c).
_SPAN = (
    "SELECT * FROM (SELECT 'span', c.id,"
    " (SELECT id FROM conversation_turns WHERE session_id = c.id ORDER BY turn_number LIMIT 1),"
    " (SELECT id FROM conversation_turns WHERE session_id = c.id"
    f" ORDER BY turn_number DESC LIMIT 1) AS last, {turn_count('c')}"
    " FROM cowork_sessions AS c WHERE c.id IN (SELECT id FROM s)) WHERE last IS NOT NULL"
)
# The CROSS JOINs pin the plans to FTS first: driving from the session index instead
# re-runs the full-text query once per turn (hundreds of times slower).
_JOINED = (
    " FROM turns_fts CROSS JOIN conversation_turns AS t ON t.id = turns_fts.rowid"
    " WHERE turns_fts MATCH ? AND t.session_id IN (SELECT id FROM s)"
)
# Does some turn start with "<word>:"? (A proper word is alphabetic: no LIKE wildcard.)
_SPEAKER = f"SELECT * FROM (SELECT 'speaker', ?, 0, 0, 0{_JOINED} AND t.content LIKE ? LIMIT 1)"
# FTS5's own count of rows heads the "averages" record of its data table.
_ROWS = "SELECT 'rows', NULL, NULL, NULL, block FROM turns_fts_data WHERE id = 1"
_TOP = "SELECT 'top', NULL, NULL, NULL, (SELECT max(id) FROM conversation_turns)"
# A term's newest COMMON_TERM matches in the whole archive: their count, and the
# oldest id they reach; work bounded however common the term is.
_PROBE = (
    "SELECT 'probe', ?, count(*), min(r), 0 FROM (SELECT turns_fts.rowid AS r FROM turns_fts"
    f" WHERE turns_fts MATCH ? ORDER BY turns_fts.rowid DESC LIMIT {COMMON_TERM})"
)

# The second statement scores each term's newest matches in the sessions' id span and
# sums them per turn in SQL, so only the CANDIDATES best turns come back. bm25() first
# counts every row of its term in the archive, so common terms are scored by presence.
_NEWEST = (
    f" AND turns_fts.rowid BETWEEN ? AND ? ORDER BY turns_fts.rowid DESC LIMIT {TERM_MATCHES})"
)
# When the sessions' turns fill their span, the span alone selects them: no join.
_ALONE = " FROM turns_fts WHERE turns_fts MATCH ?"
_BM25 = "SELECT * FROM (SELECT turns_fts.rowid, bm25(turns_fts) * ?"
_PRESENCE = "SELECT * FROM (SELECT turns_fts.rowid, ?"
_BEST = (
    "SELECT t.session_id, t.turn_number, g.own FROM (SELECT id, total * CASE matched {shares}"
    " END AS own FROM (SELECT id, sum(score) AS total, count(*) AS matched FROM hit GROUP BY id)"
    f" ORDER BY own DESC, id DESC LIMIT {CANDIDATES}) AS g"
    " CROSS JOIN conversation_turns AS t ON t.id = g.id"
)


async def _survey(db: Tx, session_ids: Sequence[str], plan: QueryPlan) -> _Survey:
    """The sessions' spans, the query's capitalised words that label turns of these
    sessions as a speaker's (``"Name: ..."``), and the statistics of every term."""
    params: list[object] = list(session_ids)
    for word in plan.proper:
        params += [word, "^" + fts_string(word), f"{word}:%"]
    terms = plan.terms()
    for term in terms:
        params += [term, fts_string(term)]
    branches = [_SPAN, _ROWS, _TOP] + [_SPEAKER] * len(plan.proper) + [_PROBE] * len(terms)
    spans: list[_Span] = []
    speakers: set[str] = set()
    rows = newest = 0
    probes: dict[str, tuple[int, int]] = {}
    for kind, name, a, b, c in await db.fetchall(
        _sessions(session_ids) + " UNION ALL ".join(branches), params
    ):
        if kind == "span":
            spans.append(_Span(name, a, b, c))
        elif kind == "speaker":
            speakers.add(name)
        elif kind == "probe":
            probes[name] = (a, b or 0)
        elif kind == "top":
            newest = c or 0
        else:
            rows = fts_row_count(c)
    # The record is written at commit; never let it claim fewer rows than a term matches.
    rows = max([rows, *(seen for seen, _ in probes.values())])
    return _Survey(spans, frozenset(speakers), rows, newest, probes)


async def _best_turns(
    db: Tx, session_ids: Sequence[str], survey: _Survey, terms: Sequence[str]
) -> dict[TurnKey, float]:
    """The :data:`CANDIDATES` best turns by own score (:func:`own_scores`, in SQL)."""
    low = min(span.first for span in survey.spans)
    high = max(span.last for span in survey.spans)
    # Every id in the span is one of these sessions' turns: no other turn lies inside.
    alone = sum(span.turns for span in survey.spans) == high - low + 1
    source = _ALONE if alone else _JOINED
    params: list[object] = list(session_ids)
    branches: list[str] = []
    for term in terms:
        count = min(survey.frequency(term), survey.rows)
        if survey.probes[term][0] < COMMON_TERM:
            # FTS5's bm25() is negative (lower is better).
            params.append(-idf_correction(survey.rows, count))
            branches.append(_BM25 + source + _NEWEST)
        else:
            params.append(lucene_idf(survey.rows, count))
            branches.append(_PRESENCE + source + _NEWEST)
        params += [fts_string(term), low, high]
    shares = " ".join(f"WHEN {n} THEN ?" for n in range(1, len(terms) + 1))
    params += [coordination(n, len(terms)) for n in range(1, len(terms) + 1)]
    sql = (
        _sessions(session_ids)[:-1]
        + f", hit(id, score) AS ({' UNION ALL '.join(branches)}) "
        + _BEST.format(shares=shares)
    )
    return {(sid, number): own for sid, number, own in await db.fetchall(sql, params)}


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


def _at_or_after(key: TurnKey, cut: TurnKey) -> bool:
    return key[0] == cut[0] and key[1] >= cut[1]


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
    db: Tx,
    *,
    session_ids: Sequence[str],
    query: str,
    limit: int,
    before: TurnKey | None = None,
) -> list[SearchHit]:
    """Turns of ``session_ids`` best answering ``query``, best first (then newest);
    ``before`` = (session, turn) leaves out that session's turns from that turn on."""
    plan = plan_query(query)
    if plan.empty or not session_ids or limit <= 0:
        return []
    survey = await _survey(db, session_ids, plan)
    if not survey.spans:
        return []
    # A speaker's name labels half the turns: it steers by a boost, not as a term,
    # unless the query has nothing else.
    speakers = survey.speakers
    terms = plan.terms(speakers) or plan.terms()
    last_turn = {span.session_id: span.turns for span in survey.spans}
    scores = spread_context(await _best_turns(db, session_ids, survey, terms), last_turn)
    if before is not None:
        scores = {key: score for key, score in scores.items() if not _at_or_after(key, before)}
    boost = SPEAKER_BOOST if speakers else 0.0
    ranked: list[tuple[float, int, sqlite3.Row]] = []
    for row in await _turn_rows(db, shortlist(scores, limit, boost)):
        score = scores[(row["session_id"], row["turn_number"])]
        if spoken_by(row["content"], speakers):
            score *= 1.0 + boost
        ranked.append((score, row["id"], row))
    ranked.sort(key=lambda item: (-item[0], -item[1]))
    return [_hit(row, score) for score, _, row in ranked[:limit]]
