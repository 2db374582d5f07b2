"""A comm target (``loom`` for pages, ``loom-agent`` for outside agents): receive, validate
and queue; send from the engine thread.

The handlers run on whichever kernel thread got the message (a subshell's
thread while a cell runs, or the main shell). They only parse the message and
hand it to the engine loop; a message that does not parse gets an error
``notice`` back, never an exception in the kernel.

Sending from the engine thread: ipykernel stamps a comm message with the
"current" parent request, which from a foreign thread is whatever request the
kernel saw last. ipykernel 7.4 also routes the front's next messages on a comm
to the subshell of the parent its last outgoing message carried, so a reply
stamped with a cell's request would pull the sidebar off its subshell and
behind the running cell. Each send therefore runs in a context whose parent is
the last message from that front, and the comm keeps following the subshell
named in each incoming header.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loom_jupyter.host.wire.protocol import Hello, ProtocolError, page_reads, parse_inbound
from loom_jupyter.jupyter.sidebar import AGENT_TARGET, TARGET

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from loom_jupyter.host.wire.protocol import Inbound

__all__ = ["AGENT_TARGET", "TARGET", "CommLink", "Peer"]

_log = logging.getLogger(__name__)


@dataclass(eq=False)
class Peer:
    """One open comm (a page, or an outside agent's link) and the last message it sent."""

    comm: Any
    parent: dict[str, Any] = field(default_factory=dict)
    ready: bool = False  # welcomed (or caught up): broadcasts reach it from now on
    protocol: str | None = None  # the version (major.minor) of a front this kernel cannot serve
    documents: bool = False  # its page holds the notebook and applies notebook requests
    page: bool = False  # a page said hello (on ``loom``, naming no agent): it may approve
    pings: bool = False  # it answers ``ping`` (its hello said protocol 1.3 or later)
    gone: bool = False  # it did not answer a ``ping``: no page until it speaks again
    on_screen: bool = False  # it shows the notebook now (its hello, ``focus``, ``pong``)
    agent: str = ""  # an outside agent's link: its client's name (``loom-agent`` only)
    minor: int | None = None  # its minor version (its hello): later types are not sent to it

    @property
    def id(self) -> str:
        """The comm id."""
        return str(self.comm.comm_id)


def _other_version(data: object) -> str | None:
    """The version a hello names when it names another major protocol, however unreadable
    the rest of it is (a JSON reader may even make a huge number a float): the version is
    checked first, so such a front is refused like any other of that version."""
    if not isinstance(data, dict) or data.get("type") != "hello":
        return None
    number = data.get("protocol")
    if isinstance(number, bool) or not isinstance(number, int | float):
        return None
    if number != number or abs(number) < _UNREADABLE or abs(number) == float("inf"):
        return None  # a number a hello can carry is read by the protocol itself
    return f"{int(number)}.0"


_UNREADABLE = 2**63
"""A protocol number this large reaches the kernel as a float where jupyter_client reads
JSON with orjson, and no integer field takes it."""


def _speaks(peer: Peer, version: str) -> None:
    peer.ready, peer.protocol = False, version


class CommLink:
    """The kernel end of every open comm on one target (``loom`` unless told)."""

    def __init__(
        self,
        kernel: Any,
        loop: asyncio.AbstractEventLoop,
        deliver: Callable[[Peer, Inbound], Coroutine[Any, Any, None]],
        reject: Callable[[Peer, str, str], None],
        *,
        target: str = TARGET,
        closed: Callable[[Peer], None] | None = None,
    ) -> None:
        self.target = target
        self.closed = closed  # told on the engine loop when a front closes its comm
        self._kernel = kernel
        self._loop = loop
        self._deliver = deliver
        self._reject = reject
        self._peers: dict[str, Peer] = {}

    # -- registration -----------------------------------------------------------

    def register(self) -> None:
        """Accept ``comm_open`` for this link's target."""
        self._kernel.comm_manager.register_target(self.target, self._opened)

    def rebind(
        self,
        loop: asyncio.AbstractEventLoop,
        deliver: Callable[[Peer, Inbound], Coroutine[Any, Any, None]],
        reject: Callable[[Peer, str, str], None],
    ) -> None:
        """Deliver to another hub from now on; the target and the open comms stay."""
        self._loop, self._deliver, self._reject = loop, deliver, reject

    def unregister(self) -> None:
        """Stop accepting new sidebars and close the open ones (quietly when the kernel is
        going away: nothing is left to tidy then)."""
        manager = getattr(self._kernel, "comm_manager", None)
        try:
            if manager is not None and manager.targets.get(self.target) == self._opened:
                manager.unregister_target(self.target, self._opened)
        except Exception:
            _log.debug("unregistering the %s comm target failed", self.target, exc_info=True)
        for peer in list(self._peers.values()):
            self._drop(peer)
            try:
                peer.comm.close()
            except Exception:  # already closed by the front
                _log.debug("closing a %s comm failed", self.target, exc_info=True)

    @property
    def kernel(self) -> Any:
        """The ipykernel instance."""
        return self._kernel

    @property
    def peers(self) -> list[Peer]:
        """The open comms."""
        return list(self._peers.values())

    # -- any kernel thread --------------------------------------------------------

    def accept(self, comm: Any, msg: dict[str, Any]) -> None:
        """A front opened ``comm`` before this link held the target (handed on to it)."""
        self._opened(comm, msg)

    def _opened(self, comm: Any, msg: dict[str, Any]) -> None:
        peer = Peer(comm)
        self._peers[peer.id] = peer
        comm._reply_subshell_for = _follow_header  # see the module docstring
        comm.on_msg(lambda m: self._received(peer, m))
        comm.on_close(lambda _m: self._loop.call_soon_threadsafe(self._front_closed, peer))
        self._received(peer, msg)

    def _received(self, peer: Peer, msg: dict[str, Any]) -> None:
        peer.parent = msg
        data = (msg.get("content") or {}).get("data")
        try:
            message = parse_inbound(data)  # the first loads pydantic (installed: importguard)
        except ProtocolError as exc:
            asked = data.get("request_id") if isinstance(data, dict) else None
            request_id = asked if isinstance(asked, str) and len(asked) <= 200 else ""
            other = _other_version(data)
            if other is not None:
                self._loop.call_soon_threadsafe(_speaks, peer, other)
            self._loop.call_soon_threadsafe(self._reject, peer, str(exc), request_id)
            return
        if isinstance(message, Hello):  # what it reads: kernel message types up to its minor
            peer.minor = message.minor
        asyncio.run_coroutine_threadsafe(self._deliver(peer, message), self._loop)

    # -- the engine thread ---------------------------------------------------------

    def send(self, peer: Peer, data: dict[str, Any]) -> None:
        """Send ``data`` to one sidebar, as a reply to its last message; a message type added
        after the page's minor version is held back (that page would not know it); an outside
        agent's link gets its answers (it asked with a type of that version)."""
        minor = None if peer.agent else peer.minor
        if minor is not None and not page_reads(str(data.get("type")), minor):
            _log.debug("no %s to a page of minor version %d", data.get("type"), peer.minor)
            return
        context = contextvars.copy_context()
        try:
            context.run(self._send_as_reply, peer, data)
        except Exception:  # a comm the front closed meanwhile
            _log.debug("sending to a sidebar failed", exc_info=True)
            self._drop(peer)

    def broadcast(self, data: dict[str, Any]) -> None:
        """Send ``data`` to every open sidebar that has been welcomed."""
        for peer in list(self._peers.values()):
            if peer.ready:
                self.send(peer, data)

    def _send_as_reply(self, peer: Peer, data: dict[str, Any]) -> None:
        parent_var = getattr(self._kernel, "_shell_parent", None)
        if isinstance(parent_var, contextvars.ContextVar) and peer.parent:
            parent_var.set(peer.parent)
        peer.comm.send(data)

    def _front_closed(self, peer: Peer) -> None:
        self._drop(peer)
        if self.closed is not None:
            self.closed(peer)

    def _drop(self, peer: Peer) -> None:
        self._peers.pop(peer.id, None)


def _follow_header(data: object, default: str | None) -> str | None:
    """Route a front's message to the subshell its own header names."""
    return default
