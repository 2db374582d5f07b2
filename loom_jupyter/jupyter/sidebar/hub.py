"""The sidebar front: every open sidebar of one kernel, on the host's stream.

The hub owns the ``loom`` comm link: pages only (outside agents have their own target and
hub, :mod:`.agents`). It subscribes to the host's stream and sends each numbered message to
every sidebar; a sidebar's messages become the host's commands (send, stop, approve, switch
sessions) or questions it answers from the host (history pages, the session list, search).
Which pages are still there and which shows the notebook is :mod:`.presence`'s.
Everything here runs on the engine loop.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from typing_extensions import assert_never

from loom_jupyter.errors import LoomError
from loom_jupyter.host.runtime.stream import HostMessage, TurnEvent
from loom_jupyter.host.wire.protocol import (
    Completions,
    ExamplesMsg,
    History,
    NoticeMsg,
    SearchResults,
    SessionsMsg,
    reply_to,
    version_notice,
)
from loom_jupyter.jupyter.sidebar.bridge import CommLink, Peer
from loom_jupyter.jupyter.sidebar.presence import Presence

if TYPE_CHECKING:
    from loom_jupyter.host.host import Host
    from loom_jupyter.host.runtime.floor import FloorState
    from loom_jupyter.host.runtime.stream import Published
    from loom_jupyter.host.wire.protocol import (
        Hello,
        Inbound,
        NotebookRequest,
        Outbound,
        PagesMsg,
    )

__all__ = ["AGENT_HELLO_REFUSED", "NO_HELLO", "OUTSIDE_CALL_REFUSED", "Handover", "SidebarHub"]

OUTSIDE_CALL_REFUSED = (
    "loom: an 'outside_call' comes from an outside agent's own link (the `loom-agent` comm, "
    "opened by loom-jupyter mcp), never from a page"
)
AGENT_HELLO_REFUSED = (
    "loom: this `loom` comm is a page's; an outside agent's link opens the `loom-agent` comm "
    "(install the same loom_jupyter for loom-jupyter mcp and the kernel)"
)
NO_HELLO = "loom: a page says `hello` (naming no agent) before anything else"
_PINGS_SINCE = 3
"""The minor protocol version (of major 1) whose pages answer ``ping``."""

_log = logging.getLogger(__name__)
_ANSWERING: ContextVar[str] = ContextVar("loom_answering", default="")
"""The request id of the front's message being handled (``""``: none), in its task."""


@dataclass(frozen=True)
class Handover:
    """What one coworker's sidebars pass to the next (the notebook was renamed)."""

    link: CommLink | None
    floor: FloorState


