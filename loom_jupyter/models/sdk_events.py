"""Map the ``anthropic`` SDK's message-stream events to our model events.

Duck-typed on the SDK's event objects (``.type`` and friends), so this module
never imports ``anthropic``. Text, tool_use and thinking blocks are surfaced (thinking
and redacted thinking are kept verbatim, signature included, in the finished message:
they must go back unchanged within a tool loop); other block types (server tools) are
skipped.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, get_args

from loom_jupyter.messages import (
    SERVER_BLOCK_TYPES,
    RedactedThinkingBlock,
    ServerBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from loom_jupyter.models.base import (
    MessageDone,
    ModelEvent,
    StopReason,
    TextChunk,
    ThinkingChunk,
    ToolInputDelta,
    ToolUseReady,
    ToolUseStarted,
    UsageUpdate,
)

__all__ = ["IncompleteStreamError", "StreamMapper", "usage_from_sdk"]

log = logging.getLogger(__name__)
_STOP_REASONS: frozenset[str] = frozenset(get_args(StopReason))


class IncompleteStreamError(Exception):
    """The stream ended without ``message_stop`` (or without a stop reason)."""


def usage_from_sdk(usage: Any) -> Usage:
    """Our :class:`Usage` from the SDK's usage object (missing cache counts are 0).

    The totals are the SDK's; from its ``cache_creation`` breakdown we keep the 1-hour
    writes (``ephemeral_1h_input_tokens``), which cost more than the 5-minute ones. Without
    a breakdown every write counts as a 5-minute one, the API's default TTL.
    """
    breakdown = getattr(usage, "cache_creation", None)
    return Usage(
        int(usage.input_tokens or 0),
        int(usage.output_tokens or 0),
        int(getattr(usage, "cache_creation_input_tokens", None) or 0),
        int(getattr(usage, "cache_read_input_tokens", None) or 0),
        int(getattr(breakdown, "ephemeral_1h_input_tokens", None) or 0),
    )


@dataclass
class StreamMapper:
    """Turns one SDK stream's events into ours; remembers whether content was shown."""

    request_id: str | None = None
    shown: bool = False
    done: MessageDone | None = None
    _tool_ids: dict[int, str] = field(default_factory=dict)

    def map(self, event: Any, snapshot: Any) -> ModelEvent | None:
        """Our event for one SDK event (``None`` when it has no counterpart)."""
        kind = event.type
        if kind == "content_block_delta":
            return self._delta(event)
        if kind == "content_block_start":
            return self._block_start(event)
        if kind == "content_block_stop":
            return self._block_stop(event)
        if kind == "message_start":
            return UsageUpdate(usage_from_sdk(event.message.usage))
        if kind == "message_delta":
            return UsageUpdate(usage_from_sdk(snapshot.usage))
        if kind == "message_stop":
            self.done = self._message_done(event.message)
            return None
        return None

    def finish(self) -> MessageDone:
        """The final event; raises :class:`IncompleteStreamError` if the stream never finished."""
        if self.done is None:
            raise IncompleteStreamError("the stream ended without message_stop")
        return self.done

    def _delta(self, event: Any) -> ModelEvent | None:
        delta = event.delta
        if delta.type == "text_delta":
            self.shown = True
            return TextChunk(_utf8(delta.text))
        if delta.type == "thinking_delta":
            if not delta.thinking:
                return None
            self.shown = True  # a retry would show it twice
            return ThinkingChunk(_utf8(delta.thinking))
        if delta.type == "input_json_delta" and event.index in self._tool_ids:
            return ToolInputDelta(self._tool_ids[event.index], delta.partial_json)
        return None

    def _block_start(self, event: Any) -> ModelEvent | None:
        block = event.content_block
        if block.type == "redacted_thinking":
            self.shown = True
            return ThinkingChunk("", redacted=True)
        if block.type != "tool_use":
            return None
        self.shown = True
        self._tool_ids[event.index] = block.id
        return ToolUseStarted(block.id, block.name)

    def _block_stop(self, event: Any) -> ModelEvent | None:
        block = getattr(event, "content_block", None)
        if block is None or block.type != "tool_use":
            return None
        return ToolUseReady(ToolUseBlock(block.id, block.name, dict(block.input or {})))

    def _message_done(self, message: Any) -> MessageDone:
        reason = message.stop_reason
        if reason is None:
            raise IncompleteStreamError("the stream ended without a stop reason")
        if reason not in _STOP_REASONS:
            log.warning("unknown stop_reason %r from the API; treating it as end_turn", reason)
            reason = "end_turn"
        content = tuple(_block(b) for b in message.content if b.type in _KEPT)
        usage = usage_from_sdk(message.usage)
        return MessageDone(content, reason, usage, str(message.model), self.request_id)


_KEPT = ("text", "tool_use", "thinking", "redacted_thinking", *sorted(SERVER_BLOCK_TYPES))


def _block(
    block: Any,
) -> TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock | ServerBlock:
    if block.type in SERVER_BLOCK_TYPES:  # web search/fetch: verbatim, to go back as it came
        return ServerBlock(_api_dict(block))
    if block.type == "text":
        citations = tuple(_api_dict(c) for c in getattr(block, "citations", None) or ())
        return TextBlock(_utf8(block.text), citations)
    if block.type == "thinking":  # verbatim: the signature covers these exact characters
        return ThinkingBlock(str(block.thinking), str(block.signature or ""))
    if block.type == "redacted_thinking":
        return RedactedThinkingBlock(str(block.data))
    return ToolUseBlock(block.id, block.name, dict(block.input or {}))


def _api_dict(value: Any) -> dict[str, Any]:
    """An SDK object as the JSON the API sent (fields it did not send are left out)."""
    if isinstance(value, dict):
        return dict(value)
    return dict(value.to_dict(mode="json", exclude_unset=True))


_LONE_SURROGATES = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> str:
    """``text`` without lone surrogates (a JSON escape can carry one; UTF-8 cannot)."""
    return _LONE_SURROGATES.sub("\ufffd", text)
