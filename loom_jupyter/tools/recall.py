"""``conversation_recall``: the agent's way back into the archive.

The context window holds only recent turns; everything older is in the
notebook's SQLite archive. Actions (pinned): ``search`` (ranked hits with one
turn of context on each side; ``scope`` ``session``, ``notebook`` or
``all_notebooks`` of the project), ``range`` (turns start..end), ``tool_calls``
(past calls of a tool: input and result preview) and ``summary`` (the session
state block and usage figures). Output stays within
``settings.recall_output_tokens`` (see :mod:`loom_jupyter.tools.recall_render`).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from loom_jupyter.errors import ToolError
from loom_jupyter.messages import ToolSpec
from loom_jupyter.query import ClippedQuery, clip_query
from loom_jupyter.tools.base import ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.recall_input import RecallInput
from loom_jupyter.tools.recall_render import (
    RecallEntry,
    entry_from_turn,
    render_within_budget,
    shorten_text,
)
from loom_jupyter.tools.recall_tasks import task_transcript
from loom_jupyter.tools.schema import input_schema

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.readers import ArchiveReader, ProjectReader
    from loom_jupyter.records import ProjectHit, ProjectSearch, SearchHit, ToolCall
    from loom_jupyter.tools.recall_render import Rendered

__all__ = ["ConversationRecall", "RecallInput"]

_CHARS_PER_TOKEN = 4
_RANGE_DEFAULT = 10  # turns shown when only one end of a range is given
_RANGE_MAX = 200
_RESULT_PREVIEW = 1500  # characters of each past tool result in action=tool_calls
_INPUT_PREVIEW = 600
_NOTES_RESERVE = 400  # characters kept for the header line and the "what was cut" notes


class ConversationRecall(TypedTool[RecallInput]):
    """``conversation_recall`` over the session's archive (pinned name and input)."""

    input_type = RecallInput
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="conversation_recall",
        description=(
            "Look back in this conversation's full archive (older turns are not in your context). "
            "action=search: ranked matches for `query` with one turn of context each side; "
            "scope=session (default: this conversation), notebook (every session of this "
            "notebook) or all_notebooks (every notebook of the project; hits name their notebook "
            "and session); action=range: turns "
            "start_turn..end_turn verbatim; action=tool_calls: past calls of `tool_name` (or of "
            "any tool) with input and result; action=summary: session state and usage. "
            "Output is compact ([Turn 12] user: ...) and cut to a budget, saying what was cut. "
            "task_id (a delegation's id from its digest): its subtasks; with subtask=ID, that "
            "subtask's transcript (start_turn/end_turn as for range)."
        ),
        input_schema=input_schema(RecallInput),
    )

    async def run(self, args: RecallInput, ctx: ToolContext) -> ToolOutput:
        """Dispatch on ``action``."""
        action = args.action
        if action == "summary":
            return await _summary(ctx)
        if action == "search" and args.scope == "all_notebooks":
            return await _search_project(_require_project(ctx), args, ctx)
        archive, session_id = _require_archive(ctx)
        if args.task_id:
            return await task_transcript(archive, session_id, args, ctx, _range)
        if action == "search":
            return await _search(archive, session_id, args, ctx)
        if action == "range":
            return await _range(archive, session_id, args, ctx)
        return await _tool_calls(archive, session_id, args, ctx)


def _require_archive(ctx: ToolContext) -> tuple[ArchiveReader, str]:
    if ctx.archive is None or ctx.session_id is None:
        raise ToolError(
            "There is no conversation archive for this session yet, so there is nothing to recall."
        )
    return ctx.archive, ctx.session_id


def _require_project(ctx: ToolContext) -> ProjectReader:
    if ctx.project is None:
        raise ToolError(
            "Searching other notebooks is not available here (no project folder is known); "
            "use scope=notebook or scope=session."
        )
    return ctx.project


def _budget(ctx: ToolContext) -> int:
    """Characters for the rendered turns; the header and cut notes fit in the reserve."""
    return max(ctx.settings.recall_output_tokens * _CHARS_PER_TOKEN - _NOTES_RESERVE, 200)


def _footer(rendered: Rendered, dropped_what: str) -> str:
    notes: list[str] = []
    if rendered.shortened_tool:
        notes.append(f"{rendered.shortened_tool} tool result(s) shortened")
    if rendered.shortened_text:
        notes.append(f"{rendered.shortened_text} message(s) shortened")
    if rendered.dropped_groups:
        notes.append(f"{rendered.dropped_groups} {dropped_what} not shown")
    if not notes:
        return ""
    return (
        "\n\n[Cut to fit the recall budget: " + "; ".join(notes) + ". Fetch a turn in full "
        "with action=range, start_turn=N, end_turn=N.]"
    )


# --- search -----------------------------------------------------------------


