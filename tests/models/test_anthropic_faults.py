"""Every failure of the API becomes the right LoomError with an actionable message."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any

import pytest
from model_helpers import collect, collect_into, quick_settings, request, strict_client

from loom_jupyter.errors import (
    AuthenticationError,
    MissingApiKeyError,
    ModelAPIError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
    OverloadedError,
    RateLimitedError,
    RequestTooLargeError,
    StreamInterruptedError,
)
from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.models.base import ModelEvent, RetryNotice, TextChunk
from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Callable


async def _fail(model: AnthropicModel, **options: Any) -> tuple[ModelError, list[ModelEvent]]:
    seen: list[ModelEvent] = []
    with pytest.raises(ModelError) as caught:
        await collect_into(seen, model.stream(request(**options)))
    return caught.value, seen


@pytest.mark.parametrize(
    ("entry", "error_class", "phrases"),
    [
        (
            {"fault": "http", "status": 401},
            AuthenticationError,
            ["refused the API key", "ANTHROPIC_API_KEY", "%cowork login"],
        ),
        ({"fault": "http", "status": 403}, AuthenticationError, ["not allowed", "permissions"]),
        (
            {"fault": "http", "status": 413, "message": "Request exceeds the maximum size"},
            RequestTooLargeError,
            ["too large", "context_budget_tokens", "413 request_too_large"],
        ),
        (
            {
                "fault": "http",
                "status": 400,
                "message": "prompt is too long: 1200000 tokens > 1000000 maximum",
            },
            RequestTooLargeError,
            ["too large", "prompt is too long"],
        ),
        (
            {"fault": "http", "status": 404, "message": "model: nope"},
            ModelAPIError,
            ["does not know model", "LOOM_MODEL"],
        ),
        ({"fault": "http", "status": 402}, ModelAPIError, ["billing", "Console"]),
        (
            {"fault": "http", "status": 400, "message": "messages: empty"},
            ModelAPIError,
            ["rejected the request", "messages: empty"],
        ),
    ],
)
async def test_http_errors_that_are_not_retried(
    fake: FakeAnthropic,
    make_model: Callable[..., AnthropicModel],
    entry: dict[str, Any],
    error_class: type[ModelError],
    phrases: list[str],
) -> None:
    fake.add(entry)
    error, seen = await _fail(make_model())
    assert type(error) is error_class
    for phrase in phrases:
        assert phrase in str(error)
    assert "req_fake_" in str(error)  # the request id, for support
    assert len(fake.message_requests) == 1
    assert not any(isinstance(e, RetryNotice) for e in seen)


async def test_rate_limited_names_the_wait(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "http", "status": 429, "retry_after": 7, "times": 3})
    error, _ = await _fail(make_model())
    assert isinstance(error, RateLimitedError)
    assert error.retry_after == 7
    assert "Wait 7 s and try again" in str(error)
    assert "after 2 retries" in str(error)
    assert error.retryable


async def test_overloaded(fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]) -> None:
    fake.add({"fault": "http", "status": 529, "retry_after": 0, "times": 3})
    error, _ = await _fail(make_model())
    assert isinstance(error, OverloadedError)
    assert "overloaded right now (529 overloaded_error)" in str(error)
    assert "Try again in a minute" in str(error)


async def test_server_error_is_retryable_api_error(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "http", "status": 500, "retry_after": 0, "times": 3})
    error, _ = await _fail(make_model())
    assert type(error) is ModelAPIError
    assert "500 api_error" in str(error)
    assert error.retryable


async def test_mid_stream_error_event_is_classified_by_type(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add(
        {"fault": "sse_error", "after_deltas": 2, "error_type": "api_error", "message": "Internal"}
    )
    error, seen = await _fail(make_model())
    assert isinstance(error, StreamInterruptedError)
    assert "in the middle of the answer (api_error: Internal)" in str(error)
    assert "kept" in str(error)
    assert [e.text for e in seen if isinstance(e, TextChunk)] == ["This answer ", "starts to "]


async def test_mid_stream_rate_limit_event(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add(
        {
            "fault": "sse_error",
            "after_deltas": 1,
            "error_type": "rate_limit_error",
            "message": "slow down",
        }
    )
    error, _ = await _fail(make_model())
    assert isinstance(error, RateLimitedError)
    assert "mid-stream" in str(error)


async def test_mid_stream_overload_after_text(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "sse_error", "after_deltas": 3})
    error, _ = await _fail(make_model())
    assert isinstance(error, OverloadedError)
    assert "became overloaded in the middle of the answer" in str(error)


async def test_dropped_connection(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "drop", "after_deltas": 2})
    error, seen = await _fail(make_model())
    assert isinstance(error, StreamInterruptedError)
    assert "broke in the middle of the answer" in str(error)
    assert sum(isinstance(e, TextChunk) for e in seen) == 2
    assert len(fake.message_requests) == 1


async def test_stalled_stream_hits_the_idle_timeout(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "stall", "after_deltas": 1, "seconds": 10})
    error, seen = await _fail(make_model(idle=0.3, stream_idle_timeout_seconds=0.3))
    assert isinstance(error, ModelTimeoutError)
    assert "nothing arrived for 0.3 s" in str(error)
    assert "stream_idle_timeout_seconds" in str(error)
    assert sum(isinstance(e, TextChunk) for e in seen) == 1
    assert len(fake.message_requests) == 1


async def test_stream_ending_without_message_stop(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "truncate", "after_deltas": 2})
    error, seen = await _fail(make_model())
    assert isinstance(error, StreamInterruptedError)
    assert "without message_stop" in str(error)
    assert sum(isinstance(e, TextChunk) for e in seen) == 2


async def test_no_answer_before_the_timeout_is_retried_then_reported(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add({"fault": "hang", "seconds": 10, "times": 2})
    error, seen = await _fail(make_model(idle=0.2, max_retries=1, request_timeout_seconds=0.2))
    assert isinstance(error, ModelTimeoutError)
    assert "did not answer within 0.2 s" in str(error)
    assert "request_timeout_seconds" in str(error)
    assert [e.reason for e in seen if isinstance(e, RetryNotice)] == ["request timed out"]
    assert len(fake.message_requests) == 2


async def test_connection_refused(make_model: Callable[..., AnthropicModel]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes
    client = strict_client(f"http://127.0.0.1:{port}")
    model = AnthropicModel(quick_settings(max_retries=1), client=client, retry_backoff_seconds=0.01)
    error, seen = await _fail(model)
    assert isinstance(error, ModelConnectionError)
    assert f"Could not reach the Anthropic API at http://127.0.0.1:{port}" in str(error)
    assert "ANTHROPIC_BASE_URL" in str(error)
    assert [e.reason for e in seen if isinstance(e, RetryNotice)] == ["connection failed"]
    await client.close()


async def test_missing_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no profile on disk either
    model = AnthropicModel(quick_settings())
    with pytest.raises(MissingApiKeyError) as caught:
        await collect(model.stream(request()))
    message = str(caught.value)
    assert "ANTHROPIC_API_KEY" in message
    assert "%cowork login" in message
    assert "sidebar" in message
    assert "%env" not in message  # IPython echoes %env: the key would be saved in the notebook
    assert "export ANTHROPIC_API_KEY" in message
    assert "LOOM_PROVIDER" in message
    with pytest.raises(MissingApiKeyError):
        await model.count_tokens(request())


async def test_a_broken_credentials_profile_is_a_missing_key_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_PROFILE", "work")
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))
    with pytest.raises(MissingApiKeyError, match=r"other credentials failed to load: .*'work'"):
        await collect(AnthropicModel(quick_settings()).stream(request()))


async def test_key_set_after_a_missing_key_error_is_picked_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with FakeAnthropic(["now it works"]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        model = AnthropicModel(quick_settings())
        with pytest.raises(MissingApiKeyError):
            await collect(model.stream(request()))
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-set-later-with-percent-env")  # like %env
        events = await collect(model.stream(request()))
        assert events[-1].kind == "message_done"
        await model.aclose()


async def test_bad_key_refused_by_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic(["never sent"], api_key="sk-ant-the-right-key") as server:
        client = strict_client(server.base_url)  # sends the canary key, which is wrong here
        model = AnthropicModel(quick_settings(), client=client)
        error, _ = await _fail(model)
        assert isinstance(error, AuthenticationError)
        assert "401 authentication_error" in str(error)
        assert len(server.message_requests) == 1
        assert server.remaining == 1
        await client.close()


async def test_vertex_without_a_region_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLOUD_ML_REGION", raising=False)
    model = AnthropicModel(quick_settings(provider="vertex"))
    with pytest.raises(
        ModelAPIError, match=r"Google Vertex AI.*CLOUD_ML_REGION.*provider: anthropic"
    ):
        await collect(model.stream(request()))


async def test_bedrock_client_is_used_for_the_bedrock_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-token-for-tests")
    model = AnthropicModel(quick_settings(provider="bedrock"))
    client = model._ensure_client()
    assert type(client).__name__ == "AsyncAnthropicBedrock"
    assert "bedrock-runtime.eu-west-1.amazonaws.com" in repr(model)
    assert client.max_retries == 0
    await model.aclose()


async def test_the_idle_timeout_comes_from_settings(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.add({"fault": "stall", "after_deltas": 1, "seconds": 10})
    model = AnthropicModel(quick_settings(stream_idle_timeout_seconds=0.25))  # own client
    error, seen = await _fail(model)
    assert isinstance(error, ModelTimeoutError)
    assert "nothing arrived for 0.25 s" in str(error)
    assert sum(isinstance(e, TextChunk) for e in seen) == 1
    assert fake_anthropic.message_requests[0].headers["x-stainless-read-timeout"] == "0.25"
    await model.aclose()
