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
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import assert_never

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
    from loom_jupyter.host.upkeep.relocate import Orphan
    from loom_jupyter.host.wire.protocol import ModelOptions, Welcome
    from loom_jupyter.lineage import ExecutionRecord, VariableTrace
    from loom_jupyter.models.base import Model
    from loom_jupyter.records import SessionInfo
    from loom_jupyter.session.conversation import CoworkSession
    from loom_jupyter.settings import ApprovalMode, Settings, SettingSource
    from loom_jupyter.tools.approval import Approver
    from loom_jupyter.tools.base import KernelBridge
    from loom_jupyter.trust import FolderTrust

__all__ = ["LEASE_MESSAGE", "MISSING_KEY", "Host", "KernelPorts", "missing_key_message"]

LEASE_MESSAGE = (
    "The latest session of this notebook is being written by another live kernel. "
    "This kernel starts a new session instead; once the other kernel is shut down, "
    "%cowork resume 1 continues the earlier one."
)


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


MISSING_KEY = (
    "No Anthropic API key yet. Run %cowork login in a cell (it asks for the key without "
    "showing it) or paste it into the key field of the Loom sidebar: either keeps it outside "
    "the notebook, its folder and the archive. Or run export ANTHROPIC_API_KEY=... in the "
    "terminal before starting Jupyter. Then send your message again."
)
_MISSING_KEY_AT: dict[str, str] = {
    "console": (
        "No Anthropic API key yet. Run %cowork login here (it asks for the key without "
        "showing it and keeps it outside your folders and the archive), or run export "
        "ANTHROPIC_API_KEY=... in the shell before starting the kernel (jupyter console). "
        "Then send your message again."
    ),
    "terminal": (
        "No Anthropic API key yet. Run %cowork login here (it asks for the key without "
        "showing it and keeps it outside your folders and the archive), or run export "
        "ANTHROPIC_API_KEY=... in the shell before starting IPython. Then send your message "
        "again."
    ),
}


def missing_key_message(
    front: Literal["notebook", "console", "terminal"] = "notebook",
) -> str | None:
    """The message shown when no API key is configured (environment or stored), else None,
    in the words of the ``front`` in use (a console or a terminal has no cells or sidebar).

    The store is read again each time (once a turn): a key saved by another kernel counts."""
    import loom_jupyter.apikey as apikey

    return None if apikey.key_state().has_key else _MISSING_KEY_AT.get(front, MISSING_KEY)