async def _search(
    archive: ArchiveReader, session_id: str, args: RecallInput, ctx: ToolContext
) -> ToolOutput:
    clipped = _query(args)
    query = clipped.text
    all_sessions = args.scope == "notebook" or args.all_sessions
    limit = args.hits
    hits = await archive.search(
        session_id, query, limit, all_sessions=all_sessions, before_turn=ctx.asked_at
    )
    if not hits:
        where = "any session of this notebook" if all_sessions else "this conversation"
        text = f"No matches for {_shown(query)} in {where}." + _clip_note(clipped)
        return ToolOutput.text(text, summary="no matches")
    groups = await _hit_groups(archive, session_id, hits, _query_words(query), ctx.asked_at)
    rendered = render_within_budget(groups, _budget(ctx))
    head = (
        f"{len(hits)} ranked hit(s) for {_shown(query)}, best first, with one turn of context "
        "each side; (match) marks turns containing a query word:\n\n"
    )
    text = head + rendered.text + _footer(rendered, "lower-ranked hit group(s)")
    text += _clip_note(clipped)
    return ToolOutput.text(text, summary=f"recall search: {len(hits)} hits")


def _query(args: RecallInput) -> ClippedQuery:
    """The searched part of ``query`` (its first words); an error when it has no text."""
    clipped = clip_query(args.query or "")
    if not clipped.text.strip():
        raise ToolError("action=search needs a `query` (words to look for).")
    return clipped


def _shown(query: str, width: int = 120) -> str:
    return repr(query if len(query) <= width else query[: width - 1] + "…")


def _clip_note(clipped: ClippedQuery) -> str:
    return f"\n\n[The query is long: {clipped.note} of it.]" if clipped.note else ""


@dataclass
class _Window:
    """Turns lo..hi of one session around one or more hits (internal, built then read)."""

    session_id: str
    lo: int
    hi: int

    def touches(self, other: _Window) -> bool:
        same = self.session_id == other.session_id
        return same and other.lo <= self.hi + 1 and other.hi >= self.lo - 1

    def absorb(self, other: _Window) -> None:
        self.lo, self.hi = min(self.lo, other.lo), max(self.hi, other.hi)


def _windows(hits: Sequence[SearchHit], asked: tuple[str, int] | None) -> list[_Window]:
    """Per hit (best first) turns hit-1..hit+1; overlapping or adjacent windows are merged
    into the better-ranked one, so no turn is shown twice. ``asked`` = (session, turn):
    the question being answered, never shown (the model has it in view)."""
    windows: list[_Window] = []
    for hit in hits:
        last = hit.turn_number + 1
        if asked is not None and hit.session_id == asked[0]:
            last = min(last, asked[1] - 1)
        new = _Window(hit.session_id, max(1, hit.turn_number - 1), last)
        touching = [w for w in windows if w.touches(new)]
        if not touching:
            windows.append(new)
            continue
        keep = touching[0]
        keep.absorb(new)
        for other in touching[1:]:
            keep.absorb(other)
            windows.remove(other)
    return windows


def _query_words(query: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"\w+", query.lower()) if len(w) > 2 or w.isdigit())


def _mentions(text: str, words: frozenset[str]) -> bool:
    """Whether ``text`` holds a query word. The archive also ranks the neighbours of
    matching turns, so "(match)" marks only the turns with literal evidence."""
    return not words.isdisjoint(re.findall(r"\w+", text.lower()))


async def _hit_groups(
    archive: ArchiveReader,
    session_id: str,
    hits: Sequence[SearchHit],
    words: frozenset[str],
    asked_at: int | None,
) -> list[list[RecallEntry]]:
    windows = _windows(hits, None if asked_at is None else (session_id, asked_at))
    fetched = await asyncio.gather(*(archive.get_turns(w.session_id, w.lo, w.hi) for w in windows))
    groups: list[list[RecallEntry]] = []
    for window, turns in zip(windows, fetched, strict=True):
        sid = window.session_id
        tag = "" if sid == session_id else f"Session {sid[:8]}"
        entries = [
            entry_from_turn(t, session_tag=tag, match=_mentions(t.content, words)) for t in turns
        ]
        if entries:
            groups.append(entries)
    return groups


async def _search_project(
    project: ProjectReader, args: RecallInput, ctx: ToolContext
) -> ToolOutput:
    clipped = _query(args)
    query = clipped.text
    asked = (ctx.session_id, ctx.asked_at) if ctx.session_id and ctx.asked_at else None
    found = await project.search_project(query, args.hits, before=asked)
    words = _query_words(query)
    groups = [_project_group(hit, words) for hit in found.hits]
    rendered = render_within_budget([g for g in groups if g], _budget(ctx))
    head = (
        f"{len(found.hits)} ranked hit(s) for {_shown(query)} across {found.archives} notebook "
        "archive(s) of the project, best first; each names its notebook and session:\n\n"
    )
    if not found.hits:
        head = (
            f"No matches for {_shown(query)} in the {found.archives} notebook archive(s) searched."
        )
    text = head + rendered.text + _footer(rendered, "lower-ranked hit group(s)")
    text += _skipped_note(found) + _clip_note(clipped)
    return ToolOutput.text(text, summary=f"recall project search: {len(found.hits)} hits")


