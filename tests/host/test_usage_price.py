"""The sidebar's usage line says "price unknown" for a model without a public price."""

from __future__ import annotations

from loom_jupyter.engine.events import UsageEvent
from loom_jupyter.host.runtime.mirror import TurnMirror
from loom_jupyter.messages import Usage
from loom_jupyter.models.pricing import UNPRICED, priced


def usage_message(model: str) -> tuple[float, bool]:
    mirror = TurnMirror("sidebar", "hi", None, cost_before=0.5, context_budget=1000)
    (message,) = mirror.messages(UsageEvent(Usage(input_tokens=10, output_tokens=5), 0.25, model))
    return message.cost_usd, message.unpriced  # type: ignore[union-attr]


def test_a_priced_model_adds_up_and_an_unpriced_one_is_flagged() -> None:
    unknown = sorted(UNPRICED)[0]
    assert not priced(unknown)
    assert usage_message("claude-sonnet-5-5") == (0.75, False)
    assert usage_message(unknown) == (0.75, True)