class Host:
    """One kernel's coworker, without Jupyter: open, turns, stream, queries, close."""

    def __init__(
        self, location: NotebookLocation, *, model: Model | None = None, owner: str | None = None
    ) -> None:
        self.location = location
        self._model = model  # None: the Anthropic adapter built from settings
        self._owner = owner  # a successor keeps its lease owner; else made on first use
        self.loop_thread = LoopThread()
        self._floor: TurnFloor | None = None  # made on first use (it imports the protocol)
        self._subscribers: list[Subscriber] = []  # the floor's first subscribers
        self._made = threading.Lock()  # the main thread and the engine loop may both ask
        self.document = FrontDocument(self.loop_thread.loop)
        self.lease_message: str | None = None
        self.crash_message: str | None = None  # the previous kernel died holding the session
        self.restart_offer: RestartOffer | None = None  # what a restart took; a rebuild makes it
        self.tracked_archive: str | None = None  # the banner's line: git tracks the archive
        self.storage_notes: tuple[str, ...] = ()  # the banner's: filesystem, journal (DESIGN §13)
        self.where_notes: tuple[str, ...] = ()  # the banner's: notebook unknown, earlier archive
        self.resumed: SessionInfo | None = None  # the session resumed at open, if any
        self.resumed_prompts = 0  # how many messages the person sent in it
        self.orphans: list[Orphan] = []  # conversations of vanished notebooks beside this one
        self.renamed_to: NotebookLocation | None = None  # the notebook's new name, to follow
        self.on_renamed: Callable[[], None] | None = None  # any thread: follow it when idle
        self.settings: Settings | None = None  # as loaded at open (the banner's approval)
        self.folder_trust: FolderTrust | None = None  # the folder's trust as found at open
        self.trust_told: str | None = None  # the banner said the folder is untrusted (digest)
        self.fronts_lack_key = False  # a front was told there is no key (tell it when there is)
        self._ports: KernelPorts | None = None
        self._archive: Archive | None = None
        self._session: CoworkSession | None = None
        self._views: Views | None = None
        self.opening: concurrent.futures.Future[None] | None = None
        self.peeked: concurrent.futures.Future[None] = concurrent.futures.Future()
        # Released by the front once its own loading is done: the session's heavy imports
        # then run on the engine thread without slowing it.
        self.loaded: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.kernel_run = uuid.uuid4().hex  # this kernel's run, on its execution records

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
        from loom_jupyter.trust import load_settings

        settings, self.folder_trust = load_settings(self.location.path)
        self.settings = settings
        path = archive_path_for(self.location.path)
        earlier = earlier_archive(self.location.path)  # archive_dir set, .loom/ still holds one
        self._archive = await Archive.open(
            path, busy_timeout=settings.busy_timeout_seconds, journal_mode=settings.journal_mode
        )
        self.document.archive = self._archive
        self.where_notes = await _where_notes(self.location, self._archive, earlier)
        held = await self._peek(self._archive, settings)
        self.peeked.set_result(None)
        await asyncio.wrap_future(self.loaded)
        await self._open_session(settings, resume=not held)

    async def _peek(self, archive: Archive, settings: Settings) -> bool:
        """The session to resume, for the banner; True when another live kernel holds it."""
        from loom_jupyter.archive.gitindex import tracked_note

        self.tracked_archive = tracked_note(archive.path)  # read from .git/index; git not run
        self.storage_notes = archive.storage.notes() if archive.storage else ()
        self.resumed = await archive.latest_active_session()  # a moved notebook keeps it
        held = self.resumed is not None and await archive.lease_is_held(
            self.resumed.id, self.owner, stale_after=settings.lease_stale_seconds
        )
        if held:
            self.lease_message, self.resumed = LEASE_MESSAGE, None
        elif self.resumed is not None and self.resumed.lease_owner:
            self.crash_message = await _crash_line(archive, self.resumed)
        if self.resumed is not None:
            self.resumed_prompts = (await archive.prompt_counts([self.resumed.id]))[self.resumed.id]
            self.restart_offer = await self._restart_offer(archive, self.resumed)
        if self.resumed is None and not held and not await archive.list_sessions(limit=1):
            from loom_jupyter.host.upkeep.relocate import find_orphans

            self.orphans = await find_orphans(self.location, settings.lease_stale_seconds)
        return held

    async def _restart_offer(self, archive: Archive, info: SessionInfo) -> RestartOffer | None:
        """What the previous kernel took that a rebuild can make again (for the banner)."""
        from loom_jupyter.host.services.restart import gone_variables, restart_offer

        names = gone_variables(info, self.owner)
        if names and self._ports is not None and self._ports.present is not None:
            there = self._ports.present(names)  # re-created before Loom loaded: not gone
            names = [name for name in names if name not in there]
        return restart_offer(names, await archive.executions()) if names else None

    async def restart_offer_now(self) -> RestartOffer | None:
        """The restart offer narrowed to the names absent from the namespace now, and the
        session's kernel facts read again (engine loop; a sidebar's welcome)."""
        from loom_jupyter.host.services.restart import restart_offer

        session = await self.session_async()
        await session.check_kernel()
        offer = self.restart_offer
        if offer is None:
            return None
        wanted = offer.wanted or offer.names
        try:
            there = await session.kernel.fingerprints(wanted)
        except LoomError:  # the namespace cannot be read now: the offer as last checked
            return offer
        if any(name in there for name in wanted):
            names = [name for name in wanted if name not in there]
            self.restart_offer = restart_offer(names, await self.executions()) if names else None
        return self.restart_offer

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
            "trust": self.folder_trust,
        }
        try:
            self._session = await CoworkSession.open(self._archive, resume=resume, **options)
        except LeaseHeldError:  # taken between the peek and now
            self._session = await CoworkSession.open(self._archive, resume=False, **options)
            self.lease_message, self.resumed = LEASE_MESSAGE, None
        self._session.document = self.document
        # a turn the floor began (edits note, mentions) before the session's send runs it
        self._session.add_busy_probe(lambda: "A turn" if self.floor.answering else None)
        self._session.trust_told = self.trust_told
        if self._ports.opened is not None:
            await self._ports.opened(self._session)

    def approval_mode(self) -> tuple[ApprovalMode, SettingSource]:
        """The approval mode in force and where it came from (DESIGN §12)."""
        if self._session is not None:
            return self._session.policy.mode, self._session.policy.source
        if self.settings is not None:
            return self.settings.approval, self.settings.source_of("approval")
        return "ask", "default"

    def untrusted_line(self) -> str:
        """The banner's word on an untrusted folder (the first turn then does not repeat it:
        a non-interactive run says so once)."""
        trust = self.trust_now()
        if trust is None or trust.trusted:
            return ""
        self.trust_told = trust.request.digest
        if self._session is not None:
            self._session.trust_told = self.trust_told
        return trust.summary()

    def trust_read(self) -> FolderTrust:
        """The folder's trust read now: a card shows what the folder holds when it opens,
        not what it held when the notebook did (its answer is bound to that read)."""
        from loom_jupyter.trust import folder_trust

        return folder_trust(self.location.path)

    def trust_now(self) -> FolderTrust | None:
        """The folder's trust as the session last checked it (as found at open before)."""
        if self._session is not None and self._session.trust is not None:
            return self._session.trust
        return self.folder_trust

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
            front: Literal["notebook", "terminal"] = "terminal" if terminal else "notebook"
            problem = (
                missing_key_message(front) if session.settings.provider == "anthropic" else None
            )
            if problem:  # not sent: the sidebar puts the text back in its box, shows the key field
                from loom_jupyter.host.wire.protocol import TurnErrorMsg

                error = TurnErrorMsg(None, problem, "MissingKeyError", client_id)
                self.floor.publish_message(error)
                self.fronts_lack_key = True
                return
            if self.fronts_lack_key:  # a key came another way (the environment, a file)
                from loom_jupyter.host.services.keys import tell_key

                tell_key(self)
            note = await self.document.edits_note()
            if note:
                await session.append_note(note)
            from loom_jupyter.host.services.outside import outside_note

            told = outside_note(self.floor)  # what outside agents did since the last turn
            if told:
                await session.append_note(told)
            if self._ports is not None and self._ports.before_turn is not None:
                await self._ports.before_turn(session)
            from loom_jupyter.host.services.mentions import expand_mentions

            # @-mentions add their objects' summaries, marked, from a cell as from the sidebar
            text = await expand_mentions(self.mention_sources(session), text)
            async for event in session.send(text):
                await self.floor.publish(event)
        finally:
            if source == "cell":
                self.floor.end()

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

    # -- sessions ---------------------------------------------------------------------------

    async def switch(
        self, kind: Literal["resume", "new", "fork"], ref: str = "", at: int | None = None
    ) -> None:
        """Resume the session ``ref`` names, start a new one or fork at turn ``at``; every
        front is told (:class:`SessionChanged`). The session refuses while a turn or a
        delegation runs (:class:`~loom_jupyter.errors.SessionBusyError`)."""
        session = await self.session_async()
        if kind == "resume":
            await session.resume((await self.views.pick(ref)).id)
        elif kind == "fork":
            await session.fork(at_turn=at)
        elif kind == "new":
            await session.new()
        else:
            assert_never(kind)
        await self.session_changed()

    async def session_changed(self) -> None:
        """Tell every front which session is current now, with its newest history."""
        from loom_jupyter.host.wire.protocol import SessionChanged

        items, more = await self.views.history()
        self.floor.broadcast(SessionChanged(await self.views.summary(), items, more))

    async def followed(self, message: str, *, switched: bool) -> None:
        """The conversation followed the notebook's new name: say so (after the session,
        when it changed, so a front's rebuilt view keeps the notice)."""
        from loom_jupyter.host.wire.protocol import NoticeMsg

        if switched:
            await self.session_changed()
        self.floor.broadcast(NoticeMsg(message, "info"))

    async def welcome(self, subshells: bool) -> tuple[Welcome, list[dict[str, Any]]]:
        """A front's first view: the session, its newest history, the floor's state, and the
        running turn's messages so far (to send right after)."""
        floor = self.floor
        for _ in range(3):  # a turn that starts or ends while the page is read: read again
            running = floor.mirror
            before = running.turn if running is not None and running.turn else None
            items, more = await self.views.history(before)
            summary = await self.views.summary()
            usage = await self.views.usage()  # a running turn's own usage follows it
            if floor.mirror is running:
                break
        from loom_jupyter.host.services.keys import has_key
        from loom_jupyter.host.services.trust import approval_view, trust_view
        from loom_jupyter.host.wire.protocol import PROTOCOL_VERSION, Welcome

        welcome = Welcome(
            session=summary,
            history=items,
            more_before=more,
            busy=running is not None,
            state=floor.state,
            queue=floor.queue.items(),
            subshells=subshells,
            tasks=tuple(floor.tasks.values()),
            options=_options(self._session),
            approval=approval_view(self),
            trust=trust_view(self.trust_read()),
            has_key=has_key(self),
            protocol=PROTOCOL_VERSION,
            kernel_process=self.kernel_process,
            usage=usage,
        )
        self.fronts_lack_key = self.fronts_lack_key or not welcome.has_key
        return welcome, list(running.sent) if running is not None else []

    # -- the notebook's cells -------------------------------------------------------------

    async def revert_turn(self, turn: int) -> None:
        """Undo turn ``turn``'s notebook changes, or name the cells changed since; every
        front and the model are told which."""
        from loom_jupyter.cells import CellChange

        if self.floor.mirror is not None:
            raise LoomError("A turn is running: stop it or wait before reverting a turn.")
        session = await self.session_async()
        sid, archive = session.session_id, self._archive
        steps = await archive.cell_changes(sid, turn) if sid and archive else []
        if not steps or sid is None or archive is None:
            self._notice(f"Turn {turn} left no notebook changes to undo.", "info")
            return
        result = await self.document.apply(CellChange("revert", steps=tuple(steps)))
        if result.ok:
            await archive.mark_reverted(sid, turn)
            await session.append_note(f"The person reverted your notebook changes of turn {turn}.")
            self._notice(f"Reverted turn {turn}: {len(steps)} notebook change(s) undone.", "info")
        elif result.code == "conflict":
            cells = ", ".join(result.conflicts)
            self._notice(
                f"Turn {turn} was not reverted: cell(s) {cells} changed since; nothing was "
                "changed.",
                "warning",
            )
        else:
            why = result.error or "no notebook page answered"
            self._notice(f"Turn {turn} was not reverted: {why}", "error")

    def record_execution(self, record: ExecutionRecord) -> None:
        """Archive one execution (issue 21), from any thread; dropped before the archive opens."""
        if self._archive is None or not self.loop_thread.alive:
            return
        from loom_jupyter.tools.output import redact_secrets

        session = self._session
        answering = session.answering if session is not None else None
        agents = record.source != "cell" and record.turn is None  # stamped with its turn
        stamped = replace(
            record,
            turn=answering if agents else record.turn,
            code=redact_secrets(record.code),  # secrets never reach the archive
            error=redact_secrets(record.error) if record.error else record.error,
            kernel_run=self.kernel_run,
            session_id=session.session_id if session is not None else None,
        )
        self.loop_thread.submit(self._record(stamped))

    async def _record(self, record: ExecutionRecord) -> None:
        archive = self._archive
        if archive is not None:
            try:
                await archive.record_execution(record)
            except LoomError:  # a busy or closed archive loses a record, never a cell
                return

    async def executions(self) -> list[ExecutionRecord]:
        """The archived executions, oldest first (engine thread)."""
        return await self._archive.executions() if self._archive is not None else []

    async def provenance(self, name: str) -> VariableTrace:
        """Where ``name`` came from, by the archived executions (engine thread)."""
        from loom_jupyter.lineage import trace

        return trace(await self.executions(), name)

    def _notice(self, text: str, level: Literal["info", "warning", "error"]) -> None:
        from loom_jupyter.host.wire.protocol import NoticeMsg

        self.floor.broadcast(NoticeMsg(text, level))

    # -- the notebook's name ------------------------------------------------------------------

    async def follow_notebook(self, path: str, server_root: str = "") -> None:
        """A front says where the notebook is now (engine loop): follow a rename when idle."""
        from loom_jupyter.host.upkeep.relocate import renamed_location

        location = renamed_location(self.location, path, server_root)
        if location is None:
            return
        self.renamed_to = location  # following twice is harmless: the second finds it done
        if self.on_renamed is not None:
            self.on_renamed()


