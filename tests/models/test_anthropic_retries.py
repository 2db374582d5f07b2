"""Retries are bounded, announced, and capped; nothing is retried once text was shown."""

from __future__ import annotations

import logging
import socket
from typing import TYPE_CHECKING

import pytest
from model_helpers import collect, collect_into, done_of, quick_settings, request, strict_client

from loom_jupyter.errors import (
    ModelConnectionError,
    ModelError,
    OverloadedError,
    RateLimitedError,
    StreamInterruptedError,
)
from loom_jupyter.messages import TextBlock
from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.models.base import ModelEvent, RetryNotice, TextChunk, UsageUpdate

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.testing import FakeAnthropic


def _notices(events: list[ModelEvent]) -> list[RetryNotice]:
    return [e for e in events if isinstance(e, RetryNotice)]


async def test_pre_stream_retries_then_success(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add(
        {"fault": "http", "status": 529, "retry_after": 0},
        {"fault": "http", "status": 500},
        "finally",
    )
    events = await collect(make_model(max_retries=2).stream(request()))
    assert done_of(events).content == (TextBlock("finally"),)
    notices = _notices(events)
    assert [(n.attempt, n.max_attempts, n.reason) for n in notices] == [
        (1, 2, "overloaded (529)"),
        (2, 2, "server error (500)"),
    ]
    assert len(fake.message_requests) == 3
    # the SDK's own retries are off: each request the fake saw is one of ours
    assert [r.headers["x-stainless-retry-count"] for r in fake.message_requests] == ["0", "0", "0"]


@pytest.mark.parametrize("max_retries", [1, 3])
async def test_pre_stream_retries_are_bounded_by_settings(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel], max_retries: int
) -> None:
    fake.add({"fault": "http", "status": 529, "retry_after": 0, "times": 10})
    seen: list[ModelEvent] = []
    with pytest.raises(OverloadedError):
        await collect_into(seen, make_model(max_retries=max_retries).stream(request()))
    assert len(fake.message_requests) == 1 + max_retries
    assert len(_notices(seen)) == max_retries


async def test_retry_after_is_capped(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "http", "status": 429, "retry_after": 120}, "done")
    events = await collect(make_model(retry_after_cap_seconds=0.05).stream(request()))
    [notice] = _notices(events)
    assert notice.wait_seconds == 0.05
    assert "retrying in 0.1 s (1 of 2)" in notice.message
    assert notice.reason == "rate-limited (429)"
    assert done_of(events).content == (TextBlock("done"),)


async def test_a_short_retry_after_is_honoured_below_the_cap(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "http", "status": 429, "retry_after": 0.02}, "done")
    events = await collect(make_model(retry_after_cap_seconds=30).stream(request()))
    assert [n.wait_seconds for n in _notices(events)] == [0.02]


async def test_rate_limit_error_after_retries_keeps_the_server_wait(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "http", "status": 429, "retry_after": 120, "times": 3})
    with pytest.raises(RateLimitedError) as caught:
        await collect(make_model().stream(request()))
    assert caught.value.retry_after == 120
    assert len(fake.message_requests) == 3


async def test_one_retry_of_a_mid_stream_overload_before_any_text(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add(
        {"fault": "sse_error", "after_deltas": 0, "error_type": "overloaded_error"}, "recovered"
    )
    events = await collect(make_model().stream(request()))
    [notice] = _notices(events)
    assert (notice.attempt, notice.max_attempts, notice.reason) == (1, 1, "overloaded (mid-stream)")
    assert done_of(events).content == (TextBlock("recovered"),)
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "recovered"
    # the abandoned attempt yielded only usage, then the notice
    first_notice = events.index(notice)
    assert all(isinstance(e, UsageUpdate) for e in events[:first_notice])
    assert len(fake.message_requests) == 2


async def test_a_second_mid_stream_overload_is_not_retried(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "sse_error", "after_deltas": 0, "times": 3})
    seen: list[ModelEvent] = []
    with pytest.raises(OverloadedError) as caught:
        await collect_into(seen, make_model(max_retries=5).stream(request()))
    assert len(_notices(seen)) == 1
    assert len(fake.message_requests) == 2
    assert fake.remaining == 1
    assert "after 1 retry" in str(caught.value)


async def test_no_retry_once_text_was_shown(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "sse_error", "after_deltas": 1}, "must not be requested")
    seen: list[ModelEvent] = []
    with pytest.raises(OverloadedError):
        await collect_into(seen, make_model().stream(request()))
    assert [e.text for e in seen if isinstance(e, TextChunk)] == ["This answer "]
    assert _notices(seen) == []
    assert len(fake.message_requests) == 1
    assert fake.remaining == 1


async def test_no_retry_once_a_tool_call_started(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    call = {"type": "tool_use", "id": "toolu_9", "name": "run_python", "input": {"code": "1"}}
    fake.add({"fault": "sse_error", "content": [call]}, "must not be requested")
    seen: list[ModelEvent] = []
    with pytest.raises(OverloadedError):
        await collect_into(seen, make_model().stream(request()))
    assert [e.kind for e in seen if e.kind in ("tool_use_started", "tool_use_ready")] == [
        "tool_use_started",
        "tool_use_ready",
    ]
    assert _notices(seen) == []
    assert len(fake.message_requests) == 1


async def test_a_dropped_stream_is_never_retried(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "drop", "after_deltas": 0}, "must not be requested")
    seen: list[ModelEvent] = []
    with pytest.raises(StreamInterruptedError):
        await collect_into(seen, make_model().stream(request()))
    assert _notices(seen) == []
    assert len(fake.message_requests) == 1


async def test_a_retry_after_a_mid_stream_overload_may_itself_be_retried_pre_stream(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add(
        {"fault": "sse_error", "after_deltas": 0},
        {"fault": "http", "status": 529, "retry_after": 0},
        "third time lucky",
    )
    events = await collect(make_model(max_retries=1).stream(request()))
    assert [n.reason for n in _notices(events)] == ["overloaded (mid-stream)", "overloaded (529)"]
    assert done_of(events).content == (TextBlock("third time lucky"),)
    assert len(fake.message_requests) == 3


async def test_count_tokens_retries_are_announced_through_on_retry() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes
    heard: list[RetryNotice] = []
    client = strict_client(f"http://127.0.0.1:{port}")
    model = AnthropicModel(
        quick_settings(max_retries=2),
        client=client,
        on_retry=heard.append,
        retry_backoff_seconds=0.01,
    )
    with pytest.raises(ModelConnectionError, match="after 2 retries"):
        await model.count_tokens(request())
    assert [(n.attempt, n.reason) for n in heard] == [
        (1, "connection failed"),
        (2, "connection failed"),
    ]
    await client.close()


async def test_retries_are_logged(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel], caplog: pytest.LogCaptureFixture
) -> None:
    fake.add({"fault": "http", "status": 529, "retry_after": 0}, "ok")
    with caplog.at_level(logging.INFO, logger="loom_jupyter.models.anthropic"):
        await collect(make_model().stream(request()))
    assert "Anthropic API overloaded (529); retrying in 0.0 s (1 of 2)." in caplog.messages


async def test_errors_are_model_errors_with_a_retryable_flag(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "http", "status": 401})
    with pytest.raises(ModelError) as caught:
        await collect(make_model().stream(request()))
    assert caught.value.retryable is False
