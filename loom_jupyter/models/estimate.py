"""A quick, offline token estimate (no API call).

About four characters of text per token, the usual rule of thumb for English
prose and code with Claude tokenizers; an image counts as a flat
``IMAGE_TOKENS``. It is meant for budgets and tests, not billing: the exact
count comes from ``Model.count_tokens`` on the Anthropic adapter.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from loom_jupyter.messages import (
    ContentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    ServerBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from loom_jupyter.models.base import ModelRequest

__all__ = [
    "CHARS_PER_TOKEN",
    "IMAGE_TOKENS",
    "estimate_blocks_tokens",
    "estimate_request_tokens",
    "estimate_tokens",
]

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
# Per-message framing (role markers and block separators) the API adds.
_MESSAGE_OVERHEAD = 4


def estimate_tokens(text: str) -> int:
    """Tokens in ``text``: ``ceil(len(text) / 4)``, so any non-empty text is at least 1."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def estimate_request_tokens(request: ModelRequest) -> int:
    """Input tokens of a whole request: system, tools (as JSON) and every message."""
    total = estimate_tokens(request.system)
    for tool in request.tools:
        spec = {"name": tool.name, "description": tool.description, "schema": tool.input_schema}
        total += estimate_tokens(json.dumps(spec, ensure_ascii=False))
    for server_tool in request.server_tools:
        total += estimate_tokens(json.dumps(dict(server_tool), ensure_ascii=False))
    for message in request.messages:
        total += _MESSAGE_OVERHEAD + estimate_blocks_tokens(message.content)
    return total


def estimate_blocks_tokens(blocks: Iterable[ContentBlock]) -> int:
    """Tokens of some content blocks (text, tool calls, tool results, images)."""
    total = 0
    for block in blocks:
        if isinstance(block, TextBlock):
            total += estimate_tokens(block.text)
        elif isinstance(block, ImageBlock):
            total += IMAGE_TOKENS
        elif isinstance(block, ToolUseBlock):
            total += estimate_tokens(block.name + json.dumps(dict(block.input), ensure_ascii=False))
        elif isinstance(block, ToolResultBlock):
            total += estimate_blocks_tokens(block.content)
        elif isinstance(block, ServerBlock):  # a web search's results can be long
            total += estimate_tokens(json.dumps(dict(block.data), ensure_ascii=False))
        elif isinstance(block, ThinkingBlock):
            total += estimate_tokens(block.thinking)
        elif isinstance(block, RedactedThinkingBlock):
            total += estimate_tokens(block.data)
    return total
