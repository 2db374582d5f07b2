"""What a request costs, in US dollars, from its token usage — or that its price is unknown.

Prices are per million tokens (MTok), one row per model of Anthropic's public price list
(https://platform.claude.com/docs/en/about-claude/pricing and each model's overview page),
with the five rates the list gives: input, 5-minute cache write, 1-hour cache write, cache
read and output. Cache rates are written out, not derived: newer models read the cache at
0.05x or 0.025x input, not 0.1x. Claude Haiku 5.5 has a second row for requests whose
prompt (input, cache writes and reads) is over 100,000 tokens.

A model id is looked up exactly after removing what names a version or a platform, not
the model: a date (``-20251101``), ``-latest``, ``[1m]``, a Bedrock prefix and suffix
(``us.anthropic.`` … ``-v1:0``) or a Vertex ``@date``. There is no family fallback: an id
the list does not price (a new model, a fake one, ``claude-mythos-preview``) has no price,
:func:`known_cost_usd` returns ``None`` and every front shows :data:`PRICE_UNKNOWN` for it
(:func:`cost_text`), never ``$0.00``. ``tests/models/test_pricing.py`` checks that every id
of the installed SDK's ``anthropic.types.Model`` is here or in :data:`UNPRICED`, so a new
SDK release with a new model fails loudly until its price is looked up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from loom_jupyter.messages import Usage
    from loom_jupyter.records import ModelCallRecord, SessionInfo

__all__ = [
    "PRICES",
    "PRICE_UNKNOWN",
    "UNPRICED",
    "Price",
    "cost_text",
    "cost_usd",
    "known_cost_usd",
    "price_for",
    "priced",
    "session_cost",
    "unpriced_call",
    "unpriced_usage",
]

_MTOK = 1_000_000

PRICE_UNKNOWN = "price unknown"
"""What a front shows instead of a cost it cannot know."""

_CENT = Decimal("0.01")
_TEN_THOUSANDTH = Decimal("0.0001")


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens, as the public price list gives them."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    long_prompt: tuple[int, Price] | None = None
    """(threshold, rates) for a request whose prompt is over ``threshold`` tokens."""

    @property
    def cache_write(self) -> float:
        """The 5-minute cache write (the API's default TTL)."""
        return self.cache_write_5m

    def for_prompt(self, prompt_tokens: int) -> Price:
        """The rates that apply to a request with ``prompt_tokens`` of prompt."""
        if self.long_prompt is not None and prompt_tokens > self.long_prompt[0]:
            return self.long_prompt[1]
        return self


def _rates(input_: float, write_5m: float, write_1h: float, read: float, output: float) -> Price:
    """A row in the price list's column order: input, 5m write, 1h write, cache hit, output."""
    return Price(input_, output, write_5m, write_1h, read)


# Rows of https://platform.claude.com/docs/en/about-claude/pricing ("Model pricing") unless
# noted; see docs/architecture.md ("Anthropic") for the sources of each newer row.
_FABLE_5_2 = _rates(8, 10, 16, 0.20, 40)  # Fable 5.2 list price as quoted at its release
_FABLE_5_1 = _rates(10, 12.50, 20, 0.25, 50)  # Fable 5.1 and Mythos 5.1
_FABLE_5 = _rates(10, 12.50, 20, 1, 50)  # Fable 5 and Mythos 5
_OPUS_5_5 = _rates(4, 5, 8, 0.20, 20)  # $4/$20 on the models overview; cache hits 0.05x
_OPUS = _rates(5, 6.25, 10, 0.50, 25)  # Opus 5, 4.8, 4.7, 4.6, 4.5
_OPUS_4 = _rates(15, 18.75, 30, 1.50, 75)  # Opus 4.1, Opus 4, Opus 3
_SONNET_5_5 = _rates(2, 2.50, 4, 0.10, 10)  # cache hits cut from $0.20 on 2026-10-07
_SONNET_5 = _rates(2, 2.50, 4, 0.20, 10)  # the Sonnet 5 overview page
_SONNET_4 = _rates(3, 3.75, 6, 0.30, 15)  # Sonnet 4.6, 4.5, 4, 3.7
_HAIKU_5_5 = Price(
    0.10, 0.50, 0.125, 0.20, 0.01, long_prompt=(100_000, _rates(0.50, 0.625, 1.00, 0.05, 2.50))
)  # "From $0.10 / $0.50": prompts over 100K tokens pay the second row on every token
_HAIKU_4_5 = _rates(1, 1.25, 2, 0.10, 5)
_HAIKU_3_5 = _rates(0.80, 1, 1.6, 0.08, 4)
_HAIKU_3 = _rates(0.25, 0.30, 0.50, 0.03, 1.25)

PRICES: dict[str, Price] = {
    "claude-fable-5-2": _FABLE_5_2,
    "claude-fable-5-1": _FABLE_5_1,
    "claude-mythos-5-1": _FABLE_5_1,
    "claude-fable-5": _FABLE_5,
    "claude-mythos-5": _FABLE_5,
    "claude-opus-5-5": _OPUS_5_5,
    "claude-opus-5": _OPUS,
    "claude-opus-4-8": _OPUS,
    "claude-opus-4-7": _OPUS,
    "claude-opus-4-6": _OPUS,
    "claude-opus-4-5": _OPUS,
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4-0": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-3-opus": _OPUS_4,
    "claude-sonnet-5-5": _SONNET_5_5,
    "claude-sonnet-5": _SONNET_5,
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4,
    "claude-sonnet-4-0": _SONNET_4,
    "claude-sonnet-4": _SONNET_4,
    "claude-3-7-sonnet": _SONNET_4,
    "claude-haiku-5-5": _HAIKU_5_5,
    "claude-haiku-4-5": _HAIKU_4_5,
    "claude-3-5-haiku": _HAIKU_3_5,
    "claude-3-haiku": _HAIKU_3,
}
"""Model ids (without date, platform or ``-latest``) and their prices."""

UNPRICED: frozenset[str] = frozenset(
    {
        "claude-mythos-preview",  # invitation only; no row on the public price list
        "claude-mythos-5-2",  # no published price found (Mythos 5.2 is limited availability)
    }
)
"""Ids the installed SDK names that the public price list does not price."""

_DATE = re.compile(r"-\d{8}$")


def _base_id(model: str) -> str:
    """``model`` without what names a date, an alias or a platform rather than a model."""
    name = model.strip().lower()
    name = name.split("@", 1)[0]  # Vertex: claude-opus-4-5@20251101
    name = name.removesuffix("[1m]")
    name = re.sub(r"-v\d+(:\d+)?$", "", name)  # Bedrock: …-v1:0
    name = name.rsplit("anthropic.", 1)[-1]  # Bedrock: (us.|eu.|arn…/)anthropic.claude-…
    name = name.removesuffix("-latest")
    return _DATE.sub("", name)


def price_for(model: str) -> Price | None:
    """The price of ``model``, or ``None`` when the public price list does not give one."""
    return PRICES.get(_base_id(model))


def priced(model: str) -> bool:
    """Whether ``model`` has a known price."""
    return price_for(model) is not None


def known_cost_usd(model: str, usage: Usage) -> float | None:
    """Dollars for one request's ``usage`` on ``model``, or ``None`` when its price is unknown.

    Cache writes are priced by TTL: ``usage.cache_creation_1h_input_tokens`` at the 1-hour
    rate, the rest of ``cache_creation_input_tokens`` at the 5-minute rate.
    """
    price = price_for(model)
    if price is None:
        return None
    price = price.for_prompt(usage.total_input_tokens)
    writes_1h = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
    writes_5m = usage.cache_creation_input_tokens - writes_1h
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + writes_5m * price.cache_write_5m
        + writes_1h * price.cache_write_1h
        + usage.cache_read_input_tokens * price.cache_read
    ) / _MTOK


