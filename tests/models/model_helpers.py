"""Helpers shared by the model-layer tests (imported by name: tests/models is on sys.path)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loom_jupyter.messages import Message
from loom_jupyter.models.base import MessageDone, ModelEvent, ModelRequest
from loom_jupyter.settings import Settings

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

# A recognisable key: tests grep every error, repr, log and recorded body for it.
CANARY_KEY = "sk-ant-CANARY-5f1e2d3c4b5a69788796a5b4c3d2e1f0"


def strict_client(base_url: str, *, idle: float = 5.0, **options: Any) -> Any:
    """The real SDK client, validating every payload the fake sends."""
    import anthropic

    return anthropic.AsyncAnthropic(
        api_key=CANARY_KEY,
        base_url=base_url,
        timeout=anthropic.Timeout(10.0, read=idle),
        max_retries=5,  # the adapter must switch these off and do its own, bounded retries
        _strict_response_validation=True,
        **options,
    )


def quick_settings(**overrides: Any) -> Settings:
    """Settings with small caps so retry tests are quick."""
    values: dict[str, Any] = {"max_retries": 2, "retry_after_cap_seconds": 0.05}
    return Settings(**(values | overrides))


def request(text: str = "hello", *more: Message, **options: Any) -> ModelRequest:
    """A small request with a system prompt."""
    return ModelRequest(
        model="claude-sonnet-5-5",
        system="You are a helpful notebook coworker.",
        messages=(Message.user_text(text), *more),
        max_tokens=256,
        **options,
    )


async def collect(events: AsyncIterator[ModelEvent]) -> list[ModelEvent]:
    """Every event of a stream."""
    return [event async for event in events]


async def collect_into(seen: list[ModelEvent], events: AsyncIterator[ModelEvent]) -> None:
    """Append events to ``seen`` as they come (keeps them when the stream raises)."""
    async for event in events:
        seen.append(event)


def done_of(events: list[ModelEvent]) -> MessageDone:
    """The final MessageDone (asserting it is last)."""
    last = events[-1]
    assert isinstance(last, MessageDone)
    return last
