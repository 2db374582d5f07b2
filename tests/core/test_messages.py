"""Content blocks survive the archive round trip exactly."""

from __future__ import annotations

import pytest

from loom_jupyter.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    block_from_api,
    blocks_from_json,
    blocks_text,
    blocks_to_json,
)


def test_blocks_round_trip_through_json() -> None:
    blocks = (
        TextBlock("Let me check — ünïcode too."),
        ToolUseBlock("toolu_1", "run_python", {"code": "df.head()"}),
        ToolResultBlock("toolu_1", (TextBlock("ok"), ImageBlock("iVBOR")), is_error=True),
    )
    assert blocks_from_json(blocks_to_json(blocks)) == blocks
    assert blocks_from_json(None) == ()


def test_wire_form_matches_the_messages_api() -> None:
    message = Message("assistant", (ToolUseBlock("t", "shell", {"command": "ls"}),))
    assert message.to_api() == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t", "name": "shell", "input": {"command": "ls"}}],
    }


def test_tool_result_with_string_content_is_accepted() -> None:
    block = block_from_api({"type": "tool_result", "tool_use_id": "t", "content": "done"})
    assert block == ToolResultBlock("t", (TextBlock("done"),))


def test_unknown_block_type_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown content block type: 'video'"):
        block_from_api({"type": "video"})


def test_text_joins_text_and_tool_results() -> None:
    blocks = [TextBlock("a"), ToolUseBlock("t", "x"), ToolResultBlock("t", (TextBlock("b"),))]
    assert blocks_text(blocks) == "a\nb"
    assert Message.user_text("hi").text == "hi"
