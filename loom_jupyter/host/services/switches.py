"""Session switches as every front sees them: resume, new and fork (the session refuses
while a turn or a delegation runs), and every front told which session is current now."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from typing_extensions import assert_never

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.services.views import Views
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["Switches"]


class Switches:
    """The host's part that switches sessions and tells the fronts (:class:`SessionChanged`)."""

    def __init__(
        self,
        session: Callable[[], Awaitable[CoworkSession]],
        views: Callable[[], Views],
        floor: Callable[[], TurnFloor],
    ) -> None:
        self._session = session
        self._views = views
        self._floor = floor

    async def switch(
        self, kind: Literal["resume", "new", "fork"], ref: str = "", at: int | None = None
    ) -> None:
        """Resume the session ``ref`` names, start a new one or fork at turn ``at``; every
        front is told. The session refuses while a turn or a delegation runs
        (:class:`~loom_jupyter.errors.SessionBusyError`)."""
        session = await self._session()
        if kind == "resume":
            await session.resume((await self._views().pick(ref)).id)
        elif kind == "fork":
            await session.fork(at_turn=at)
        elif kind == "new":
            await session.new()
        else:
            assert_never(kind)
        await self.changed()

    async def changed(self) -> None:
        """Tell every front which session is current now, with its newest history."""
        from loom_jupyter.host.wire.protocol import SessionChanged

        views = self._views()
        items, more = await views.history()
        self._floor().broadcast(SessionChanged(await views.summary(), items, more))

    async def followed(self, message: str, *, switched: bool) -> None:
        """The conversation followed the notebook's new name: say so (after the session,
        when it changed, so a front's rebuilt view keeps the notice)."""
        from loom_jupyter.host.wire.protocol import NoticeMsg

        if switched:
            await self.changed()
        self._floor().broadcast(NoticeMsg(message, "info"))
