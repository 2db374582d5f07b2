"""After a restart: the offer to rebuild what the conversation used (issue 21, DESIGN §11).

A session resumed in another kernel than the one its variables were made in has lost
them (:meth:`~loom_jupyter.engine.state.SessionState.in_kernel` says the same to the
model). :func:`gone_variables` names them from the session's saved state; the host keeps
only those absent from the live namespace (issue 30: a name re-created before Loom loaded
is not gone), at load and again when a sidebar opens;
:func:`restart_offer` says which of them a rebuild can make again from the archived
executions, in how many steps and about how long (:class:`RestartOffer`: the banner's
line and the sidebar's notice).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

    from loom_jupyter.archive import Archive
    from loom_jupyter.lineage import ExecutionRecord
    from loom_jupyter.records import SessionInfo
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["RestartOffer", "Restarts", "gone_variables", "restart_offer"]

OFFERED = 8  # names put in the offered command; the rest are counted


def gone_variables(info: SessionInfo, owner: str) -> list[str]:
    """The variables ``info``'s conversation used, newest first, if ``owner`` is a new kernel."""
    from loom_jupyter.archive.liveness import kernel_process
    from loom_jupyter.engine.state import SessionState

    state = SessionState.from_json(info.session_state)
    made_in = kernel_process(state.kernel_session)
    if not made_in or made_in == kernel_process(owner):
        return []  # never ran code, or the same kernel (an extension reload)
    return list(dict.fromkeys(v.name for v in reversed(state.variables) if v.name.isidentifier()))


@dataclass(frozen=True)
class RestartOffer:
    """What a restart took that the archived executions can make again, and the cost."""

    names: tuple[str, ...]  # offered, newest first (at most OFFERED)
    more: int  # rebuildable names beyond those
    steps: int  # executions the slice runs
    recorded: int  # executions archived
    estimated_s: float  # their recorded durations, summed
    risky: int  # steps that may write files, use the network or run a subprocess
    wanted: tuple[str, ...] = ()  # every rebuildable name gone (``names`` and the ``more``)

    def text(self, command: str) -> str:
        """The offer, naming ``command`` (``%cowork rebuild`` in a cell, ``/rebuild`` in
        the sidebar)."""
        from loom_jupyter.tools.rebuild import seconds

        shown = " ".join(self.names)
        more = f" (and {self.more} more: `%cowork provenance NAME` for any)" if self.more else ""
        line = (
            f"Variables this conversation used are gone with the previous kernel: "
            f"{', '.join(self.names)}{more}. `{command} {shown}` makes them again: "
            f"{self.steps} of {self.recorded} recorded executions, about "
            f"{seconds(self.estimated_s)}, shown before they run."
        )
        if self.risky:
            line += (
                f" {self.risky} of the steps may write files, use the network or run a "
                "subprocess: add --yes once you have read them."
            )
        return line


def restart_offer(names: Sequence[str], records: Sequence[ExecutionRecord]) -> RestartOffer | None:
    """The offer for the ``names`` the records can make; None when there are none."""
    from loom_jupyter.lineage import plan_rebuild

    if not names:
        return None
    missing = plan_rebuild(records, names).missing
    offered = [name for name in names if name not in missing]
    if not offered:
        return None
    shown = tuple(offered[:OFFERED])
    plan = plan_rebuild(records, shown)
    return RestartOffer(
        names=shown,
        more=len(offered) - len(shown),
        steps=len(plan.steps),
        recorded=len(records),
        estimated_s=plan.estimated_s,
        risky=len(plan.consent_steps),
        wanted=tuple(offered),
    )


class Restarts:
    """The host's part that keeps the restart offer: made at open from what the previous
    kernel took, narrowed when a front asks, dropped once a rebuild made the names again."""

    def __init__(self) -> None:
        self.offer: RestartOffer | None = None

    async def at_open(
        self,
        archive: Archive,
        info: SessionInfo,
        owner: str,
        present: Callable[[Sequence[str]], Collection[str]] | None,
    ) -> None:
        """What the previous kernel took that a rebuild can make again (for the banner);
        ``present`` says which names the live namespace has (any thread)."""
        names = gone_variables(info, owner)
        if names and present is not None:
            there = present(names)  # re-created before Loom loaded: not gone
            names = [name for name in names if name not in there]
        self.offer = restart_offer(names, await archive.executions()) if names else None

    async def now(self, session: CoworkSession, archive: Archive) -> RestartOffer | None:
        """The offer narrowed to the names absent from the namespace now, the session's
        kernel facts read again (engine loop; a sidebar's welcome)."""
        await session.check_kernel()
        offer = self.offer
        if offer is None:
            return None
        wanted = offer.wanted or offer.names
        try:
            there = await session.kernel.fingerprints(wanted)
        except LoomError:  # the namespace cannot be read now: the offer as last checked
            return offer
        if any(name in there for name in wanted):
            names = [name for name in wanted if name not in there]
            self.offer = restart_offer(names, await archive.executions()) if names else None
        return self.offer

    def taken(self) -> None:
        """A rebuild made the names again: a front opened now is not offered it."""
        self.offer = None
