"""Folder trust and the approval mode, as every front sees them (DESIGN §12).

The magic (``%cowork trust``, ``%cowork approval``), the sidebar's trust card and
``/trust`` all come through the host's :class:`TrustKeeper`: the decision is recorded by
the session (:meth:`~loom_jupyter.session.conversation.CoworkSession.trust_folder`), and
every sidebar is told the folder's trust and the approval mode now in force.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The protocol is imported where a message is made: the host makes this part as
# ``%load_ext`` loads, before the protocol is needed.
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.services.managed import ManagedReport
    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.host.wire.protocol import ApprovalModeView, TrustView
    from loom_jupyter.session.conversation import CoworkSession
    from loom_jupyter.settings import ApprovalMode, Settings, SettingSource
    from loom_jupyter.trust import FolderTrust, TrustAnswer, TrustDecision

__all__ = ["TrustKeeper", "trust_view"]


class TrustKeeper:
    """The host's part for the folder's trust and the approval mode: what was found at
    open, what the banner told, the person's decisions, and every front told of them."""

    def __init__(
        self,
        location: NotebookLocation,
        floor: Callable[[], TurnFloor],
        session: Callable[[], CoworkSession | None],
        opened: Callable[[], Awaitable[CoworkSession]],
    ) -> None:
        self._location = location
        self._floor = floor
        self._session = session  # the conversation once open, else None
        self._opened = opened  # the conversation, awaited (opening may still run)
        self.found: FolderTrust | None = None  # as found at open, then as last decided
        self.settings: Settings | None = None  # as loaded at open (the mode before a session)
        self._told: str | None = None  # the banner said the folder is untrusted (its digest)

    def read(self) -> FolderTrust:
        """The folder's trust read now: a card shows what the folder holds when it opens,
        not what it held when the notebook did (its answer is bound to that read)."""
        from loom_jupyter.trust import folder_trust

        return folder_trust(self._location.path)

    def now(self) -> FolderTrust | None:
        """The folder's trust as the session last checked it (as found at open before)."""
        session = self._session()
        if session is not None and session.environment.folder.current is not None:
            return session.environment.folder.current
        return self.found

    def opened(self, session: CoworkSession) -> None:
        """The conversation is open: it knows what the banner told."""
        session.environment.folder.told = self._told

    def untrusted_line(self) -> str:
        """The banner's word on an untrusted folder (the first turn then does not repeat it:
        a non-interactive run says so once)."""
        trust = self.now()
        if trust is None or trust.trusted:
            return ""
        self._told = trust.request.digest
        session = self._session()
        if session is not None:
            session.environment.folder.told = self._told
        return trust.summary()

    def approval_mode(self) -> tuple[ApprovalMode, SettingSource]:
        """The approval mode in force and where it came from (DESIGN §12)."""
        session = self._session()
        if session is not None:
            return session.policy.mode, session.policy.source
        if self.settings is not None:
            return self.settings.approval, self.settings.source_of("approval")
        return "ask", "default"

    def managed(self) -> ManagedReport | None:
        """The organisation's managed policy in force and what it overrides of what the
        person and the folder set (``None``: no policy; DESIGN §16)."""
        from loom_jupyter.host.services.managed import managed_report

        return managed_report(self.now())

    def approval_view(self) -> ApprovalModeView:
        """The approval mode in force and where it came from, as the fronts show it, with the
        organisation's managed policy and what it overrides (the footer says so; DESIGN §16).
        A policy file that cannot be used is said there too, naming it (Loom runs no turn)."""
        from loom_jupyter.errors import ManagedPolicyError
        from loom_jupyter.host.services.managed import decides_approval
        from loom_jupyter.host.wire.protocol import ApprovalModeView

        mode, source = self.approval_mode()
        try:
            report = self.managed()
        except ManagedPolicyError as exc:
            return ApprovalModeView(mode, source, managed=str(exc))
        if report is None:
            return ApprovalModeView(mode, source)
        return ApprovalModeView(
            mode,
            source,
            managed=report.summary,
            overrides=report.overrides,
            by_policy=decides_approval(mode, report),
        )

    async def decide(
        self, decision: TrustDecision, *, shown: str | None, with_approval: bool = False
    ) -> TrustAnswer:
        """Record the person's decision about the folder as ``shown`` (that view's digest);
        tell every front the trust and the mode now. A folder that changed since it was
        shown is not recorded: its card opens again on what it asks for now."""
        from loom_jupyter.host.wire.protocol import ApprovalModeMsg, TrustMsg

        session = await self._opened()
        answer = await session.trust_folder(decision, shown=shown, with_approval=with_approval)
        self.found = answer.trust
        self._floor().broadcast(TrustMsg(trust_view(answer.trust), show=not answer.recorded))
        self._floor().broadcast(ApprovalModeMsg(self.approval_view()))
        return answer

    async def show(self) -> FolderTrust:
        """The folder's trust read again now, with the card opened on every front (``/trust``)."""
        from loom_jupyter.host.wire.protocol import TrustMsg

        trust = self.read()
        self._floor().broadcast(TrustMsg(trust_view(trust), show=True))
        return trust

    async def set_approval(self, mode: ApprovalMode) -> None:
        """The person switches the approval mode (``%cowork approval``); every front is told."""
        from loom_jupyter.host.wire.protocol import ApprovalModeMsg

        session = await self._opened()
        session.environment.options.set_approval(mode)
        self._floor().broadcast(ApprovalModeMsg(self.approval_view()))


def trust_view(trust: FolderTrust) -> TrustView:
    """The trust card's content: exactly what the folder asks for as read, and its digest."""
    from loom_jupyter.host.wire.protocol import TrustView

    request = trust.request
    return TrustView(
        root=str(request.root),
        status=trust.status,
        asks=tuple(request.lines()),
        digest=request.digest,
        loosens=request.loosens,
        with_approval=trust.with_approval,
        note=trust.note,
    )
