"""Folder trust and the approval mode, as every front sees them (DESIGN §12).

The magic (``%cowork trust``, ``%cowork approval``), the sidebar's trust card and
``/trust`` all come through here: the decision is recorded by the session
(:meth:`~loom_jupyter.session.conversation.CoworkSession.trust_folder`), and every
sidebar is told the folder's trust and the approval mode now in force.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from loom_jupyter.host.wire.protocol import ApprovalModeMsg, ApprovalModeView, TrustMsg, TrustView

if TYPE_CHECKING:
    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.upkeep.location import NotebookLocation
    from loom_jupyter.session.conversation import CoworkSession
    from loom_jupyter.settings import ApprovalMode, SettingSource
    from loom_jupyter.trust import FolderTrust, TrustAnswer, TrustDecision

__all__ = [
    "TrustHost",
    "approval_view",
    "decide_trust",
    "set_approval",
    "show_trust",
    "trust_view",
]


class TrustHost(Protocol):
    """What these need of the :class:`~loom_jupyter.host.host.Host`."""

    location: NotebookLocation
    folder_trust: FolderTrust | None

    @property
    def floor(self) -> TurnFloor:
        """Where every front's messages are broadcast."""
        ...

    async def session_async(self) -> CoworkSession:
        """The conversation."""
        ...

    def approval_mode(self) -> tuple[ApprovalMode, SettingSource]:
        """The approval mode in force and its source."""
        ...


def approval_view(host: TrustHost) -> ApprovalModeView:
    """The approval mode in force and where it came from."""
    mode, source = host.approval_mode()
    return ApprovalModeView(mode, source)


def trust_view(trust: FolderTrust) -> TrustView:
    """The trust card's content: exactly what the folder asks for as read, and its digest."""
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


async def decide_trust(
    host: TrustHost, decision: TrustDecision, *, shown: str | None, with_approval: bool = False
) -> TrustAnswer:
    """Record the person's decision about the folder as ``shown`` (that view's digest);
    tell every front the trust and the mode now. A folder that changed since it was shown
    is not recorded: its card opens again on what it asks for now."""
    session = await host.session_async()
    answer = await session.trust_folder(decision, shown=shown, with_approval=with_approval)
    host.folder_trust = answer.trust
    host.floor.broadcast(TrustMsg(trust_view(answer.trust), show=not answer.recorded))
    host.floor.broadcast(ApprovalModeMsg(approval_view(host)))
    return answer


async def show_trust(host: TrustHost) -> FolderTrust:
    """The folder's trust read again now, with the card opened on every front (``/trust``)."""
    from loom_jupyter.trust import folder_trust

    trust = folder_trust(host.location.path)
    host.floor.broadcast(TrustMsg(trust_view(trust), show=True))
    return trust


async def set_approval(host: TrustHost, mode: ApprovalMode) -> None:
    """The person switches the approval mode (``%cowork approval``); every front is told."""
    session = await host.session_async()
    session.options.set_approval(mode)
    host.floor.broadcast(ApprovalModeMsg(approval_view(host)))
