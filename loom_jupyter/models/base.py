"""The model seam: a request value, the events a stream yields, the Model protocol.

Everything above this layer (agent, orchestrator) talks to a ``Model`` only
through these types, so the Anthropic adapter and the scripted test model are
interchangeable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from loom_jupyter.messages import (
        Message,
        RedactedThinkingBlock,
        ServerBlock,
        TextBlock,
        ThinkingBlock,
        ToolSpec,
        ToolUseBlock,
        Usage,
    )
    from loom_jupyter.settings import EffortLevel

__all__ = [
    "CacheTtl",
    "MessageDone",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "RetryNotice",
    "StopReason",
    "TextChunk",
    "ThinkingChunk",
    "ToolInputDelta",
    "ToolUseReady",
    "ToolUseStarted",
    "UsageUpdate",
]

StopReason = Literal[
    "end_turn",
    "tool_use",
    "pause_turn",
    "max_tokens",
    "stop_sequence",
    "refusal",
    "model_context_window_exceeded",
]

CacheTtl = Literal["5m", "1h"]
"""How long a prompt-cache entry lives after its last use (the API's two choices)."""


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """One Messages API request, cache breakpoints included.

    ``system`` is the static system prompt; with ``cache_prefix`` a breakpoint
    follows tools + system. ``history_breakpoint`` is the index in ``messages``
    of the message whose last block carries a breakpoint (the end of the
    cacheable history); blocks after it are per-turn and never cached.
    ``extra_breakpoints`` are earlier messages marked too (the API looks back
    only 20 blocks from a breakpoint for a cached prefix). The prefix lives
    ``prefix_ttl``, the history ``history_ttl`` (a longer TTL never follows a
    shorter one, as the API requires).

    ``thinking`` asks for adaptive thinking (``"thinking": {"type": "adaptive"}``) and
    ``effort`` sets ``output_config.effort``; the session sets them only for models that
    take them (:mod:`loom_jupyter.models.thinking`).
    """

    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 8192
    cache_prefix: bool = True
    history_breakpoint: int | None = None
    extra_breakpoints: tuple[int, ...] = ()
    prefix_ttl: CacheTtl = "1h"
    history_ttl: CacheTtl = "5m"
    tool_choice: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    thinking: bool = False
    effort: EffortLevel | None = None
    server_tools: tuple[Mapping[str, Any], ...] = ()
    """Tools the API runs itself (``web_search``, ``web_fetch``), in wire form, sent after
    ``tools`` (:func:`loom_jupyter.models.wire.server_tool_params`)."""


@dataclass(frozen=True)
class TextChunk:
    """A piece of assistant text, as it streams."""

    text: str
    kind: Literal["text_chunk"] = "text_chunk"


@dataclass(frozen=True)
class ThinkingChunk:
    """A piece of the model's thinking, as it streams (``redacted``: an encrypted block
    began, whose text nobody can read)."""

    text: str
    redacted: bool = False
    kind: Literal["thinking_chunk"] = "thinking_chunk"


@dataclass(frozen=True)
class ToolUseStarted:
    """The model began a tool call (its input follows as deltas)."""

    id: str
    name: str
    kind: Literal["tool_use_started"] = "tool_use_started"


@dataclass(frozen=True)
class ToolInputDelta:
    """A piece of a tool call's JSON input."""

    id: str
    partial_json: str
    kind: Literal["tool_input_delta"] = "tool_input_delta"


@dataclass(frozen=True)
class ToolUseReady:
    """A tool call with its complete, parsed input."""

    block: ToolUseBlock
    kind: Literal["tool_use_ready"] = "tool_use_ready"


@dataclass(frozen=True)
class UsageUpdate:
    """Usage as reported so far by the stream."""

    usage: Usage
    kind: Literal["usage_update"] = "usage_update"


@dataclass(frozen=True)
class MessageDone:
    """The finished assistant message. Always the last event of a stream. Thinking blocks
    are kept where they came, signature and all (they go back with the message)."""

    content: tuple[
        TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock | ServerBlock, ...
    ]
    stop_reason: StopReason
    usage: Usage
    model: str = ""
    request_id: str | None = None
    kind: Literal["message_done"] = "message_done"


@dataclass(frozen=True)
class RetryNotice:
    """The request failed and will be sent again after ``wait_seconds``.

    Retries are never silent: fronts should show :attr:`message`. Anything
    streamed before this event belongs to the abandoned attempt (the
    Anthropic adapter retries mid-stream only before any text or tool call
    was yielded, so at most a ``UsageUpdate`` is superseded).
    """

    attempt: int
    max_attempts: int
    wait_seconds: float
    reason: str
    kind: Literal["retry"] = "retry"

    @property
    def message(self) -> str:
        """One line for a person: ``Anthropic API overloaded (529); retrying in 2.0 s (1 of 2).``"""
        wait = f"{self.wait_seconds:.1f} s"
        count = f"{self.attempt} of {self.max_attempts}"
        return f"Anthropic API {self.reason}; retrying in {wait} ({count})."


ModelEvent: TypeAlias = (
    "TextChunk | ThinkingChunk | ToolUseStarted | ToolInputDelta | ToolUseReady | UsageUpdate"
    " | RetryNotice | MessageDone"
)


@runtime_checkable
class Model(Protocol):
    """Anything that can answer a :class:`ModelRequest`.

    ``stream`` yields events ending with exactly one :class:`MessageDone`, or
    raises a :class:`~loom_jupyter.errors.ModelError`; a :class:`RetryNotice`
    may come first when a failed attempt is retried. Cancelling the iteration
    (``aclose`` or task cancellation) must release the connection.
    """

    @property
    def name(self) -> str:
        """The model id requests are sent to."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream the response to ``request``."""
        ...

    async def count_tokens(self, request: ModelRequest) -> int:
        """Input tokens ``request`` would use."""
        ...
