"""What fronts read through the host: history pages, sessions, search, the panel's data,
and the archive's upkeep (copies when the notebook moves). The only door from a front to
the notebook's archive: everything here is awaited on the engine loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from loom_jupyter.host.runtime.history import history_page, session_rows, session_summary
from loom_jupyter.query import clip_query

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.archive.project import ProjectMatches
    from loom_jupyter.archive.readable import ReadableMatch
    from loom_jupyter.host.services.panel_data import PanelData
    from loom_jupyter.host.upkeep.relocate import Relocation
    from loom_jupyter.host.wire.protocol import (
        HistoryItem,
        SearchHitItem,
        SessionRow,
        SessionSummary,
        ToolItem,
        UsageMsg,
    )
    from loom_jupyter.messages import Turn
    from loom_jupyter.records import ModelCallRecord, SessionInfo
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["SearchPage", "Views"]

SNIPPET_CHARS = 160


class SessionSource(Protocol):
    """Where the views find the conversation (the :class:`~loom_jupyter.host.host.Host`)."""

    async def session_async(self) -> CoworkSession:
        """The conversation, awaited on the engine loop."""
        ...


class SearchPage:
    """A sidebar search's answer: the query searched, its hits, and what was left out."""

    def __init__(self, query: str, hits: tuple[SearchHitItem, ...], note: str | None) -> None:
        self.query, self.hits, self.note = query, hits, note


class Views:
    """Reads and upkeep of one open archive, for the fronts."""

    def __init__(self, archive: Archive, sessions: SessionSource) -> None:
        self.archive = archive
        self._sessions = sessions

    @property
    def path(self) -> Path:
        """The archive file."""
        return self.archive.path

    # -- the conversation --------------------------------------------------------------------

    async def history(
        self, before: int | None = None
    ) -> tuple[tuple[HistoryItem | ToolItem, ...], int | None]:
        """A page of the current session's history before ``before`` (the newest when None)."""
        session = await self._sessions.session_async()
        return await history_page(self.archive, session.session_id, before)

    async def summary(self) -> SessionSummary | None:
        """The current session's header (None while no message was sent)."""
        session = await self._sessions.session_async()
        sid = session.session_id
        info = await self.archive.get_session(sid) if sid else None
        return await session_summary(self.archive, info, session.policy.mode)

    async def session_rows(self) -> tuple[SessionRow, ...]:
        """The session picker's rows, once a switch in progress has ended."""
        session = await self._sessions.session_async()
        await session.settled()
        listed = await self.archive.list_sessions(delegated=False)
        return await session_rows(self.archive, listed, session.session_id)

    async def search_page(self, query: str, limit: int = 20) -> SearchPage:
        """Turns that say it (exact phrase, then all words, then some), in every session."""
        from loom_jupyter.archive.readable import search_for_people
        from loom_jupyter.host.wire.protocol import SearchHitItem

        clipped = clip_query(query)
        matches = await search_for_people(self.archive, clipped.text, limit=limit)
        hits = tuple(
            SearchHitItem(
                session_id=m.turn.session_id,
                turn=m.turn.turn_number,
                role=m.turn.tool_name or m.turn.role,
                snippet=_snippet(m.turn.content),
                match=m.kind,
            )
            for m in matches
        )
        return SearchPage(clipped.text, hits, clipped.note)

    async def usage(self) -> UsageMsg | None:
        """The footer's usage as the session's last request left it (None before one): that
        request's tokens, the session's cost so far and the window's budget."""
        from loom_jupyter.host.wire.protocol import UsageMsg
        from loom_jupyter.models.pricing import unpriced_call

        session = await self._sessions.session_async()
        sid = session.session_id
        calls = [c for c in await self.archive.model_calls(sid) if c.error is None] if sid else []
        if not calls:
            return None
        last = calls[-1]
        context = last.input_tokens + last.cache_creation_tokens + last.cache_read_tokens
        budget, cost = session.window.config.budget_tokens, session.state.cost_usd
        unpriced = any(unpriced_call(c) for c in calls)
        return UsageMsg(context, last.output_tokens, cost, context, budget, unpriced)

    async def panel_data(self) -> PanelData:
        """What the live panel shows of the current session."""
        from loom_jupyter.host.services.panel_data import PanelData

        session = await self._sessions.session_async()
        sid = session.session_id
        info = await self.archive.get_session(sid) if sid else None
        calls = await self.archive.model_calls(sid) if sid else []
        tasks = await self.archive.list_tasks(sid) if sid else []
        prompts = (await self.archive.prompt_counts([sid]))[sid] if sid else 0
        return PanelData.build(info, calls, tasks, session.state_event().state_yaml, prompts)

    # -- sessions, for %cowork's reports ------------------------------------------------------

    async def sessions(self, *, delegated: bool = False) -> list[SessionInfo]:
        """The person's sessions (``delegated=True``: a delegation's sub-agents too)."""
        return await self.archive.list_sessions(delegated=delegated)

    async def pick(self, ref: str) -> SessionInfo:
        """A session by its number in the session list or by an id prefix."""
        from loom_jupyter.archive.refs import resolve_session_ref

        listed = await self.sessions()
        return resolve_session_ref(listed, ref, hidden=await self.sessions(delegated=True))

    async def session_info(self, session_id: str) -> SessionInfo:
        """One session's row."""
        return await self.archive.get_session(session_id)

    async def prompt_counts(self, session_ids: list[str]) -> dict[str, int]:
        """How many messages the person sent in each session."""
        return await self.archive.prompt_counts(session_ids)

    async def turns(self, session_id: str) -> list[Turn]:
        """Every turn of a session, in order."""
        return await self.archive.get_turns(session_id)

    async def model_calls(self, session_id: str) -> list[ModelCallRecord]:
        """A session's model calls (tokens and cost)."""
        return await self.archive.model_calls(session_id)

    async def delete_session(self, session_id: str) -> None:
        """Delete a session for good."""
        await self.archive.delete_session(session_id)

    async def search(
        self, query: str, *, session_id: str | None, limit: int
    ) -> list[ReadableMatch]:
        """Matches for ``%cowork search``, best first (``session_id=None``: every session)."""
        from loom_jupyter.archive.readable import search_for_people

        return await search_for_people(self.archive, query, session_id=session_id, limit=limit)

    async def project_search(self, query: str, limit: int) -> tuple[ProjectMatches, Path]:
        """``%cowork search --all-notebooks``: matches in every notebook archive of the
        project, and the project's root."""
        from loom_jupyter.archive.project import ProjectArchives, project_root

        session = await self._sessions.session_async()
        root = project_root(session.notebook_path)
        return await ProjectArchives(root).search_for_people(query, limit), root

    # -- upkeep when the notebook moves --------------------------------------------------------

    async def save_copy(self, target: Path) -> None:
        """A consistent copy of the open archive at ``target``."""
        await self.archive.save_copy(target)

    async def move_notebook(self, old: str, new: str) -> None:
        """The archive's sessions now name the notebook ``new``."""
        await self.archive.move_notebook(old, new)

    async def adoption_problem(self, move: Relocation, stale_after: float) -> str | None:
        """Why this notebook cannot take over ``move.old``'s conversation (None: it can)."""
        from loom_jupyter.host.upkeep.relocate import adoption_problem

        return await adoption_problem(move, self.archive, stale_after)


def _snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
