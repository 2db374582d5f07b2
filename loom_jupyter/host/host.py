"""The host of one kernel's coworker: archive, session, turns and the event stream.

:class:`Host` imports nothing of Jupyter. It opens the notebook's archive and session
on its own engine thread (:class:`~loom_jupyter.host.runtime.loop_thread.LoopThread`), runs
every turn through one driver (:meth:`Host.turn`) on its :class:`TurnFloor`, routes
approvals, and publishes one typed stream that the fronts (the cell, the panel, the
sidebar) subscribe to. Fronts ask it for history, sessions, search and the panel's
data (:mod:`loom_jupyter.host.services.views`); none of them opens the archive itself. The
Jupyter side hands in what only it can build (the kernel bridge, the stdin approver,
the note of the person's cells) as :class:`KernelPorts`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import LeaseHeldError, LoomError
from loom_jupyter.host.runtime.document import FrontDocument
from loom_jupyter.host.runtime.loop_thread import LoopThread

# The archive, the floor and the protocol's messages are imported where first used: the
# archive on the engine thread as it opens, the floor and the protocol with the session
# (after ``%load_ext``'s banner) or a front's first message.
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Collection, Sequence
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.runtime.mirror import Source
    from loom_jupyter.host.runtime.stream import Subscriber
    from loom_jupyter.host.services.mentions import MentionSources
    from loom_jupyter.host.services.restart import RestartOffer
    from loom_jupyter.host.services.views import Views
    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.models.base import Model
    from loom_jupyter.session.conversation import CoworkSession
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.approval import Approver
    from loom_jupyter.tools.base import KernelBridge

__all__ = ["Host", "KernelPorts"]


@dataclass(frozen=True)
class KernelPorts:
    """What the Jupyter side builds for the session (called on the engine thread)."""

    bridge: Callable[[], KernelBridge]
    approver: Callable[[], Approver]
    before_turn: Callable[[CoworkSession], Awaitable[None]] | None = None
    opened: Callable[[CoworkSession], Awaitable[None]] | None = None  # delegation's hooks
    # Which of these names the live namespace has (any thread, never blocks): the restart
    # offer at load names only the absent ones (issue 30).
    present: Callable[[Sequence[str]], Collection[str]] | None = None


class Host:
    """One kernel's coworker, without Jupyter: open, turns, stream, queries, close.

    A composition root: the parts own their state and what they tell the fronts —
    :attr:`trust` (the folder's trust and the approval mode), :attr:`keys` (the API key
    notices), :attr:`restarts` (the rebuild offer), :attr:`executions` (the execution log
    and provenance), :attr:`renames` (the notebook's new name), :attr:`found` (what the
    archive said at open, for the banner)."""

    def __init__(
        self, location: NotebookLocation, *, model: Model | None = None, owner: str | None = None
    ) -> None:
        from loom_jupyter.host.services.executions import ExecutionLog
        from loom_jupyter.host.services.keys import KeyNotices
        from loom_jupyter.host.services.opening import OpenFacts
        from loom_jupyter.host.services.restart import Restarts
        from loom_jupyter.host.services.switches import Switches
        from loom_jupyter.host.services.trust import TrustKeeper
        from loom_jupyter.host.upkeep.renames import Renames

        self.location = location
        self._model = model  # None: the Anthropic adapter built from settings
        self._owner = owner  # a successor keeps its lease owner; else made on first use
        self.loop_thread = LoopThread()
        self._floor: TurnFloor | None = None  # made on first use (it imports the protocol)
        self._subscribers: list[Subscriber] = []  # the floor's first subscribers
        self._made = threading.Lock()  # the main thread and the engine loop may both ask
        self.document = FrontDocument(self.loop_thread.loop)
        self._ports: KernelPorts | None = None
        self._archive: Archive | None = None
        self._session: CoworkSession | None = None
        self._views: Views | None = None
        self.found = OpenFacts()
        self.trust = TrustKeeper(
            location, lambda: self.floor, self.session_or_none, self.session_async
        )
        self.keys = KeyNotices(lambda: self.floor, self._settings_now)
        self.restarts = Restarts()
        self.executions = ExecutionLog(
            self.loop_thread, lambda: self._archive, self.session_or_none
        )
        self.renames = Renames(location)
        self.switches = Switches(self.session_async, lambda: self.views, lambda: self.floor)
        self.opening: concurrent.futures.Future[None] | None = None
        self.peeked: concurrent.futures.Future[None] = concurrent.futures.Future()
        # Released by the front once its own loading is done: the session's heavy imports
        # then run on the engine thread without slowing it.
        self.loaded: concurrent.futures.Future[None] = concurrent.futures.Future()

    @property
    def kernel_process(self) -> str:
        """An opaque name of this kernel's process: the same after an extension reload, new
        after a kernel restart (a page's "kernel restarted" notice compares it)."""
        import hashlib

        from loom_jupyter.archive.liveness import kernel_process

        return hashlib.sha256(kernel_process(self.owner).encode()).hexdigest()[:16]

    @property
    def owner(self) -> str:
        """This coworker's lease owner, made once (any thread)."""
        with self._made:
            if self._owner is None:
                from loom_jupyter.archive.liveness import this_process_owner

                self._owner = str(this_process_owner())
            return self._owner

    @property
    def floor(self) -> TurnFloor:
        """The turn floor (turns, queue, approvals, the stream), made on first use."""
        with self._made:
            if self._floor is None:
                from loom_jupyter.host.runtime.floor import TurnFloor

                floor = TurnFloor(self.loop_thread.loop, self.session_now, self._queued_turn)
                floor.subscribers.extend(self._subscribers)
                self._floor = floor
            return self._floor

    def subscribe(self, subscriber: Subscriber) -> None:
        """Add a subscriber of the stream, without making the floor before it is needed."""
        with self._made:
            waiting = self._subscribers if self._floor is None else self._floor.subscribers
            waiting.append(subscriber)

    # -- lifecycle ------------------------------------------------------------------------

    def start(self, ports: KernelPorts) -> concurrent.futures.Future[None]:
        """Open the archive and, once :attr:`loaded` is set, the session (engine thread)."""
        self._ports = ports
        self.opening = self.loop_thread.submit(self._open())
        return self.opening

    async def _open(self) -> None:
        from loom_jupyter.archive import Archive, archive_path_for
        from loom_jupyter.archive.paths import earlier_archive
        from loom_jupyter.host.services.opening import peek
        from loom_jupyter.trust import load_settings

        settings, self.trust.found = load_settings(self.location.path)
        self.trust.settings = settings
        path = archive_path_for(self.location.path)
        earlier = earlier_archive(self.location.path)  # archive_dir set, .loom/ still holds one
        self._archive = await Archive.open(
            path, busy_timeout=settings.busy_timeout_seconds, journal_mode=settings.journal_mode
        )
        self.document.archive = self._archive
        present = self._ports.present if self._ports is not None else None
        self.found, held = await peek(
            self._archive,
            settings,
            owner=self.owner,
            location=self.location,
            earlier=earlier,
            restarts=self.restarts,
            present=present,
        )
        self.peeked.set_result(None)
        await asyncio.wrap_future(self.loaded)
        await self._open_session(settings, resume=not held)

    async def _open_session(self, settings: Settings, *, resume: bool) -> None:
        from loom_jupyter.session.conversation import CoworkSession

        assert self._archive is not None
        assert self._ports is not None
        options: dict[str, Any] = {
            "notebook_path": self.location.path,
            "settings": settings,
            "kernel": self._ports.bridge(),
            "approver": self._ports.approver(),
            "owner": self.owner,
            "model": self._model,
            "trust": self.trust.found,
        }
        try:
            self._session = await CoworkSession.open(self._archive, resume=resume, **options)
        except LeaseHeldError:  # taken between the peek and now
            self._session = await CoworkSession.open(self._archive, resume=False, **options)
            self.found = self.found.held_elsewhere()
        self._session.environment.document = self.document
        # a turn the floor began (edits note, mentions) before the session's send runs it
        self._session.add_busy_probe(lambda: "A turn" if self.floor.answering else None)
        self.trust.opened(self._session)
        if self._ports.opened is not None:
            await self._ports.opened(self._session)

    def close(self, timeout: float = 5.0) -> None:
        """Release the lease, close the archive and stop the engine thread (any thread but
        the engine's); safe to call twice."""
        if not self.loop_thread.alive:
            return
        try:
            if self.opening is not None:
                self.opening.result(timeout=30.0)
            self.loop_thread.run(self._close(), timeout=timeout)
        except (LoomError, concurrent.futures.TimeoutError, RuntimeError):
            pass  # shutting down: a stale lease expires on its own
        finally:
            self.loop_thread.stop()

    async def _close(self) -> None:
        try:
            if self._session is not None:
                await self._session.close()
        finally:  # a damaged archive refuses the lease release: still close the file
            if self._archive is not None:
                await self._archive.close()

    # -- access -----------------------------------------------------------------------------

    def session_now(self) -> CoworkSession:
        """The conversation, from the engine loop once opening is done."""
        if self._session is None:
            raise LoomError("loom is still opening this notebook's archive; try again")
        return self._session

    async def session_async(self) -> CoworkSession:
        """The conversation, awaited on the engine loop (opening may still run)."""
        if self.opening is not None and not self.opening.done():
            await asyncio.wrap_future(self.opening)
        return self.session_now()

    def session_or_none(self) -> CoworkSession | None:
        """The conversation once open, else ``None`` (any thread)."""
        return self._session

    def _settings_now(self) -> Settings | None:
        """The settings in force: the session's once open, else as loaded at open."""
        return self._session.settings if self._session is not None else self.trust.settings

    def storage_line(self) -> str:
        """``%cowork status``'s line: the archive's path, filesystem and journal (DESIGN §13)."""
        archive = self._archive
        if archive is None or archive.storage is None:
            return "Archive: still opening."
        return archive.storage.summary() + "."

    @property
    def archive_path(self) -> Path:
        """The notebook's archive file (the banner's: without the views' imports)."""
        if self._archive is None:
            raise LoomError("loom is not loaded: run %load_ext loom_jupyter first")
        return self._archive.path

    @property
    def views(self) -> Views:
        """History, sessions, search, the panel's data and the archive's upkeep."""
        if self._archive is None:
            raise LoomError("loom is not loaded: run %load_ext loom_jupyter first")
        if self._views is None or self._views.archive is not self._archive:
            from loom_jupyter.host.services.views import Views

            self._views = Views(self._archive, self)
        return self._views

    @property
    def idle(self) -> bool:
        """No turn is running (delegations are the front's to count)."""
        session = self._session
        return session is None or not session.busy

    # -- turns ----------------------------------------------------------------------------

    async def turn(self, source: Source, text: str, client_id: str | None = None) -> None:
        """One turn from any front, the one driver (engine loop): every subscriber sees it
        as it streams. A cell's turn ends here; a queued one is ended by the floor, which
        then starts the next."""
        session = await self.session_async()
        self.floor.begin(source, text, client_id)  # raises while another turn runs
        try:
            terminal = self.location.source == "terminal"  # plain IPython: no cells, no sidebar
            problem = self.keys.before_turn("terminal" if terminal else "notebook")
            if problem:  # not sent: the sidebar puts the text back in its box, shows the key field
                from loom_jupyter.host.wire.protocol import TurnErrorMsg

                error = TurnErrorMsg(None, problem, "MissingKeyError", client_id)
                self.floor.publish_message(error)
                return
            for note in await self._notes_before_turn(session):
                await session.append_note(note)
            from loom_jupyter.host.services.mentions import expand_mentions

            # @-mentions add their objects' summaries, marked, from a cell as from the sidebar
            text = await expand_mentions(self.mention_sources(session), text)
            async for event in session.send(text, front=source):
                await self.floor.publish(event)
        finally:
            if source == "cell":
                self.floor.end()

    async def _notes_before_turn(self, session: CoworkSession) -> list[str]:
        """What the model hears before the person's message: the person's cell edits, what
        outside agents did since the last turn; then the front's own hook runs."""
        from loom_jupyter.host.services.outside import outside_note

        notes = [await self.document.edits_note(), outside_note(self.floor)]
        if self._ports is not None and self._ports.before_turn is not None:
            await self._ports.before_turn(session)
        return [note for note in notes if note]

    def mention_sources(self, session: CoworkSession) -> MentionSources:
        """Where the sidebar's ``@``-mentions are looked up (completion and sending)."""
        from loom_jupyter.host.services.mentions import MentionSources

        return MentionSources(
            kernel=session.kernel,
            folder=self.location.directory,
            notebook=self.location.path,
            document=self.document,
            settings=session.settings,
        )

    async def _queued_turn(self, text: str, client_id: str | None) -> None:
        await self.turn("sidebar", text, client_id)

    async def stop(self) -> None:
        """Stop the running turn and every delegated subtask."""
        await self.session_async()
        self.floor.stop()

    async def restart_offer_now(self) -> RestartOffer | None:
        """The restart offer narrowed to the names absent from the namespace now."""
        session = await self.session_async()
        if self._archive is None:
            return None
        return await self.restarts.now(session, self._archive)

    async def revert_turn(self, turn: int) -> None:
        """Undo turn ``turn``'s notebook changes, or name the cells changed since; every
        front and the model are told which."""
        from loom_jupyter.host.services.revert import revert_turn

        if self.floor.mirror is not None:
            raise LoomError("A turn is running: stop it or wait before reverting a turn.")
        session = await self.session_async()
        if self._archive is not None:
            await revert_turn(session, self._archive, self.document, self.floor, turn)
