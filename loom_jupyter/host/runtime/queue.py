"""The sidebar's message queue: messages sent while a turn runs, run next in order.

Client ids make a resend (after a reconnect) harmless: an id seen before is
not queued or run again. The set of seen ids is bounded.
"""

from __future__ import annotations

from collections import OrderedDict

from loom_jupyter.host.wire.protocol import Queued

__all__ = ["SendQueue"]

_REMEMBERED = 4096


class SendQueue:
    """Pending sidebar messages plus the ids already accepted."""

    def __init__(self) -> None:
        self._pending: OrderedDict[str, str] = OrderedDict()
        self._seen: OrderedDict[str, None] = OrderedDict()

    def accept(self, client_id: str) -> bool:
        """Remember ``client_id``; False when it was seen before (a resend)."""
        if client_id in self._seen:
            return False
        self._seen[client_id] = None
        if len(self._seen) > _REMEMBERED:
            self._seen.popitem(last=False)
        return True

    def push(self, client_id: str, text: str) -> None:
        """Queue a message to run after the current turn."""
        self._pending[client_id] = text

    def pop(self) -> Queued | None:
        """The next message, removed from the queue."""
        if not self._pending:
            return None
        client_id, text = self._pending.popitem(last=False)
        return Queued(client_id, text)

    def cancel(self, client_id: str) -> bool:
        """Drop a queued message; False when it is not queued (already started or unknown)."""
        return self._pending.pop(client_id, None) is not None

    def items(self) -> tuple[Queued, ...]:
        """The queue, in order."""
        return tuple(Queued(c, t) for c, t in self._pending.items())