def cost_usd(model: str, usage: Usage) -> float:
    """Dollars for ``usage`` on ``model`` as a number to add up: 0.0 when the price is unknown.

    The 0.0 is not a price. Whatever shows a cost asks :func:`priced` (or
    :func:`known_cost_usd`) and shows :data:`PRICE_UNKNOWN` for such a model.
    """
    known = known_cost_usd(model, usage)
    return 0.0 if known is None else known


def unpriced_usage(calls: Iterable[tuple[str, int]]) -> bool:
    """Whether any of ``(model, tokens)`` used tokens on a model without a known price: the
    one "price unknown" rule (a stored 0.0 for such usage is no cost)."""
    return any(tokens > 0 and not priced(model) for model, tokens in calls)


def unpriced_call(call: ModelCallRecord) -> bool:
    """Whether a recorded model call used tokens (any kind, cache reads too) on a model
    without a known price: :func:`unpriced_usage` for one ledger row."""
    used = call.input_tokens + call.output_tokens + call.cache_creation_tokens
    return unpriced_usage([(call.model, used + call.cache_read_tokens)])


def cost_text(known_usd: float | None, *, unknown: bool = False) -> str:
    """A cost for people, the one rule every front uses (the sidebar's ``costText`` in
    ``labextension/src/views/dom.ts`` repeats it; ``labextension/test/cost-cases.json`` is
    the table both languages' tests check):

    - at or above $1, cents: ``$12.34``, ``$1,234.50``;
    - below $1, up to four decimals with trailing zeros dropped down to cents: ``$0.50``,
      ``$0.0123``, ``$0.0004``; what rounds to nothing is ``<$0.0001``, never ``$0.00``;
    - a tie rounds up (the exact binary value decides, as JavaScript's ``toFixed`` does);
    - ``price unknown``, or ``$0.01 + price unknown``, when some of it has no known price.

    ``known_usd`` is what the priced part cost (``None``: nothing is priced); ``unknown``
    says some of it was used on a model without a known price.
    """
    if known_usd is None or (unknown and known_usd == 0):
        return PRICE_UNKNOWN
    money = _money(known_usd)
    return f"{money} + {PRICE_UNKNOWN}" if unknown else money


def _money(usd: float) -> str:
    if not usd > 0:  # never below zero (-0.0, NaN: nothing)
        return "$0.00"
    exact = Decimal(usd)  # the float's exact value, so ties round as toFixed rounds them
    if usd >= 1:
        return f"${exact.quantize(_CENT, ROUND_HALF_UP):,}"
    four = exact.quantize(_TEN_THOUSANDTH, ROUND_HALF_UP)
    if four == 0:
        return "<$0.0001"
    return "$" + re.sub(r"0{1,2}$", "", f"{four:f}")  # 0.5000 -> 0.50, 0.0120 -> 0.012


def session_cost(info: SessionInfo) -> str:
    """A session's cost, or "price unknown" when its model has no known price."""
    tokens = info.input_tokens + info.output_tokens + info.cache_creation_tokens
    unknown = unpriced_usage([(info.model, tokens + info.cache_read_tokens)])
    return cost_text(info.cost_usd, unknown=unknown)
