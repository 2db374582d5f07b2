"""Sequence numbers and the ring buffer that lets a reloaded front catch up.

Every broadcast event gets the next ``seq`` and is kept (the newest
``capacity``); a front that comes back with ``since_seq`` from the same
``kernel_session`` gets exactly the events after it, or ``None`` when some of
them are gone (it then gets a welcome built from the archive).
"""

from __future__ import annotations

import threading
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

from loom_jupyter.host.wire.protocol import encode

if TYPE_CHECKING:
    from loom_jupyter.host.wire.protocol import Outbound

__all__ = ["EventLog"]


class EventLog:
    """Numbers, stamps and remembers the broadcast events of one kernel session."""

    def __init__(self, capacity: int = 2000, kernel_session: str | None = None) -> None:
        self.kernel_session = kernel_session or uuid.uuid4().hex
        self._events: deque[dict[str, Any]] = deque(maxlen=capacity)
        self._seq = 0
        self._lock = threading.Lock()  # tasks and notices may be published from other threads

    @property
    def seq(self) -> int:
        """The last seq given out (0 before the first event)."""
        return self._seq

    def record(self, message: Outbound, turn: int | None) -> dict[str, Any]:
        """Stamp ``message`` with the next seq and keep it."""
        with self._lock:
            self._seq += 1
            data = encode(message, seq=self._seq, kernel_session=self.kernel_session, turn=turn)
            self._events.append(data)
            return data

    def reply(self, message: Outbound, turn: int | None = None, to: str = "") -> dict[str, Any]:
        """Stamp a reply to one front: the current seq, not advanced, not kept; ``to`` is the
        request id it answers (``""``: its message had none), sent as ``reply_to``."""
        seq, session = self._seq, self.kernel_session
        return encode(message, seq=seq, kernel_session=session, turn=turn, reply_to=to)

    def since(self, seq: int, kernel_session: str | None) -> list[dict[str, Any]] | None:
        """The events after ``seq``; None when they are not all here (another session, a gap)."""
        with self._lock:
            if kernel_session != self.kernel_session or seq > self._seq or seq < 0:
                return None
            oldest = self._events[0]["seq"] if self._events else self._seq + 1
            if seq + 1 < oldest:
                return None
            return [event for event in self._events if event["seq"] > seq]
