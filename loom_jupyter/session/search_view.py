"""Search results as text a person reads (``%cowork search`` and ``loom-jupyter search``).

One numbered entry per match, the kind of match named, a window of the turn
around the first query word, and the turns before and after it indented under
it as context (they are not hits of their own).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from loom_jupyter.query import clip_query

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.archive.readable import MatchKind, ReadableMatch
    from loom_jupyter.messages import Turn

__all__ = ["render_matches"]

_KIND_TEXT: dict[MatchKind, str] = {
    "phrase": "exact phrase",
    "all_words": "all words",
    "some_words": "some words",
}
_MATCH_WIDTH = 160
_CONTEXT_WIDTH = 100


def render_matches(
    matches: Sequence[ReadableMatch], query: str, *, where: str, notes: Sequence[str] = ()
) -> str:
    """The whole result: a heading line, then each match with its context (the query
    shown and highlighted as far as it was searched, :func:`clip_query`)."""
    clipped = clip_query(query)
    query = clipped.text
    if not matches:
        text = f"No turns in {where} match {_shown(query)}."
    else:
        kinds = ", ".join(
            f"{sum(m.kind == k for m in matches)} {_label(k, query)}"
            for k in _KIND_TEXT
            if any(m.kind == k for m in matches)
        )
        entries = [_entry(n, m, query) for n, m in enumerate(matches, 1)]
        heading = f"{len(matches)} match(es) for {_shown(query)} in {where} ({kinds}):"
        text = heading + "\n\n" + "\n\n".join(entries)
    if notes:
        text += "\n\n" + "\n".join(f"(not searched: {note})" for note in notes)
    if clipped.note:
        text += f"\n\n(The query is long: {clipped.note} of it.)"
    return text


def _label(kind: MatchKind, query: str) -> str:
    """How a turn matched, in words: a one-word query's hit is its "exact word"."""
    from loom_jupyter.archive.ranking import all_words

    if kind == "phrase" and len(set(all_words(query))) == 1:
        return "exact word"
    return _KIND_TEXT[kind]


def _shown(query: str, width: int = 80) -> str:
    """The query as the heading quotes it: whole when short, else its start."""
    return repr(query if len(query) <= width else query[: width - 1] + "…")


def _entry(number: int, match: ReadableMatch, query: str) -> str:
    turn = match.turn
    place = f"{match.notebook} · " if match.notebook else ""
    head = (
        f"{number}. {place}session {turn.session_id[:8]} · turn {turn.turn_number} · "
        f"{_who(turn)} · {_when(turn.created_at)} · {_label(match.kind, query)}"
    )
    lines = [head, f"   {snippet(turn.content, query, _MATCH_WIDTH)}"]
    for label, near in (("before", match.before), ("after", match.after)):
        if near is not None:
            text = snippet(near.content, query, _CONTEXT_WIDTH)
            lines.append(f"     {label}: turn {near.turn_number} {_who(near)}: {text}")
    return "\n".join(lines)


def _who(turn: Turn) -> str:
    return f"tool {turn.tool_name}" if turn.role == "tool" and turn.tool_name else turn.role


def _when(stamp: str) -> str:
    return stamp[:16].replace("T", " ") if stamp else "?"


def snippet(content: str, query: str, width: int) -> str:
    """One line of ``content`` around the first query word it holds."""
    text = " ".join(content.split()) or "(no text)"
    lowered = text.casefold()
    words = [w for w in re.findall(r"\w+", query.casefold()) if len(w) > 1]
    at = min((i for w in words if (i := lowered.find(w)) >= 0), default=0)
    start = max(0, at - width // 3)
    piece = text[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")
