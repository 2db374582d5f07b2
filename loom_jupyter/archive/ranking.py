"""Pure ranking logic for archive search: query analysis, FTS5 query text, re-ranking.

The method (measured on LoCoMo by ``benchmarks/recall_locomo.py``):

1. Query words are cut from user text, stopwords dropped; identifier-like compounds
   (``df_sales_2024``, ``sales_2024.csv``) and ``"quoted text"`` also become FTS5
   phrases, so an exact occurrence outranks scattered words.
2. FTS5 bm25 scores each term on the turns that contain it (index-driven), with
   Lucene's always-positive idf in place of FTS5's (which is zero for words in half
   the turns); a turn's score is the sum, scaled by the square root of the share of
   query terms it contains (coordination: one rare word is not the question). A term
   in a thousand turns or more adds just its idf to each turn holding it (bm25 would
   read all its matches; its idf is small and estimated from its newest matches).
3. Conversation context: a turn inherits part of the score of the turns around it,
   halving with each step, the turns before it counting twice as much as the turns
   after it (a reply is explained by what it answers). This finds the turn that
   answers a question even when the words sit in the neighbouring turn.
4. Speakers: when turns start with a ``Name:`` label (a transcript) and the query
   names that speaker (a capitalised word), the name is not used as a search term
   (it matches half the turns) but gives that speaker's turns a x1.3 boost.

Every step is a fixed rule with no per-corpus fitting, so it carries over to
conversations it was not measured on.
"""

from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING

from loom_jupyter.query import WORD as _WORD
from loom_jupyter.query import clip_query

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "CONTEXT_KERNEL",
    "MAX_QUERY_TERMS",
    "SPEAKER_BOOST",
    "STOPWORDS",
    "QueryPlan",
    "TurnKey",
    "all_words",
    "coordination",
    "estimated_frequency",
    "fts_row_count",
    "fts_string",
    "idf_correction",
    "lucene_idf",
    "match_expression",
    "own_scores",
    "plan_query",
    "shortlist",
    "spoken_by",
    "spread_context",
]

MAX_QUERY_TERMS = 32
"""Longer queries are cut: a few dozen words already pin a turn down."""

TurnKey = tuple[str, int]
"""(session id, turn number)."""

CONTEXT_KERNEL: dict[int, float] = {
    0: 1.0,
    1: 0.5,
    2: 0.25,
    3: 0.125,
    -1: 0.25,
    -2: 0.125,
    -3: 0.0625,
}
"""Offset (match turn -> scored turn) to weight: a turn takes 1/2, 1/4, 1/8 of the turns
before it and 1/4, 1/8, 1/16 of the turns after it."""

SPEAKER_BOOST = 0.3
"""Turns by a speaker the query names score this much more (x1.3)."""

# English function words: they match most turns and blur bm25 on short turns.
_STOPWORD_TEXT = """
    a about after again against all am an and any are as at be been before being below
    between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own s same she should so some such t than that
    the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom whose why will
    with would you your yours yourself yourselves
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# Word runs glued by connector punctuation, with no space: identifiers, file names, dates.
# A compound starts only where a word starts (the lookbehind): tried from inside a long
# word, the pattern would re-scan the rest of that word at every position (quadratic).
_COMPOUND = re.compile(r"(?<![^\W_])[^\W_]+(?:[_.\-/\\:@#+]+[^\W_]+)+")
_QUOTED = re.compile(r"\"([^\"]+)\"")


@dataclass(frozen=True)
class QueryPlan:
    """What a query searches for, casefolded: words, multi-word phrases, and the
    capitalised words that may name a speaker."""

    words: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]
    proper: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.words and not self.phrases

    def terms(self, exclude: frozenset[str] = frozenset()) -> list[str]:
        """The FTS5 terms (phrases, then words minus ``exclude``), unquoted."""
        words = [word for word in self.words if word not in exclude]
        return [" ".join(phrase) for phrase in self.phrases] + words


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def all_words(text: str) -> list[str]:
    """Every word of ``text`` in order, casefolded, stopwords kept (as a phrase needs them)."""
    return _words(clip_query(text).text)[:MAX_QUERY_TERMS]


def _distinct(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def plan_query(text: str) -> QueryPlan:
    """Analyse user text (its first words, :func:`clip_query`); stopwords are dropped
    unless the query has nothing else."""
    text = clip_query(text).text
    words = _distinct(_words(text))
    meaningful = [word for word in words if word not in STOPWORDS] or words
    groups = [_words(m.group()) for m in _COMPOUND.finditer(text)]
    groups += [_words(m.group(1)) for m in _QUOTED.finditer(text)]
    phrases = tuple(dict.fromkeys(tuple(g) for g in groups if len(g) > 1))
    budget = MAX_QUERY_TERMS - min(len(phrases), MAX_QUERY_TERMS // 2)
    kept = tuple(meaningful[:budget])
    proper = _distinct(w.casefold() for w in _WORD.findall(text) if w.istitle() and w.isalpha())
    return QueryPlan(kept, phrases[: MAX_QUERY_TERMS // 2], tuple(w for w in proper if w in kept))


def fts_string(term: str) -> str:
    """``term`` as an FTS5 string. A term holds only word characters and spaces, so
    the quoted form is always valid FTS5 and user text never becomes FTS5 syntax."""
    return f'"{term}"'


def match_expression(plan: QueryPlan, exclude: frozenset[str] = frozenset()) -> str | None:
    """An FTS5 MATCH string OR-ing the plan's terms, or ``None`` when there are none."""
    terms = plan.terms(exclude)
    return " OR ".join(fts_string(term) for term in terms) if terms else None


