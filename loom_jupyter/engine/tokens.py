"""Token estimates for archived turns (the one place the engine sizes things).

The window is budgeted with the model layer's offline estimate
(:mod:`loom_jupyter.models.estimate`: about four characters per token, a flat
cost per image) so the budget check never needs an API call and is
deterministic. Each rendered message adds a small framing overhead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.models.estimate import estimate_blocks_tokens, estimate_tokens

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.messages import ContentBlock, Message

__all__ = ["MESSAGE_OVERHEAD", "blocks_tokens", "message_tokens", "text_tokens", "turn_tokens"]

MESSAGE_OVERHEAD = 4
"""Role markers and separators the API adds around each message."""


def text_tokens(text: str) -> int:
    """Tokens of plain text."""
    return estimate_tokens(text)


def blocks_tokens(blocks: Sequence[ContentBlock]) -> int:
    """Tokens of content blocks (images count a flat amount)."""
    return estimate_blocks_tokens(blocks)


def turn_tokens(content: str, blocks: Sequence[ContentBlock]) -> int:
    """The ``token_count`` archived with a turn: its blocks, else its text, plus framing."""
    body = blocks_tokens(blocks) if blocks else text_tokens(content)
    return body + MESSAGE_OVERHEAD


def message_tokens(message: Message) -> int:
    """Tokens of one API message, framing included."""
    return blocks_tokens(message.content) + MESSAGE_OVERHEAD
