"""The model layer: the Model protocol, the Anthropic adapter and a scripted model."""

from __future__ import annotations

from loom_jupyter.models.base import (
    MessageDone,
    Model,
    ModelEvent,
    ModelRequest,
    StopReason,
    TextDelta,
    ToolInputDelta,
    ToolSpec,
    ToolUseReady,
    ToolUseStarted,
    Usage,
    UsageUpdate,
)

__all__ = [
    "MessageDone",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "StopReason",
    "TextDelta",
    "ToolInputDelta",
    "ToolSpec",
    "ToolUseReady",
    "ToolUseStarted",
    "Usage",
    "UsageUpdate",
]
