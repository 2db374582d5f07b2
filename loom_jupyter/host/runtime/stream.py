"""The host's one event stream: what every front (cell, panel, sidebar) subscribes to.

Each item is either an engine event of the running turn, together with the protocol
messages it became, or a message of the host's own (status, queue, notice, task
progress, approvals, a session switch). Messages are numbered by the host's
:class:`~loom_jupyter.host.runtime.replay.EventLog`, so a sidebar can replay them by ``seq``.
Subscribers are called on the engine loop and must not block: a front that draws on
the kernel's main thread posts there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loom_jupyter.engine.events import Event
    from loom_jupyter.host.runtime.mirror import Source
    from loom_jupyter.host.wire.protocol import Outbound

__all__ = ["HostMessage", "Published", "Subscriber", "TurnEvent", "fan_out"]


@dataclass(frozen=True)
class TurnEvent:
    """An engine event of the running turn and the numbered messages it became."""

    event: Event
    source: Source
    sent: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class HostMessage:
    """A message of the host's own, numbered."""

    message: Outbound
    sent: dict[str, Any]


Published = TurnEvent | HostMessage
Subscriber = Callable[[Published], None]
"""A front's callback (engine loop)."""

_log = logging.getLogger(__name__)


def fan_out(subscribers: list[Subscriber], item: Published) -> None:
    """Give ``item`` to every subscriber; one failing front never stops the others."""
    for subscriber in list(subscribers):
        try:
            subscriber(item)
        except Exception:
            _log.exception("a front failed on the host's stream")
