"""What a request costs, in US dollars, from its token usage.

Prices are per million tokens (MTok): input, output, cache write (5-minute
ephemeral cache: 1.25 x input) and cache read (0.1 x input). A model id is
matched exactly first (dated ids and Bedrock / Vertex ids included, by
substring), then by family (``opus``, ``sonnet``, ``haiku``) for other Claude
ids; anything else costs 0.0, so an unknown or fake model never breaks the
ledger.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom_jupyter.messages import Usage

__all__ = ["PRICES", "Price", "cost_usd", "price_for"]

_MTOK = 1_000_000


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens."""

    input: float
    output: float

    @property
    def cache_write(self) -> float:
        """A 5-minute cache write costs 1.25 x input."""
        return self.input * 1.25

    @property
    def cache_read(self) -> float:
        """A cache read costs 0.1 x input."""
        return self.input * 0.1


_OPUS = Price(5.0, 25.0)
_OPUS_LEGACY = Price(15.0, 75.0)
_SONNET = Price(3.0, 15.0)
_HAIKU = Price(1.0, 5.0)

PRICES: dict[str, Price] = {
    "claude-opus-5-5": _OPUS,
    "claude-sonnet-5-5": _SONNET,
    "claude-haiku-5-5": _HAIKU,
    "claude-opus-4-5": _OPUS,
    "claude-opus-4-1": _OPUS_LEGACY,
    "claude-opus-4-0": _OPUS_LEGACY,
    "claude-opus-4": _OPUS_LEGACY,
    "claude-3-opus": _OPUS_LEGACY,
    "claude-sonnet-4-5": _SONNET,
    "claude-sonnet-4": _SONNET,
    "claude-3-7-sonnet": _SONNET,
    "claude-haiku-4-5": _HAIKU,
    "claude-3-5-haiku": Price(0.8, 4.0),
    "claude-3-haiku": Price(0.25, 1.25),
}
"""Known ids (longest match wins, so ``claude-opus-4-5`` beats ``claude-opus-4``)."""

_FAMILIES = {"opus": _OPUS, "sonnet": _SONNET, "haiku": _HAIKU}


def price_for(model: str) -> Price | None:
    """The price of ``model``, or ``None`` when it is not a known Claude model."""
    name = model.lower()
    matches = [known for known in PRICES if known in name]
    if matches:
        return PRICES[max(matches, key=len)]
    if "claude" in name:
        return next((p for family, p in _FAMILIES.items() if family in name), None)
    return None


def cost_usd(model: str, usage: Usage) -> float:
    """Dollars for ``usage`` on ``model`` (0.0 when the model is unknown)."""
    price = price_for(model)
    if price is None:
        return 0.0
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    ) / _MTOK
