"""Which pages are still there, and which of them shows the notebook (DESIGN §14).

A browser tab that closes need not close its comm: the page is gone and the kernel is not
told. So before an outside agent's call (and before telling an agent's link about the
pages) the kernel asks each page that speaks protocol 1.3 (`ping`); a page that does not
answer (`pong`) within :data:`ANSWER_SECONDS` is *gone*: it is not asked to approve and does
not hold the notebook, until it speaks again. Pages of an older protocol cannot answer and
are taken at their word, as before. A live page answers in milliseconds over its subshell,
so only a gone page costs that wait, once.

The same pages say which notebook is on screen: a page's ``hello`` and ``focus`` messages
(its notebook became the current one, the page became visible, its window gained focus)
and each ``pong``. The kernel keeps when the notebook was last brought on screen, after the
page that did it has closed; an agent's link hears it as ``pages``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING

from loom_jupyter.host.wire.protocol import PagesMsg, Ping

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from loom_jupyter.host.wire.protocol import Outbound, Pong
    from loom_jupyter.jupyter.sidebar.bridge import Peer

__all__ = ["ANSWER_SECONDS", "Presence"]

ANSWER_SECONDS = 5.0
"""How long a page may take to answer a ``ping`` before it counts as gone. A page answers
from its own event loop (timers may be throttled in a background tab; messages are not)."""


class Presence:
    """The pages' liveness and focus, for one kernel's sidebars (engine loop)."""

    def __init__(self, send: Callable[[Peer, Outbound], None]) -> None:
        self._send = send
        self._pings: dict[str, tuple[Peer, asyncio.Future[None]]] = {}
        self._checking: asyncio.Future[None] | None = None
        self._focused: float | None = None  # monotonic: the notebook last brought on screen

    @staticmethod
    def live(peers: Iterable[Peer]) -> list[Peer]:
        """The pages among ``peers`` that are not known to be gone."""
        return [peer for peer in peers if peer.page and not peer.gone]

    def heard(self, peer: Peer) -> None:
        """``peer`` sent something: it is there."""
        peer.gone = False

    def said(self, peer: Peer, *, on_screen: bool, focus: bool = False) -> None:
        """``peer`` shows the notebook now, or not; ``focus``: the person just turned to it."""
        if on_screen and (focus or not peer.on_screen):
            self._focused = time.monotonic()
        peer.on_screen = on_screen

    def answered(self, peer: Peer, pong: Pong) -> None:
        """A ``pong``: the ping it answers is settled."""
        self.said(peer, on_screen=pong.on_screen)
        waiting = self._pings.get(pong.ping_id)
        if waiting is not None and waiting[0] is peer and not waiting[1].done():
            waiting[1].set_result(None)

    async def check(self, peers: Iterable[Peer]) -> None:
        """Ping every live page that answers pings; those silent for :data:`ANSWER_SECONDS`
        are gone. Checks asked for while one runs share it."""
        running = self._checking
        if running is None or running.done():
            running = self._checking = asyncio.ensure_future(self._ping(self.live(peers)))
        await asyncio.shield(running)

    async def _ping(self, pages: list[Peer]) -> None:
        loop = asyncio.get_running_loop()
        asked: dict[str, tuple[Peer, asyncio.Future[None]]] = {}
        for peer in pages:
            if peer.pings:
                asked[uuid.uuid4().hex] = (peer, loop.create_future())
        self._pings.update(asked)
        try:
            for ping_id, (peer, _) in asked.items():
                self._send(peer, Ping(ping_id))
            futures = [future for _, future in asked.values()]
            if futures:
                await asyncio.wait(futures, timeout=ANSWER_SECONDS)
        finally:
            for ping_id, (peer, future) in asked.items():
                self._pings.pop(ping_id, None)
                if not future.done():
                    future.cancel()
                    peer.gone = True

    def view(self, peers: Iterable[Peer]) -> PagesMsg:
        """What an agent's link is told: the live pages and the notebook's focus."""
        pages = self.live(peers)
        ago = None if self._focused is None else round(time.monotonic() - self._focused, 1)
        return PagesMsg(len(pages), any(peer.on_screen for peer in pages), ago)