def _project_group(found: ProjectHit, words: frozenset[str]) -> list[RecallEntry]:
    title = f" ({found.session_title[:60]})" if found.session_title else ""
    tag = f"{found.notebook} · session {found.session_id[:8]}{title} ·"
    return [
        entry_from_turn(t, session_tag=tag, match=_mentions(t.content, words))
        for t in found.context
    ]


def _skipped_note(found: ProjectSearch) -> str:
    if not found.skipped:
        return ""
    return "\n\n[Not searched: " + "; ".join(found.skipped) + "]"


# --- range ------------------------------------------------------------------


def _range_bounds(args: RecallInput, last: int) -> tuple[int, int]:
    given_start, given_end = args.start_turn, args.end_turn
    if given_end is not None:
        start = given_start if given_start is not None else max(1, given_end - _RANGE_DEFAULT + 1)
        end = given_end
    elif given_start is not None:
        start, end = given_start, given_start + _RANGE_DEFAULT - 1
    else:
        raise ToolError(
            f"action=range needs start_turn and/or end_turn (this conversation has {last} turns)."
        )
    if end < start:
        raise ToolError(f"end_turn ({end}) is before start_turn ({start}).")
    if start > last:
        raise ToolError(f"This conversation has {last} turns; start_turn {start} is past the end.")
    return start, min(end, last, start + _RANGE_MAX - 1)


async def _range(
    archive: ArchiveReader, session_id: str, args: RecallInput, ctx: ToolContext
) -> ToolOutput:
    start, end = _range_bounds(args, await archive.last_turn_number(session_id))
    turns = await archive.get_turns(session_id, start, end)
    groups = [[entry_from_turn(t)] for t in turns]  # one group per turn: drops cut from the end
    rendered = render_within_budget(groups, _budget(ctx))
    shown_end = end - rendered.dropped_groups
    text = f"Turns {start}-{shown_end}:\n\n{rendered.text}" + _footer(rendered, "turn(s)")
    if rendered.dropped_groups:
        rest = shown_end + 1
        text += f"\n[Turns {rest}-{end} did not fit: continue with start_turn={rest}.]"
    return ToolOutput.text(text, summary=f"recall turns {start}-{shown_end}")


# --- tool calls ---------------------------------------------------------------


async def _tool_calls(
    archive: ArchiveReader, session_id: str, args: RecallInput, ctx: ToolContext
) -> ToolOutput:
    name = args.tool_name
    calls = await archive.tool_calls(session_id, tool_name=name, limit=args.hits)
    what = f"{name} calls" if name else "tool calls"
    if not calls:
        return ToolOutput.text(f"No past {what} in this conversation.", summary=f"no {what}")
    groups = [[_call_entry(call)] for call in calls]
    rendered = render_within_budget(groups, _budget(ctx))
    head = f"{len(calls)} most recent {what}, newest first:\n\n"
    text = head + rendered.text + _footer(rendered, "older call(s)")
    return ToolOutput.text(text, summary=f"recall {len(calls)} {what}")


def _call_entry(call: ToolCall) -> RecallEntry:
    arguments = json.dumps(dict(call.tool_input or {}), ensure_ascii=False, default=str)
    status = " (error)" if call.is_error else ""
    result = shorten_text(call.content.strip(), _RESULT_PREVIEW)
    text = f"input={shorten_text(arguments, _INPUT_PREVIEW)}\nresult: {result}"
    cut = max(len(call.content.strip()) - len(result), 0)
    return RecallEntry(call.turn_number, "tool", f"{call.tool_name}{status}", text, cut=cut)


# --- summary ------------------------------------------------------------------


async def _summary(ctx: ToolContext) -> ToolOutput:
    parts: list[str] = []
    if ctx.session_summary is not None:
        parts.append(await ctx.session_summary())
    if ctx.archive is not None and ctx.session_id is not None:
        parts.append(await _stats(ctx.archive, ctx.session_id))
    if not parts:
        raise ToolError("There is no session state or archive yet; nothing to summarise.")
    text = "\n\n".join(p.strip() for p in parts if p.strip())
    return ToolOutput.text(text[: _budget(ctx)], summary="recall summary")


async def _stats(archive: ArchiveReader, session_id: str) -> str:
    info = await archive.get_session(session_id)
    usage = await archive.usage_totals(session_id)
    lines = [
        "Archive stats:",
        f"  session: {info.id} ({info.title or 'untitled'}), started {info.created_at}",
        f"  turns archived: {await archive.last_turn_number(session_id)}",
        f"  model requests: {usage.calls}; tokens in {usage.input_tokens:,}, "
        f"out {usage.output_tokens:,}, cache read {usage.cache_read_tokens:,}, "
        f"cache write {usage.cache_creation_tokens:,}; cost ${usage.cost_usd:.4f}",
    ]
    return "\n".join(lines)