def fts_row_count(averages: bytes) -> int:
    """The row count at the head of an FTS5 "averages" record (an SQLite varint)."""
    value = 0
    for index, byte in enumerate(averages[:9]):
        if index == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value


def lucene_idf(rows: int, matching: int) -> float:
    """Lucene's idf, ln(1 + (N - n + 0.5) / (n + 0.5)): positive for any share of rows."""
    return math.log1p(max(rows - matching + 0.5, 0.5) / (matching + 0.5))


def estimated_frequency(seen: int, oldest: int, newest: int) -> int:
    """Rows holding a term whose ``seen`` newest matches reach back from row id
    ``newest`` to ``oldest``: its share of that stretch of ids, scaled to all of them."""
    return max(seen, round(seen * newest / max(newest - oldest + 1, seen)))


def idf_correction(rows: int, matching: int) -> float:
    """Factor turning FTS5's bm25 for a term into Lucene's bm25.

    FTS5 uses idf = ln((N - n + 0.5) / (n + 0.5)), clamped to 1e-6 when a term is in
    half the rows or more, so in a small archive the words a turn shares with the
    query can count for nothing. Lucene's ln(1 + (N - n + 0.5) / (n + 0.5)) stays
    positive and ranks the same way otherwise.
    """
    odds = max(rows - matching + 0.5, 0.5) / (matching + 0.5)
    fts = math.log(odds) if odds > 1.0 else 0.0
    return lucene_idf(rows, matching) / max(fts, 1e-6)


def coordination(matched: int, terms: int) -> float:
    """The factor for a turn holding ``matched`` of the ``terms`` query terms."""
    return math.sqrt(matched / terms)


def own_scores(
    matches: Iterable[tuple[TurnKey, float]], terms: int, keep: int
) -> dict[TurnKey, float]:
    """The ``keep`` best turns by own score: the sum of their per-term bm25, scaled by
    the root of the share of the ``terms`` query terms they contain (a coordination
    factor: a turn matching one rare word of a long question is not its answer).

    Search computes the same sum in SQL (only the best turns leave SQLite); this is
    the rule in plain Python, for reading and for the tests."""
    total: dict[TurnKey, float] = {}
    count: dict[TurnKey, int] = {}
    for key, score in matches:
        total[key] = total.get(key, 0.0) + score
        count[key] = count.get(key, 0) + 1
    scored = ((key, score * coordination(count[key], terms)) for key, score in total.items())
    return dict(heapq.nlargest(keep, scored, key=itemgetter(1)))


def spoken_by(content: str, speakers: Iterable[str]) -> bool:
    """Whether the turn starts with ``"<speaker>:"`` for one of ``speakers`` (casefolded)."""
    head = content[:64].casefold()
    return any(head.startswith(speaker + ":") for speaker in speakers)


_KERNEL = tuple(CONTEXT_KERNEL.items())


def spread_context(
    scores: Mapping[TurnKey, float], last_turn: Mapping[str, int]
) -> dict[TurnKey, float]:
    """Each turn's own score plus its neighbours' weighted by :data:`CONTEXT_KERNEL`.

    ``last_turn`` maps each session to its newest turn number; turns outside a session
    get nothing.
    """
    spread: dict[TurnKey, float] = {}
    get = spread.get
    for (session_id, number), score in scores.items():
        last = last_turn.get(session_id, number)
        for offset, weight in _KERNEL:
            turn = number + offset
            if 1 <= turn <= last:
                key = (session_id, turn)
                spread[key] = get(key, 0.0) + weight * score
    return spread


def shortlist(scores: Mapping[TurnKey, float], limit: int, boost: float) -> list[TurnKey]:
    """The turns that can still reach the top ``limit`` after a boost of at most ``boost``
    (at most ``4 * limit`` of them; on equal scores the later turn wins)."""
    ordered = heapq.nlargest(4 * limit, scores.items(), key=lambda item: (item[1], item[0][1]))
    if len(ordered) <= limit:
        return [key for key, _ in ordered]
    floor = ordered[limit - 1][1] / (1.0 + boost)
    return [key for key, score in ordered if score >= floor]