class SidebarHub:
    """The kernel side of every sidebar of one kernel."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self.link: CommLink | None = None
        self.presence = Presence(lambda peer, message: self._reply(peer, message, to=""))
        host.floor.subscribers.append(self._published)
        host.floor.ask_through(lambda: self.has_fronts)
        host.document.attach(self)

    @property
    def _loop(self) -> Any:
        return self._host.loop_thread.loop

    # -- lifecycle (main thread) ---------------------------------------------------

    def attach(self, kernel: Any) -> None:
        """Register the comm target on ``kernel``."""
        self.link = CommLink(kernel, self._loop, self.handle, self._reject)
        self.link.register()

    def detach(self) -> None:
        """Unregister the comm target and close the open comms (also at interpreter exit)."""
        link, self.link = self.link, None
        if link is not None:
            link.unregister()

    def release(self) -> Handover:
        """Let go of the open sidebars and the numbered log (main thread), for a successor
        to :meth:`take`; closing this hub then leaves the comms open."""
        link, self.link = self.link, None
        return Handover(link, self._host.floor.release())

    def take(self, handover: Handover) -> None:
        """Serve a predecessor's sidebars: the fronts stay connected and see no restart."""
        self._host.floor.take(handover.floor)
        if handover.link is not None:
            handover.link.rebind(self._loop, self.handle, self._reject)
            self.link = handover.link

    @property
    def has_fronts(self) -> bool:
        """Whether a page is open that may answer (one that did not answer a ping is gone)."""
        return bool(self.pages())

    def pages(self) -> list[Peer]:
        """The pages open on the notebook, but those known to be gone."""
        return self.presence.live(self.link.peers if self.link is not None else [])

    async def check_pages(self) -> PagesMsg:
        """Ask the pages whether they are still there (``ping``); what an agent is told."""
        peers = self.link.peers if self.link is not None else []
        await self.presence.check(peers)
        return self.presence.view(peers)

    # -- the notebook's document ---------------------------------------------------------

    def holds_notebook(self) -> bool:
        """Whether an open page holds the notebook and applies notebook requests."""
        return self._document_peer() is not None

    def send_request(self, request: NotebookRequest) -> bool:
        """Send a notebook request to the newest page that holds the notebook."""
        peer = self._document_peer()
        if peer is None or self.link is None:
            return False
        self._reply(peer, request, to="")  # the kernel's own request, whatever runs now
        return True

    def _document_peer(self) -> Peer | None:
        holding = [peer for peer in self.pages() if peer.ready and peer.documents]
        return holding[-1] if holding else None

    # -- sending ----------------------------------------------------------------------------

    def _published(self, item: Published) -> None:
        link = self.link
        if link is None:
            return
        if isinstance(item, TurnEvent):
            for data in item.sent:
                link.broadcast(data)
        elif isinstance(item, HostMessage):
            link.broadcast(item.sent)
        else:
            assert_never(item)

    def _reply(self, peer: Peer, message: Outbound, to: str | None = None) -> None:
        """Send ``message`` to one front as a reply: to the request being handled (its
        ``request_id`` goes back as ``reply_to``), or ``to`` when given."""
        if self.link is not None:
            answering = _ANSWERING.get() if to is None else to
            self.link.send(peer, self._host.floor.log.reply(message, to=answering))

    def _reject(self, peer: Peer, problem: str, request_id: str) -> None:
        """A message that does not parse: an error notice, answering its request id if any."""
        notice = NoticeMsg(f"loom: bad sidebar message ({problem})", "error")
        self._reply(peer, notice, to=request_id)

    # -- inbound messages ------------------------------------------------------------------------

    async def handle(self, peer: Peer, message: Inbound) -> None:
        """Act on one message from a sidebar (engine loop); failures become notices. Each
        message runs in its own task: every reply it makes carries its request id."""
        answering = _ANSWERING.set(reply_to(message))
        self.presence.heard(peer)
        try:
            await self._dispatch(peer, message)
        except LoomError as exc:
            self._reply(peer, NoticeMsg(str(exc), "error"))
        except Exception as exc:
            _log.exception("sidebar message failed")
            self._reply(peer, NoticeMsg(f"loom: {type(exc).__name__}: {exc}", "error"))
        finally:
            _ANSWERING.reset(answering)

    async def _dispatch(self, peer: Peer, m: Inbound) -> None:
        host, floor = self._host, self._host.floor
        if peer.protocol is not None and m.type != "hello":  # it was told why, once more
            raise LoomError(version_notice(peer.protocol))
        if m.type == "outside_call":
            raise LoomError(OUTSIDE_CALL_REFUSED)  # the agent's own comm, never a page's
        if not peer.page and m.type != "hello":
            raise LoomError(NO_HELLO)
        if m.type == "hello":
            await self._hello(peer, m)
        elif m.type == "send":
            self._send(peer, m.text, m.client_id)
        elif m.type == "cancel_queued":
            floor.cancel_queued(m.client_id)
        elif m.type == "stop":
            await host.stop()
        elif m.type == "approve":
            if not floor.answer(m.request_id, m.decision):
                self._reply(peer, NoticeMsg("That approval was already answered.", "info"))
        elif m.type == "load_more":
            items, more = await host.views.history(m.before_turn)
            self._reply(peer, History(items, more))
        elif m.type == "sessions":
            self._reply(peer, SessionsMsg(await host.views.session_rows()))
        elif m.type == "resume":
            await host.switches.switch("resume", m.session)
        elif m.type == "new":
            await host.switches.switch("new")
        elif m.type == "fork":
            await host.switches.switch("fork", at=m.at_turn)
        elif m.type == "search":
            await self._search(peer, m.query)
        elif m.type == "set_notebook":
            host.renames.heard(m.path, m.server_root)
        elif m.type == "notebook_reply":
            host.document.settle(m.request_id, m.result)
        elif m.type == "revert_turn":
            await host.revert_turn(m.turn)
        elif m.type == "set_options":
            from loom_jupyter.host.services.options import apply_options

            await apply_options(host, thinking=m.thinking, effort=m.effort)
        elif m.type == "complete":
            await self._complete(peer, m.query, m.kind)
        elif m.type == "command":
            await self._command(peer, m.name, m.args)
        elif m.type == "where_from":
            await self._where_from(peer, m.name)
        elif m.type == "trust_decision":
            await host.trust.decide(m.decision, shown=m.digest, with_approval=m.with_approval)
        elif m.type == "set_key":
            await self._set_key(peer, m.key)
        elif m.type == "examples":
            await self._examples(peer)
        elif m.type == "focus":
            self.presence.said(peer, on_screen=m.on_screen, focus=True)
        elif m.type == "pong":
            self.presence.answered(peer, m)
        else:
            assert_never(m)

    async def _hello(self, peer: Peer, hello: Hello) -> None:
        if hello.agent:  # a link's kind is fixed by its comm: this one is a page's (DESIGN §14)
            raise LoomError(AGENT_HELLO_REFUSED)
        peer.ready = False  # a re-sync: nothing else until it is caught up
        peer.protocol = None if hello.understood else hello.version  # any minor is served
        if peer.protocol is not None:  # never a half-served chat: the notice, nothing else
            self._reply(peer, NoticeMsg(version_notice(peer.protocol), "error"))
            return
        peer.page, peer.documents = True, hello.documents
        peer.pings = hello.minor >= _PINGS_SINCE
        self.presence.said(peer, on_screen=hello.on_screen)
        self._host.renames.heard(hello.notebook_path, hello.server_root)  # renamed?
        log = self._host.floor.log
        if hello.since_seq is not None:
            missed = log.since(hello.since_seq, hello.kernel_session)
            if missed is not None and self.link is not None:
                for data in missed:
                    self.link.send(peer, data)
                peer.ready = True
                return
        if hello.kernel_session not in (None, log.kernel_session):
            self._reply(peer, NoticeMsg("Kernel restarted — history intact.", "info"))
        await self._welcome(peer)

    async def _welcome(self, peer: Peer) -> None:
        from loom_jupyter.host.services.welcome import welcome

        session = await self._host.session_async()
        offer = await self._host.restart_offer_now()  # what a restart took, absent now
        first, running = await welcome(self._host, _supports_subshells(self.link))
        from loom_jupyter.host.commands.slash import SLASH_COMMANDS

        self._reply(peer, replace(first, commands=SLASH_COMMANDS))  # what this kernel offers
        if self.link is not None:
            for data in running:
                self.link.send(peer, data)
        if session.session_id is None:  # nothing said here yet: offer a vanished notebook's
            for orphan in self._host.found.orphans:
                if not orphan.writer_alive:
                    self._reply(peer, NoticeMsg(f"{orphan.hint()} (Run it in a cell.)", "info"))
        if self._host.found.tracked_archive:  # the banner's word, for a page that loaded silently
            self._reply(peer, NoticeMsg(self._host.found.tracked_archive, "warning"))
        if offer:  # what a restart took, and that a rebuild makes it
            self._reply(peer, NoticeMsg(offer.text("/rebuild"), "info"))
        peer.ready = True  # no await since the snapshot: nothing was missed in between

    async def _complete(self, peer: Peer, query: str, kind: str) -> None:
        """What an ``@``-mention being typed may name (variables, cells, files)."""
        from loom_jupyter.host.services.mentions import complete

        session = await self._host.session_async()
        items = await complete(self._host.mention_sources(session), query, kind)
        self._reply(peer, Completions(query, items))

    async def _command(self, peer: Peer, name: str, args: str) -> None:
        """A slash command the kernel answers without the model (``/mcp``, ``/cost``...)."""
        from loom_jupyter.host.commands.slash import run_command

        self._reply(peer, await run_command(self._host, name, args))

    def _send(self, peer: Peer, text: str, client_id: str) -> None:
        """A message for the model, unless it misspells a slash command (``/sesions``,
        issue 40.1): then "did you mean …", and the page takes the text back into its box."""
        from loom_jupyter.host.commands.slash import mistyped
        from loom_jupyter.host.wire.protocol import TurnErrorMsg

        slip = mistyped(text)
        if slip is None:
            self._host.floor.submit(text, client_id)
        else:
            self._reply(peer, TurnErrorMsg(None, slip, "MistypedCommand", client_id))

    async def _where_from(self, peer: Peer, name: str) -> None:
        """Where a variable mentioned in the chat came from (the person hovers it)."""
        from loom_jupyter.host.services.origins import check_name, origin

        variable = check_name(name)
        self._reply(peer, origin(name, await self._host.executions.trace(variable)))

    async def _set_key(self, peer: Peer, key: str) -> None:
        """The key field: store the key outside the notebook; every front hears whether
        there is one now, this front where it was saved or why not (never the key)."""
        self._reply(peer, await self._host.keys.save(key))

    async def _examples(self, peer: Peer) -> None:
        """Example prompts for an empty conversation, from the live namespace."""
        from loom_jupyter.host.services.examples import example_prompts

        session = await self._host.session_async()
        prompts = await example_prompts(self._host.mention_sources(session).kernel)
        self._reply(peer, ExamplesMsg(prompts))

    async def _search(self, peer: Peer, query: str) -> None:
        page = await self._host.views.search_page(query)
        self._reply(peer, SearchResults(page.query, page.hits))
        if page.note:
            self._reply(peer, NoticeMsg(f"The search is long: {page.note} of it.", "info"))


def _supports_subshells(link: CommLink | None) -> bool:
    kernel = link.kernel if link is not None else None
    return bool(getattr(kernel, "_supports_kernel_subshells", False))
