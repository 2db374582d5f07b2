"""Outside agents' links: the comm target ``loom-agent`` (DESIGN §14).

``loom-jupyter mcp`` opens this target, never the pages' ``loom``: a link's kind is fixed by
the comm it opened. On this link the kernel reads two messages only — ``hello`` naming the
agent, answered with ``pages`` (the pages open on the notebook, checked just now, and
whether the person is looking at it), and ``outside_call``, answered with
``outside_result`` — and refuses the rest with a notice (an ``approve``, a ``send``, a
``hello`` without ``agent``). It is never welcomed, never broadcast to and never asked to
approve: it is not on the host's stream at all. Before each call the pages are checked
(:mod:`.presence`), so a call that needs the person's yes is refused at once when no page
is there to ask, rather than waiting for a tab that closed. A link that closes while its
call holds the floor (the agent went away) stops that call, as the sidebar's Stop would.
Everything here runs on the engine loop.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from loom_jupyter.errors import LoomError
from loom_jupyter.host.wire.protocol import NoticeMsg, PagesMsg, version_notice
from loom_jupyter.jupyter.sidebar import AGENT_TARGET
from loom_jupyter.jupyter.sidebar.bridge import CommLink, Peer

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.host.host import Host
    from loom_jupyter.host.wire.protocol import Hello, Inbound, Outbound, OutsideCall

__all__ = ["AgentHub", "Pages", "only_calls", "unnamed_hello"]

_log = logging.getLogger(__name__)


class Pages(Protocol):
    """The pages' side, as an agent's link needs it (:class:`.hub.SidebarHub`)."""

    async def check_pages(self) -> PagesMsg:
        """Check which pages are still there; what the agent is told of them."""
        ...


def only_calls(agent: str, kind: str) -> str:
    """Why an agent's link may not send ``kind`` (an ``approve``, a ``send``...)."""
    who = f"{agent}'s link" if agent else "An outside agent's link"
    return (
        f"loom: {who} (the `loom-agent` comm) only says `hello` and calls tools "
        f"(`outside_call`); a '{kind}' comes from a page, and approvals are the person's"
    )


def unnamed_hello() -> str:
    """Why a ``hello`` without ``agent`` is refused on an agent's link."""
    return (
        "loom: a hello on the `loom-agent` comm names its agent (`agent`); this link stays an "
        "outside agent's (a page opens the `loom` comm)"
    )


class AgentHub:
    """The kernel side of every outside agent's link to one kernel."""

    def __init__(self, host: Host, pages: Callable[[], Pages | None]) -> None:
        self._host = host
        self._pages = pages
        self.link: CommLink | None = None
        self._calling: list[Peer] = []  # a link once for each of its calls under way

    @property
    def _loop(self) -> Any:
        return self._host.loop_thread.loop

    # -- lifecycle (main thread) ---------------------------------------------------------

    def attach(self, kernel: Any) -> None:
        """Register the ``loom-agent`` target on ``kernel``."""
        self.link = CommLink(
            kernel, self._loop, self.handle, self._reject, target=AGENT_TARGET, closed=self._gone
        )
        self.link.register()

    def detach(self) -> None:
        """Unregister the target and close the open links (also at interpreter exit)."""
        link, self.link = self.link, None
        if link is not None:
            link.unregister()

    def release(self) -> CommLink | None:
        """Let go of the open links for a successor to :meth:`take` (the notebook was
        renamed); closing this hub then leaves them open."""
        link, self.link = self.link, None
        return link

    def take(self, link: CommLink) -> None:
        """Serve a predecessor's links: the agents stay connected."""
        link.rebind(self._loop, self.handle, self._reject)
        link.closed = self._gone
        self.link = link

    # -- messages (engine loop) ------------------------------------------------------------

    async def handle(self, peer: Peer, message: Inbound) -> None:
        """Act on one message from an agent's link; every refusal is an error notice."""
        try:
            await self._dispatch(peer, message)
        except LoomError as exc:
            self._send(peer, NoticeMsg(str(exc), "error"))
        except Exception as exc:
            _log.exception("an outside agent's message failed")
            self._send(peer, NoticeMsg(f"loom: {type(exc).__name__}: {exc}", "error"))

    async def _dispatch(self, peer: Peer, message: Inbound) -> None:
        if message.type == "hello":
            await self._hello(peer, message)
        elif peer.protocol is not None:  # it was told why, once more
            raise LoomError(version_notice(peer.protocol))
        elif message.type == "outside_call":
            await self._call(peer, message)
        else:
            raise LoomError(only_calls(peer.agent, message.type))

    async def _hello(self, peer: Peer, hello: Hello) -> None:
        if not hello.agent:
            raise LoomError(unnamed_hello())
        peer.protocol = None if hello.understood else hello.version
        if peer.protocol is not None:
            raise LoomError(version_notice(peer.protocol))
        peer.agent = " ".join(hello.agent.split())[:80]
        self._send(peer, await self._pages_view())

    async def _call(self, peer: Peer, call: OutsideCall) -> None:
        """The call through the host, once the pages are checked; its result to this link."""
        from loom_jupyter.host.services.outside import failed, run_outside_call

        try:
            await self._pages_view()  # a page that closed is not asked to approve
            self._calling.append(peer)
            result = await run_outside_call(self._host, call)
        except Exception as exc:  # the link waits for this request's answer: always give one
            _log.exception("an outside call failed")
            result = failed(call.request_id, f"loom: {type(exc).__name__}: {exc}")
        finally:
            if peer in self._calling:
                self._calling.remove(peer)
        self._send(peer, result)

    def _gone(self, peer: Peer) -> None:
        """An agent's link closed: the outside call holding the floor, when it can only be
        this link's, is stopped (nobody waits for its answer; a card it raised closes)."""
        floor = self._host.floor
        only_its = peer in self._calling and all(other is peer for other in self._calling)
        if only_its and floor.outside_turn() and floor.stop_outside is not None:
            floor.stop_outside()

    async def _pages_view(self) -> PagesMsg:
        pages = self._pages()
        return PagesMsg(0, False) if pages is None else await pages.check_pages()

    def _send(self, peer: Peer, message: Outbound) -> None:
        if self.link is not None:
            self.link.send(peer, self._host.floor.log.reply(message, to=""))

    def _reject(self, peer: Peer, problem: str, _request_id: str) -> None:
        """A message that does not parse: an error notice."""
        self._send(peer, NoticeMsg(f"loom: bad message from an outside agent ({problem})", "error"))
