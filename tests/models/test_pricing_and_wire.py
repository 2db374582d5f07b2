"""Pricing, the wire form of a request, and failure messages as plain values."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from loom_jupyter.errors import (
    AuthenticationError,
    ModelAPIError,
    OverloadedError,
    RequestTooLargeError,
    StreamInterruptedError,
)
from loom_jupyter.messages import ImageBlock, Message, TextBlock, ToolSpec, Usage
from loom_jupyter.models.base import ModelRequest, RetryNotice
from loom_jupyter.models.failures import (
    ErrorContext,
    Failure,
    describe,
    redact,
    safe_endpoint,
    to_error,
)
from loom_jupyter.models.pricing import cost_usd, price_for
from loom_jupyter.models.wire import request_params
from loom_jupyter.testing.fake_script import cache_control_problem


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-5-5", 2 + 10 + 2.5 + 0.1),
        ("claude-opus-5-5", 4 + 20 + 5 + 0.2),
        ("claude-opus-4-8", 5 + 25 + 6.25 + 0.5),
        ("claude-opus-4-1-20250805", 15 + 75 + 18.75 + 1.5),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", 3 + 15 + 3.75 + 0.3),
    ],
)
def test_cost_of_a_million_of_each_kind(model: str, expected: float) -> None:
    usage = Usage(1_000_000, 1_000_000, 1_000_000, 1_000_000)
    assert cost_usd(model, usage) == pytest.approx(expected)


@pytest.mark.parametrize("model", ["scripted", "gpt-4o", "", "fake-model", "claude-sonnet-9"])
def test_unknown_models_have_no_price(model: str) -> None:
    assert price_for(model) is None
    assert cost_usd(model, Usage(10, 10, 10, 10)) == 0.0


def test_a_typical_turn_costs_cents() -> None:
    usage = Usage(input_tokens=2_000, output_tokens=500, cache_read_input_tokens=20_000)
    assert cost_usd("claude-sonnet-5-5", usage) == pytest.approx(0.004 + 0.005 + 0.002)


def _request(**options: object) -> ModelRequest:
    messages = (
        Message.user_text("first"),
        Message("assistant", (TextBlock("answer"),)),
        Message("user", (TextBlock("state"), ImageBlock("aGk="), TextBlock("question"))),
    )
    tools = (
        ToolSpec("a", "tool a", {"type": "object"}),
        ToolSpec("b", "tool b", {"type": "object"}),
    )
    return ModelRequest(model="m", system="sys", messages=messages, tools=tools, **options)


def _marked(params: dict[str, Any]) -> list[tuple[int, int, str]]:
    return [
        (i, j, b["cache_control"]["ttl"])
        for i, m in enumerate(params["messages"])
        for j, b in enumerate(m["content"])
        if "cache_control" in b
    ]


def test_wire_form_places_prefix_and_history_breakpoints() -> None:
    params = request_params(_request(history_breakpoint=1))
    assert params["system"] == [
        {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    assert [t.get("cache_control") for t in params["tools"]] == [None, None]
    assert _marked(params) == [(1, 0, "5m")]
    assert params["messages"][2]["content"][1]["source"]["media_type"] == "image/png"


def test_without_a_system_prompt_the_last_tool_closes_the_prefix() -> None:
    params = request_params(replace(_request(history_breakpoint=1), system=""))
    assert [t.get("cache_control") for t in params["tools"]] == [
        None,
        {"type": "ephemeral", "ttl": "1h"},
    ]


def test_extra_breakpoints_share_the_history_ttl_and_stay_within_four() -> None:
    messages = tuple(Message.user_text(f"m{i}") for i in range(8))
    request = replace(
        _request(history_breakpoint=6, history_ttl="1h"),
        messages=messages,
        extra_breakpoints=(0, 2, 4),
    )
    params = request_params(request)
    assert _marked(params) == [(2, 0, "1h"), (4, 0, "1h"), (6, 0, "1h")]
    assert cache_control_problem(params) is None


def test_the_history_never_outlives_the_prefix() -> None:
    params = request_params(_request(history_breakpoint=1, prefix_ttl="5m", history_ttl="1h"))
    assert params["system"][0]["cache_control"]["ttl"] == "5m"
    assert _marked(params) == [(1, 0, "5m")]
    assert cache_control_problem(params) is None


@pytest.mark.parametrize(
    ("marks", "problem"),
    [
        ([{"type": "ephemeral"}] * 5, "A maximum of 4 blocks"),
        ([{"type": "ephemeral", "ttl": "10m"}], "must be '5m' or '1h'"),
        ([{"type": "ephemeral", "ttl": "5m"}, {"type": "ephemeral", "ttl": "1h"}], "must not come"),
        ([{"type": "persistent"}], "type must be 'ephemeral'"),
    ],
)
def test_the_fake_api_rejects_what_the_real_one_rejects(
    marks: list[dict[str, str]], problem: str
) -> None:
    content = [{"type": "text", "text": str(i), "cache_control": m} for i, m in enumerate(marks)]
    found = cache_control_problem({"messages": [{"role": "user", "content": content}]})
    assert found is not None
    assert problem in found


def test_wire_form_without_caching_or_system() -> None:
    params = request_params(
        ModelRequest(model="m", system="", messages=(Message.user_text("x"),), cache_prefix=False)
    )
    assert "system" not in params
    assert "tools" not in params
    assert params["messages"] == [{"role": "user", "content": [{"type": "text", "text": "x"}]}]


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("any", {"type": "any"}),
        ("none", {"type": "none"}),
        ("b", {"type": "tool", "name": "b"}),
    ],
)
def test_tool_choice(choice: str, wire: dict[str, str]) -> None:
    assert request_params(_request(tool_choice=choice))["tool_choice"] == wire


def test_only_api_metadata_is_sent() -> None:
    params = request_params(_request(metadata={"user_id": "u1", "session": "local label"}))
    assert params["metadata"] == {"user_id": "u1"}
    assert "metadata" not in request_params(_request(metadata={"session": "s"}))


def test_the_request_is_not_modified_by_building_its_wire_form() -> None:
    req = _request(history_breakpoint=-1)
    request_params(req)
    request_params(req)
    assert "cache_control" not in str(req)
    assert req.messages[-1].to_api()["content"][-1] == {"type": "text", "text": "question"}


CONTEXT = ErrorContext(model="claude-sonnet-5-5", secrets=("sk-ant-secret-value",))


@pytest.mark.parametrize(
    ("failure", "error_class"),
    [
        (Failure("status", 200, "authentication_error"), AuthenticationError),
        (
            Failure("status", 400, "invalid_request_error", "prompt is too long: 2M > 1M"),
            RequestTooLargeError,
        ),
        (Failure("status", 529), OverloadedError),
        (Failure("status", 200, "overloaded_error"), OverloadedError),
        (Failure("status", 200, "weird_error"), StreamInterruptedError),
        (Failure("status", 418, None), ModelAPIError),
        (Failure("bad_response", detail="not JSON"), ModelAPIError),
    ],
)
def test_classification(failure: Failure, error_class: type[Exception]) -> None:
    assert type(to_error(failure, CONTEXT)) is error_class


def test_secrets_are_redacted_and_short_strings_left_alone() -> None:
    error = to_error(
        Failure("status", 400, "invalid_request_error", "bad sk-ant-secret-value"), CONTEXT
    )
    assert "sk-ant-secret-value" not in str(error)
    assert "[redacted]" in str(error)
    assert redact("a short key", ["short"]) == "a short key"


def test_safe_endpoint_drops_credentials_in_the_url() -> None:
    assert (
        safe_endpoint("https://user:pw@proxy.example.com:8443/anthropic/")
        == "https://proxy.example.com:8443/anthropic"
    )


def test_retry_notice_message() -> None:
    notice = RetryNotice(1, 2, 2.0, describe(Failure("status", 529)))
    assert notice.message == "Anthropic API overloaded (529); retrying in 2.0 s (1 of 2)."
    assert describe(Failure("connection")) == "connection failed"
    assert describe(Failure("status", 200, "overloaded_error")) == "overloaded (mid-stream)"
