"""Validity checks every request the engine builds must pass."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock
from loom_jupyter.models.estimate import estimate_request_tokens

if TYPE_CHECKING:
    from loom_jupyter.models.base import ModelRequest


def assert_valid_request(request: ModelRequest, *, budget: int | None = None) -> None:
    """The Messages API would accept it, and it fits ``budget`` (estimated tokens)."""
    messages = request.messages
    assert messages, "a request needs at least one message"
    assert messages[0].role == "user", "the window must start on a user turn"
    assert messages[-1].role == "user", "the request must end with the user message"
    for index, message in enumerate(messages):
        assert message.content, f"message {index} is empty"
        for block in message.content:
            if isinstance(block, TextBlock):
                assert block.text.strip(), f"message {index} has an empty text block"
        calls = [b.id for b in message.content if isinstance(b, ToolUseBlock)]
        if message.role == "assistant" and calls:
            following = messages[index + 1]
            results = [b.tool_use_id for b in following.content if isinstance(b, ToolResultBlock)]
            assert following.role == "user", f"tool calls of message {index} not answered"
            assert results == calls, f"calls {calls} answered by {results} in the next message"
            leading = following.content[: len(calls)]
            assert all(isinstance(b, ToolResultBlock) for b in leading), "results must come first"
        results = [b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)]
        if results:
            previous = messages[index - 1] if index else None
            assert previous is not None, "tool results in the first message"
            assert previous.role == "assistant", f"results in message {index} without their calls"
            called = [b.id for b in previous.content if isinstance(b, ToolUseBlock)]
            assert results == called, f"results {results} do not match calls {called}"
    if request.history_breakpoint is not None:
        assert 0 <= request.history_breakpoint < len(messages) - 1
    if budget is not None:
        used = estimate_request_tokens(request)
        assert used <= budget, f"request of ~{used} tokens exceeds the budget {budget}"
