"""The history's prompt cache across requests: each turn's TTL, and the last breakpoint.

A person's message starts a turn: the pause since the last request is what the
session's :class:`~loom_jupyter.engine.cache_policy.CacheRhythm` learns from, and it
picks the TTL the whole turn's history breakpoint gets. The API finds a cached prefix
at most 20 blocks before a breakpoint, so once a tool loop has added more than
:data:`LOOKBACK_BLOCKS` blocks since the last request's breakpoint, that spot is marked
again, as long as the window has not moved since.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.engine.cache_policy import CacheRhythm

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from loom_jupyter.messages import Message
    from loom_jupyter.models.base import CacheTtl

__all__ = ["LOOKBACK_BLOCKS", "HistoryCache", "WindowLayout"]

LOOKBACK_BLOCKS = 16
"""The API finds a cached prefix at most 20 blocks before a breakpoint; past this many
new blocks since the last request's breakpoint, that spot is marked again (a margin
for blocks counted differently)."""


@dataclass(frozen=True)
class WindowLayout:
    """Where the window starts and how far its tool results are cut: a move changes it."""

    first_turn: int
    cut_through: int


@dataclass(frozen=True)
class _Mark:
    """Where the last request's history breakpoint was, and in which window layout."""

    layout: WindowLayout
    message: int
    blocks: int  # content blocks of the history up to and including that message


class HistoryCache:
    """The rhythm and TTL of the history's cache, and where the last breakpoint was."""

    def __init__(self, rhythm: CacheRhythm | None, clock: Callable[[], float]) -> None:
        self.rhythm = rhythm or CacheRhythm()  # kept (its prior too) across restarts
        self.ttl: CacheTtl = "5m"
        self._clock = clock
        self._last_request_at: float | None = None
        self._turn_seen = 0  # the user turn whose first request was built
        self._turn_tokens: int | None = None  # history tokens at that request
        self._mark: _Mark | None = None

    def restart(self, pauses: Sequence[float]) -> None:
        """A new conversation in the window: its rhythm starts from the notebook's pauses."""
        self._mark, self._last_request_at, self._turn_tokens = None, None, None
        self.rhythm = self.rhythm.restart(pauses)

    def prefix_changed(self) -> None:
        """The cache behind the last breakpoint is gone with the prefix before it."""
        self._mark = None

    def requested(self, turn_number: int | None, history_tokens: int) -> None:
        """A request is built (``turn_number``: the person's message it ends with, if any);
        each use restarts the entry's TTL."""
        if turn_number is not None:
            self._new_turn(turn_number, history_tokens)
        self._last_request_at = self._clock()

    def _new_turn(self, turn_number: int, history_tokens: int) -> None:
        """A person's message starts a turn: note the gap since the last request, pick the TTL."""
        if turn_number == self._turn_seen:  # the same turn's request again (a retry)
            return
        if self._last_request_at is not None:
            grew = None if self._turn_tokens is None else history_tokens - self._turn_tokens
            self.rhythm = self.rhythm.observe(self._clock() - self._last_request_at, grew)
        self._turn_seen, self._turn_tokens = turn_number, history_tokens
        self.ttl = self.rhythm.choose(history_tokens)

    def lookback(self, messages: Sequence[Message], layout: WindowLayout) -> tuple[int, ...]:
        """The last request's breakpoint again, when the new one is too far past it to find it."""
        if not messages:
            self._mark = None
            return ()
        end = sum(len(m.content) for m in messages)
        mark, last = self._mark, len(messages) - 1
        self._mark = _Mark(layout, last, end)
        if mark is None or mark.layout != layout:
            return ()
        if mark.message >= last or end - mark.blocks <= LOOKBACK_BLOCKS:
            return ()
        return (mark.message,)
