"""Search for people: turns that say what was asked, best kind of match first.

The model's recall (:mod:`loom_jupyter.archive.search`) ranks turns by their own
score plus their neighbours', which finds the answer next to the question. A
person reading a list wants something else: only turns that contain the words,
the exact phrase before the same words scattered, all words before some, and
the turns around a match shown under it as context, not as hits of their own.

Each kind of match is one FTS5 query (the phrase of every query word; every
word; any meaningful word: stopwords count in the first two only), bm25-ordered and bounded by
``LIMIT``; a turn keeps its best kind. This is what ``%cowork search``, the CLI
and the sidebar show (:func:`search_for_people`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.archive.ranking import all_words, fts_string, plan_query

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.archive.core import Archive
    from loom_jupyter.archive.db import Tx
    from loom_jupyter.messages import Turn

__all__ = [
    "MatchKind",
    "ReadableMatch",
    "match_expressions",
    "search_for_people",
    "with_notebook",
]

MatchKind = Literal["phrase", "all_words", "some_words"]
_KINDS: tuple[MatchKind, ...] = ("phrase", "all_words", "some_words")


@dataclass(frozen=True, kw_only=True)
class ReadableMatch:
    """A turn that matches, what kind of match it is, and the turns around it."""

    turn: Turn
    kind: MatchKind
    before: Turn | None = None
    after: Turn | None = None
    notebook: str | None = None  # set by a project-wide search

    @property
    def session_id(self) -> str:
        return self.turn.session_id

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form (for the sidebar): the match and its context turns."""
        return {
            "notebook": self.notebook,
            "session_id": self.turn.session_id,
            "kind": self.kind,
            "match": _turn_json(self.turn),
            "before": _turn_json(self.before) if self.before else None,
            "after": _turn_json(self.after) if self.after else None,
        }


def _turn_json(turn: Turn) -> dict[str, Any]:
    return {
        "turn_number": turn.turn_number,
        "role": turn.role,
        "tool_name": turn.tool_name,
        "content": turn.content,
        "created_at": turn.created_at,
    }


def match_expressions(query: str) -> list[tuple[MatchKind, str]]:
    """The FTS5 expression of each kind of match ``query`` can have, best kind first.

    Every word is quoted as an FTS5 string, so user text never becomes FTS5 syntax.
    """
    plan = plan_query(query)
    if plan.empty:
        return []
    every = all_words(query)
    distinct = list(dict.fromkeys(every))
    if len(distinct) == 1:  # one word: a turn that holds it holds the whole query
        return [("phrase", fts_string(distinct[0]))]
    kinds: list[tuple[MatchKind, str]] = []
    if len(every) > 1:
        kinds.append(("phrase", fts_string(" ".join(every))))
    if len(distinct) > 1:  # stopwords too: "most units" means both words
        kinds.append(("all_words", " AND ".join(fts_string(w) for w in distinct)))
    kinds.append(("some_words", " OR ".join(fts_string(t) for t in plan.terms())))
    return kinds


_MATCHES = (
    "SELECT t.session_id, t.turn_number FROM turns_fts"
    " CROSS JOIN conversation_turns AS t ON t.id = turns_fts.rowid"
    " WHERE turns_fts MATCH ? AND t.session_id IN ({ids})"
    " ORDER BY bm25(turns_fts), t.id DESC LIMIT ?"
)


async def _ranked_keys(
    db: Tx, session_ids: Sequence[str], query: str, limit: int
) -> list[tuple[tuple[str, int], MatchKind]]:
    """(session, turn) of the best matches, each with its best kind, in display order."""
    seen: dict[tuple[str, int], MatchKind] = {}
    sql = _MATCHES.format(ids=", ".join("?" for _ in session_ids))
    for kind, expression in match_expressions(query):
        if len(seen) >= limit:
            break
        for row in await db.fetchall(sql, [expression, *session_ids, limit]):
            seen.setdefault((row[0], row[1]), kind)
    ordered = sorted(seen.items(), key=lambda item: _KINDS.index(item[1]))
    return ordered[:limit]


async def search_for_people(
    archive: Archive,
    query: str,
    *,
    session_id: str | None = None,
    limit: int = 10,
) -> list[ReadableMatch]:
    """Matches for ``query`` in one session (``session_id``) or every session of the archive.

    Only turns containing the words come back: the exact phrase first, then all
    words, then some; best bm25 then newest inside each kind; each with the turn
    before and after it as context.
    """
    if session_id is not None:
        ids = [session_id]
    else:
        ids = [s.id for s in await archive.list_sessions(limit=1_000_000)]
    if not ids or limit <= 0:
        return []
    await archive.index_for_search()
    matches = []
    for (sid, number), kind in await _ranked_keys(archive._db, ids, query, limit):
        turns = {t.turn_number: t for t in await archive.get_turns(sid, number - 1, number + 1)}
        if number in turns:
            matches.append(
                ReadableMatch(
                    turn=turns[number],
                    kind=kind,
                    before=turns.get(number - 1),
                    after=turns.get(number + 1),
                )
            )
    return matches


def with_notebook(matches: Sequence[ReadableMatch], notebook: str) -> list[ReadableMatch]:
    """The same matches, labelled with the notebook they came from."""
    return [replace(m, notebook=notebook) for m in matches]
