"""Which TTL the history's cache breakpoint gets, from the notebook's rhythm.

Prompt-cache prices, relative to plain input tokens: a write lives 5 minutes at
1.25x or an hour at 2x; a read costs 0.1x and restarts the entry's clock. Tools
and the system prompt never change, so they always take the hour. The history
is the question: notebook work pauses (reading a plot, running cells) and a
pause longer than the TTL means the whole history is written again.

The cost model, per turn, for a TTL ``T`` (``w`` its write price)::

    cost(T) = w * new + P(gap > T) * w * (history + new) + P(gap <= T) * 0.1 * (history + new)

``new`` is what this turn adds (estimated from the turns so far), ``history``
what the window already holds, and ``P(gap > T)`` the share of the last 40
pauses longer than ``T``. The TTL with the lower expected cost wins.

The pauses are the notebook's, not only the session's: a new session starts
from the pauses its archive holds (``Archive.recent_pauses``), and a notebook
with fewer than 40 from the notebooks beside it (``neighbour_pauses``). A session with
nothing to learn from cannot be right for every rhythm: quick follow-ups and
"mostly quick, now and then a long pause" start alike, and the first wants
5 minutes on every turn, the second the hour (``benchmarks/cache_cost.py``
shows both). So before any pause is seen a 10-minute pause counts as 0.7 of
one, fading as real pauses arrive: a wrong 5 minutes loses the whole history,
a wrong hour only the premium on what one turn adds, so an unknown rhythm
leans to the hour until quick follow-ups show otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.models.base import CacheTtl

__all__ = [
    "READ_PRICE",
    "TTL_SECONDS",
    "WRITE_PRICE",
    "CacheRhythm",
    "expected_turn_cost",
]

TTL_SECONDS: dict[CacheTtl, float] = {"5m": 300.0, "1h": 3600.0}
WRITE_PRICE: dict[CacheTtl, float] = {"5m": 1.25, "1h": 2.0}
READ_PRICE = 0.1

MAX_GAPS = 40
"""Gaps remembered: the rhythm is the share of these, so it follows a drift in 40 turns."""

_PRIOR_GAP = 600.0
"""The assumed gap before any is seen (it fades as real gaps arrive)."""

_PRIOR_WEIGHT = 0.7
_PRIOR_FADE = 0.95
"""The prior's weight shrinks by this with every real gap seen."""
_MARGIN = 30.0
"""Seconds added to each gap: the answer streams after the request that used the cache."""


def expected_turn_cost(ttl: CacheTtl, *, history: int, new: int, expired: float) -> float:
    """Token-price units this turn and the next turn's re-read (or re-write) cost."""
    write = WRITE_PRICE[ttl]
    total = history + new
    return write * new + expired * write * total + (1.0 - expired) * READ_PRICE * total


@dataclass(frozen=True)
class CacheRhythm:
    """The notebook's recent gaps between turns (newest last) and the history's growth per turn."""

    gaps: tuple[float, ...] = ()
    growth: tuple[int, ...] = ()
    prior_weight: float = _PRIOR_WEIGHT
    """How much the assumed 10-minute pause counts before any real one is seen."""

    def restart(self, pauses: Sequence[float]) -> CacheRhythm:
        """A new or resumed session: the notebook's recent ``pauses`` (oldest first) as its gaps."""
        return replace(self, gaps=tuple(pauses)[-MAX_GAPS:], growth=())

    def observe(self, gap_seconds: float, grew_by: int | None = None) -> CacheRhythm:
        """One more gap (and, when known, what the last turn added to the history)."""
        growth = self.growth if grew_by is None else (*self.growth, max(grew_by, 0))
        return replace(self, gaps=(*self.gaps, gap_seconds)[-MAX_GAPS:], growth=growth[-MAX_GAPS:])

    def expired_share(self, ttl: CacheTtl) -> float:
        """The share of gaps longer than ``ttl``, the fading prior gap counted in
        (with no prior and no gap: none)."""
        limit = TTL_SECONDS[ttl]
        prior = self.prior_weight * _PRIOR_FADE ** len(self.gaps)
        longer = float(sum(1 for gap in self.gaps if gap + _MARGIN > limit))
        longer += prior if limit < _PRIOR_GAP + _MARGIN else 0.0
        weight = prior + len(self.gaps)
        return longer / weight if weight else 0.0

    def describe(self, ttl: CacheTtl) -> str:
        """Why the history's cache holds ``ttl``, in a sentence for people."""
        held = "an hour" if ttl == "1h" else "5 minutes"
        head = f"Prompt cache: the conversation is kept for {held}"
        if not self.gaps:
            return f"{head} (no pause between turns seen yet in this notebook)."
        longer = sum(1 for gap in self.gaps if gap + _MARGIN > TTL_SECONDS["5m"])
        return (
            f"{head}: {longer} of the last {len(self.gaps)} pauses between turns in this "
            "notebook were over 5 minutes."
        )

    def typical_growth(self, fallback: int) -> int:
        """Tokens a turn adds to the history: the mean of recent turns, else ``fallback``."""
        recent = self.growth[-6:]
        return round(sum(recent) / len(recent)) if recent else fallback

    def choose(self, history_tokens: int, new_tokens: int | None = None) -> CacheTtl:
        """The cheaper TTL for this turn's history breakpoint under the cost model."""
        new = new_tokens if new_tokens is not None else self.typical_growth(history_tokens // 4)
        costs = {
            ttl: expected_turn_cost(
                ttl, history=history_tokens, new=max(new, 1), expired=self.expired_share(ttl)
            )
            for ttl in TTL_SECONDS
        }
        return "1h" if costs["1h"] < costs["5m"] else "5m"
