"""Front messages are bounded: an oversized or sprawling message is refused, cheaply."""

from __future__ import annotations

from typing import Any

import pytest

from loom_jupyter.host.wire.protocol import (
    MAX_MESSAGE_CHARS,
    MAX_MESSAGE_ITEMS,
    ProtocolError,
    Send,
    parse_inbound,
)


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"x": value}
    return value


def test_a_prompt_within_the_limit_is_a_send() -> None:
    text = "summarise this " * 1000
    assert parse_inbound({"type": "send", "client_id": "c1", "text": text}) == Send("c1", text)


@pytest.mark.parametrize(
    "message",
    [
        {"type": "send", "client_id": "c1", "text": "x" * (MAX_MESSAGE_CHARS + 1)},
        {"type": "search", "query": "churn " * 200_000},
        {"type": "hello", "notebook_path": "a/" * 300_000},
        {"type": "send", "client_id": "c1", "text": "hi", "extra": ["y" * 1000] * 500},
    ],
    ids=["prompt", "search", "hello path", "extra field"],
)
def test_a_message_over_the_character_limit_is_refused(message: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError, match=f"longer than {MAX_MESSAGE_CHARS:,} characters"):
        parse_inbound(message)


@pytest.mark.parametrize(
    "junk",
    [_nested(200_000), list(range(MAX_MESSAGE_ITEMS + 1)), [[[]]] * (MAX_MESSAGE_ITEMS + 1)],
    ids=["deep", "long list", "many lists"],
)
def test_a_sprawling_message_is_refused_without_recursion(junk: object) -> None:
    with pytest.raises(ProtocolError, match=f"more than {MAX_MESSAGE_ITEMS:,} values"):
        parse_inbound({"type": "sessions", "junk": junk})
