"""The model layer: the Model protocol, the Anthropic adapter and a scripted model.

``loom_jupyter.models.anthropic.AnthropicModel`` talks to the Messages API (the
only module importing ``anthropic``, lazily); ``loom_jupyter.models.scripted``
has ``ScriptedModel`` for tests; ``pricing.cost_usd`` prices a ``Usage``.
"""

from __future__ import annotations

from loom_jupyter.models.base import (
    MessageDone,
    Model,
    ModelEvent,
    ModelRequest,
    RetryNotice,
    StopReason,
    TextChunk,
    ToolInputDelta,
    ToolUseReady,
    ToolUseStarted,
    UsageUpdate,
)

__all__ = [
    "MessageDone",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "RetryNotice",
    "StopReason",
    "TextChunk",
    "ToolInputDelta",
    "ToolUseReady",
    "ToolUseStarted",
    "UsageUpdate",
]
