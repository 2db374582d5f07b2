"""One model request forced to one tool (``submit_plan``, ``submit_verdict``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import ModelAPIError
from loom_jupyter.messages import Message, TextBlock, ToolUseBlock, Usage
from loom_jupyter.models.base import MessageDone, ModelRequest
from loom_jupyter.models.pricing import cost_usd

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from loom_jupyter.messages import ToolSpec
    from loom_jupyter.models.base import Model
    from loom_jupyter.orchestrator.parent import ParentContext

__all__ = ["ForcedCall", "ForcedCaller", "forced_call"]


@dataclass(frozen=True)
class ForcedCall:
    """The forced tool's input (``None`` when the model did not call it) and what it cost."""

    input: Mapping[str, Any] | None
    usage: Usage
    cost_usd: float
    model: str
    latency_ms: float
    stop_reason: str


async def forced_call(
    model: Model, tool: ToolSpec, *, system: str, prompt: str, model_name: str, max_tokens: int
) -> ForcedCall:
    """Send ``prompt`` as the one user message with ``tool_choice`` forced to ``tool``.

    Raises :class:`~loom_jupyter.errors.ModelError` when the request fails.
    """
    request = ModelRequest(
        model=model_name,
        system=system,
        messages=(Message("user", (TextBlock(prompt),)),),
        tools=(tool,),
        max_tokens=max_tokens,
        tool_choice=tool.name,
    )
    started = time.monotonic()
    done: MessageDone | None = None
    async for event in model.stream(request):
        if isinstance(event, MessageDone):
            done = event
    if done is None:
        raise ModelAPIError(f"The {tool.name} request ended without an answer; try again.")
    calls = [b for b in done.content if isinstance(b, ToolUseBlock) and b.name == tool.name]
    name = done.model or model_name
    return ForcedCall(
        calls[0].input if calls else None,
        done.usage,
        cost_usd(name, done.usage),
        name,
        (time.monotonic() - started) * 1000.0,
        done.stop_reason,
    )


@dataclass(frozen=True)
class ForcedCaller:
    """Forced calls of one delegation: counted by ``spend`` and in the session's ledger;
    ``seen`` is told each call that succeeded and the tool it was forced to (telemetry)."""

    parent: ParentContext
    spend: Callable[[Usage, float, str], None]
    seen: Callable[[ForcedCall, str], None] | None = None

    async def __call__(
        self, tool: ToolSpec, system: str, prompt: str, model_name: str
    ) -> ForcedCall:
        """One forced call; raises :class:`~loom_jupyter.errors.ModelError` when it fails."""
        parent = self.parent
        call = await forced_call(
            parent.model,
            tool,
            system=system,
            prompt=prompt,
            model_name=model_name,
            max_tokens=parent.settings.max_output_tokens,
        )
        self.spend(call.usage, call.cost_usd, call.model)
        if self.seen is not None:
            self.seen(call, tool.name)
        await parent.archive.record_model_call(
            parent.session_id,
            model=call.model,
            usage=call.usage,
            stop_reason=call.stop_reason,
            latency_ms=call.latency_ms,
            cost_usd=call.cost_usd,
        )
        return call
