"""The session's approver: the sidebar, stdin, or both (first answer wins).

A sidebar turn asks the sidebar only, and so does an outside agent's call (DESIGN
§14). A cell turn asks on stdin and, when a sidebar is open, there too: whichever
answers first decides, the other is closed (the stdin question is ended in the main
thread; the sidebar gets ``approval_closed``). Without a sidebar this is the plain
stdin approver.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from loom_jupyter.engine.events import ApprovalAnswer, ApprovalRequest
    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.wire.protocol import Decision

__all__ = ["SharedApprover", "StdinAsker"]

_ANSWERS: dict[Decision, ApprovalAnswer] = {"allow": "yes", "deny": "no", "always": "always"}
_DECISIONS: dict[ApprovalAnswer, Decision] = {"yes": "allow", "no": "deny", "always": "always"}


class StdinAsker(Protocol):
    """The kernel's stdin question (``jupyter/cell/approval.py`` has the one in a kernel)."""

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Ask and wait (the plain approver, when no sidebar is open)."""
        ...

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer | None:
        """Ask; None when stdin cannot ask."""
        ...

    def cancel(self) -> bool:
        """End a pending question (another front answered); whether one was pending."""
        ...


class SharedApprover:
    """An ``Approver`` that routes each question by the turn's source."""

    def __init__(self, stdin: StdinAsker, floor: TurnFloor) -> None:
        self.stdin = stdin
        self._hub = floor

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Ask, and wait for the first answer."""
        request_id = request.call_id or uuid.uuid4().hex
        if self._hub.sidebar_turn() or self._hub.outside_turn():
            decision = await self._hub.ask(request_id, request)
            if decision is None:
                return "no"  # the sidebar closed: nobody left to ask
            self._hub.close_approval(request_id, decision, "sidebar")
            return _ANSWERS[decision]
        if not self._hub.can_ask():
            return await self.stdin(request)
        return await self._race(request_id, request)

    async def _race(self, request_id: str, request: ApprovalRequest) -> ApprovalAnswer:
        sidebar = asyncio.ensure_future(self._hub.ask(request_id, request))
        stdin = asyncio.ensure_future(self.stdin.ask(request))
        try:
            return await self._first(request_id, sidebar, stdin)
        finally:
            if not stdin.done():
                self.stdin.cancel()
            sidebar.cancel()

    async def _first(
        self,
        request_id: str,
        sidebar: asyncio.Future[Decision | None],
        stdin: asyncio.Future[ApprovalAnswer | None],
    ) -> ApprovalAnswer:
        pending: set[asyncio.Future[object]] = {sidebar, stdin}  # type: ignore[arg-type]
        while pending:
            _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if sidebar.done() and not sidebar.cancelled() and sidebar.result() is not None:
                decision = sidebar.result()
                assert decision is not None
                self.stdin.cancel()
                self._hub.close_approval(request_id, decision, "sidebar")
                return _ANSWERS[decision]
            if stdin.done() and stdin.result() is not None:
                answer = stdin.result()
                assert answer is not None
                self._hub.close_approval(request_id, _DECISIONS[answer], "stdin")
                return answer
        return "no"  # no stdin and no sidebar any more
