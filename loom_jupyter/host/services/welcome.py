"""A front's first view (``welcome``): the session, its newest history, the floor's state,
the trust, the key and the options, and the running turn's messages so far."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from loom_jupyter.host.services.options import model_options
from loom_jupyter.host.services.trust import trust_view
from loom_jupyter.host.wire.protocol import PROTOCOL_VERSION, Welcome

if TYPE_CHECKING:
    from loom_jupyter.host.runtime.floor import TurnFloor
    from loom_jupyter.host.services.keys import KeyNotices
    from loom_jupyter.host.services.trust import TrustKeeper
    from loom_jupyter.host.services.views import Views
    from loom_jupyter.session.conversation import CoworkSession

__all__ = ["WelcomeHost", "welcome"]


class WelcomeHost(Protocol):
    """What a welcome reads of the :class:`~loom_jupyter.host.host.Host`."""

    trust: TrustKeeper
    keys: KeyNotices

    @property
    def floor(self) -> TurnFloor:
        """The floor: the running turn, the queue, the tasks."""
        ...

    @property
    def views(self) -> Views:
        """History, the session's summary, usage."""
        ...

    @property
    def kernel_process(self) -> str:
        """This kernel's process, by an opaque name."""
        ...

    def session_or_none(self) -> CoworkSession | None:
        """The conversation once open."""
        ...


async def welcome(host: WelcomeHost, subshells: bool) -> tuple[Welcome, list[dict[str, Any]]]:
    """The first view for a front, and the running turn's messages to send right after it.
    The reads are taken again when a turn starts or ends while they are read."""
    floor, views = host.floor, host.views
    for _ in range(3):
        running = floor.mirror
        before = running.turn if running is not None and running.turn else None
        items, more = await views.history(before)
        summary = await views.summary()
        usage = await views.usage()  # a running turn's own usage follows it
        if floor.mirror is running:
            break
    session = host.session_or_none()
    first = Welcome(
        session=summary,
        history=items,
        more_before=more,
        busy=running is not None,
        state=floor.state,
        queue=floor.queue.items(),
        subshells=subshells,
        tasks=tuple(floor.tasks.values()),
        options=model_options(session) if session is not None else None,
        approval=host.trust.approval_view(),
        trust=trust_view(host.trust.read()),
        has_key=host.keys.has_key(),
        protocol=PROTOCOL_VERSION,
        kernel_process=host.kernel_process,
        usage=usage,
    )
    host.keys.welcomed(first.has_key)
    return first, list(running.sent) if running is not None else []