def _options(session: CoworkSession | None) -> ModelOptions | None:
    from loom_jupyter.host.services.options import model_options

    return model_options(session) if session is not None else None


async def _where_notes(
    location: NotebookLocation, archive: Archive, earlier: Path | None
) -> tuple[str, ...]:
    """The banner's lines on where this kernel writes: a notebook it cannot place (DESIGN
    §13), and a ``.loom/`` archive that ``archive_dir`` leaves behind, unresumed."""
    from loom_jupyter.host.upkeep.location import earlier_archive_note

    notes = [location.unplaced_note(archive.path)]
    if earlier is not None and earlier != archive.path:
        empty = not await archive.list_sessions(limit=1)
        notes.append(earlier_archive_note(earlier, archive.path, empty=empty))
    return tuple(note for note in notes if note)


async def _crash_line(archive: Archive, info: SessionInfo) -> str:
    """What the dead kernel that still names itself ``info``'s writer left (for the banner)."""
    from loom_jupyter.records import LeaseTakeover
    from loom_jupyter.session.recovery import CrashRecovery

    last = info.turn_count
    tail = await archive.get_turns(info.id, max(1, last - 20), last)
    takeover = LeaseTakeover(owner=info.lease_owner or "", heartbeat=info.lease_heartbeat)
    return CrashRecovery.inspect(tail, takeover).banner()
