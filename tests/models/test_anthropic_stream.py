"""AnthropicModel streaming through the real SDK against the fake Messages API."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from model_helpers import CANARY_KEY, collect, done_of, quick_settings, request, strict_client

from loom_jupyter.messages import Message, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock, Usage
from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.models.base import (
    Model,
    ModelEvent,
    TextChunk,
    ToolInputDelta,
    ToolUseReady,
    ToolUseStarted,
    UsageUpdate,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from loom_jupyter.testing import FakeAnthropic

RUN_PYTHON = ToolSpec(
    "run_python",
    "Run Python code in the notebook's kernel.",
    {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
)
READ_FILE = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})


def test_importing_the_adapter_does_not_import_anthropic() -> None:
    code = (
        "import sys, loom_jupyter.models.anthropic, loom_jupyter.models.scripted, "
        "loom_jupyter.models.pricing, loom_jupyter.testing\n"
        "print(sorted(m for m in ('anthropic', 'httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_satisfies_the_model_protocol() -> None:
    assert isinstance(AnthropicModel(quick_settings()), Model)


async def test_text_streams_in_order(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    answer = "The data frame has three rows, two columns and no missing values at all."
    fake.add(answer)
    events = await collect(make_model().stream(request("describe df")))
    deltas = [e.text for e in events if isinstance(e, TextChunk)]
    assert len(deltas) >= 5
    assert "".join(deltas) == answer
    done = done_of(events)
    assert done.content == (TextBlock(answer),)
    assert done.stop_reason == "end_turn"
    assert done.model == "claude-sonnet-5-5"
    assert done.request_id is not None
    assert done.request_id.startswith("req_fake_")


async def test_tool_use_round_trip(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    tool_reply = {
        "content": [
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "run_python",
                "input": {"code": "df.shape"},
            },
        ]
    }
    fake.add(tool_reply, "The frame has 3 rows and 2 columns.")
    model = make_model()
    first = await collect(model.stream(request("shape?", tools=(RUN_PYTHON,))))
    started = [e for e in first if isinstance(e, ToolUseStarted)]
    pieces = [e for e in first if isinstance(e, ToolInputDelta)]
    ready = [e for e in first if isinstance(e, ToolUseReady)]
    assert [(s.id, s.name) for s in started] == [("toolu_1", "run_python")]
    assert len(pieces) > 1
    assert all(p.id == "toolu_1" for p in pieces)
    assert json.loads("".join(p.partial_json for p in pieces)) == {"code": "df.shape"}
    call = ToolUseBlock("toolu_1", "run_python", {"code": "df.shape"})
    assert [r.block for r in ready] == [call]
    done = done_of(first)
    assert done.stop_reason == "tool_use"
    assert done.content == (TextBlock("Let me check."), call)

    result = ToolResultBlock("toolu_1", (TextBlock("(3, 2)"),))
    follow = request("shape?", Message("assistant", done.content), Message("user", (result,)))
    second = await collect(model.stream(follow))
    assert done_of(second).content == (TextBlock("The frame has 3 rows and 2 columns."),)
    sent = fake.message_requests[1].body
    assert sent is not None
    assert sent["messages"][1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "run_python",
        "input": {"code": "df.shape"},
    }
    assert sent["messages"][2]["content"][0]["type"] == "tool_result"
    assert sent["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"


async def test_usage_includes_cache_tokens(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    usage = {
        "input_tokens": 12,
        "output_tokens": 34,
        "cache_creation_input_tokens": 560,
        "cache_read_input_tokens": 7800,
    }
    fake.add({"content": ["Cached."], "usage": usage})
    events = await collect(make_model().stream(request()))
    expected = Usage(12, 34, 560, 7800)
    assert done_of(events).usage == expected
    updates = [e.usage for e in events if isinstance(e, UsageUpdate)]
    assert updates[0].input_tokens == 12
    assert updates[0].cache_read_input_tokens == 7800
    assert updates[-1] == expected


async def test_prompt_caching_writes_then_reads(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add("one", "two")
    model = make_model()
    first = done_of(await collect(model.stream(request("a", tools=(RUN_PYTHON,)))))
    second = done_of(await collect(model.stream(request("a", tools=(RUN_PYTHON,)))))
    assert first.usage.cache_creation_input_tokens > 0
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0


async def test_cache_control_placement_in_the_request_body(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add("ok")
    history = (
        Message("assistant", (TextBlock("earlier answer"),)),
        Message("user", (TextBlock("state: {}"), TextBlock("new question"))),
    )
    req = request("old question", *history, tools=(RUN_PYTHON, READ_FILE), history_breakpoint=1)
    await collect(make_model().stream(req))
    body = fake.message_requests[0].body
    assert body is not None
    hour = {"type": "ephemeral", "ttl": "1h"}
    assert body["system"] == [
        {"type": "text", "text": "You are a helpful notebook coworker.", "cache_control": hour}
    ]
    # The system prompt's breakpoint covers the tools before it.
    assert all("cache_control" not in tool for tool in body["tools"])
    assert body["messages"][1]["content"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "5m"}
    assert "cache_control" not in body["messages"][0]["content"][-1]
    assert all("cache_control" not in block for block in body["messages"][2]["content"])
    assert body["stream"] is True
    assert body["max_tokens"] == 256


async def test_no_cache_control_without_cache_prefix(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add("ok")
    await collect(
        make_model().stream(request(tools=(RUN_PYTHON,), cache_prefix=False, tool_choice="any"))
    )
    body = fake.message_requests[0].body
    assert body is not None
    assert "cache_control" not in json.dumps(body)
    assert body["tool_choice"] == {"type": "any"}


@pytest.mark.parametrize(
    "stop_reason",
    [
        "end_turn",
        "tool_use",
        "pause_turn",
        "max_tokens",
        "stop_sequence",
        "refusal",
        "model_context_window_exceeded",
    ],
)
async def test_every_stop_reason(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel], stop_reason: str
) -> None:
    fake.add({"content": ["partial"], "stop_reason": stop_reason})
    assert done_of(await collect(make_model().stream(request()))).stop_reason == stop_reason


async def test_several_blocks_in_one_message(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    fake.add(
        {
            "content": [
                "First I will read the file.",
                {"type": "tool_use", "id": "t_a", "name": "read_file", "input": {"path": "a.csv"}},
                {"type": "tool_use", "id": "t_b", "name": "read_file", "input": {"path": "b.csv"}},
            ]
        }
    )
    events = await collect(make_model().stream(request(tools=(READ_FILE,))))
    ready = [e.block.input for e in events if isinstance(e, ToolUseReady)]
    assert ready == [{"path": "a.csv"}, {"path": "b.csv"}]
    assert [type(b).__name__ for b in done_of(events).content] == [
        "TextBlock",
        "ToolUseBlock",
        "ToolUseBlock",
    ]


async def test_count_tokens_uses_the_api(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    count = await make_model().count_tokens(request("count me", tools=(RUN_PYTHON,)))
    assert count > 0
    sent = fake.requests[-1]
    assert sent.path == "/v1/messages/count_tokens"
    assert sent.body is not None
    assert sent.body["messages"][0]["content"][0]["text"] == "count me"
    assert "max_tokens" not in sent.body


async def test_context_window_from_the_models_api(
    make_model: Callable[..., AnthropicModel],
) -> None:
    assert await make_model().context_window("claude-opus-5-5") == 1_000_000


async def test_cancelling_mid_stream_releases_the_connection(
    fake: FakeAnthropic, make_model: Callable[..., AnthropicModel]
) -> None:
    import httpx2

    long_answer = " ".join(f"word{i}" for i in range(400))
    fake.add(
        {"content": [long_answer], "delay": 0.005},
        {"content": [long_answer], "delay": 0.005},
        "after",
    )
    # One pooled connection, short pool timeout: a leaked connection fails the last request.
    limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
    http_client = httpx2.AsyncClient(limits=limits, timeout=httpx2.Timeout(5.0, pool=1.0))
    model = make_model(client_options={"http_client": http_client})

    stream = model.stream(request())
    seen = [await anext(stream) for _ in range(4)]
    await stream.aclose()
    assert any(isinstance(e, TextChunk) for e in seen)

    got_text = asyncio.Event()

    async def consume() -> None:
        async for event in model.stream(request()):
            if isinstance(event, TextChunk):
                got_text.set()

    task = asyncio.create_task(consume())
    await got_text.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    events = await collect(model.stream(request("still there?")))
    assert done_of(events).content == (TextBlock("after"),)
    assert len(fake.message_requests) == 3
    await http_client.aclose()


async def test_default_client_reads_the_environment(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.add("from the env")
    model = AnthropicModel(quick_settings())
    events = await collect(model.stream(request()))
    assert done_of(events).content == (TextBlock("from the env"),)
    headers = fake_anthropic.message_requests[0].headers
    assert headers["authorization"].startswith("Bearer sk-ant-fake")
    assert headers["x-stainless-retry-count"] == "0"
    assert headers["x-stainless-read-timeout"] == "120.0"
    await model.aclose()


async def test_echo_default_answers_without_a_script(fake_anthropic: FakeAnthropic) -> None:
    model = AnthropicModel(quick_settings())
    events = await collect(model.stream(request("plot the sales by month")))
    assert done_of(events).content == (
        TextBlock("(fake Claude) You said: plot the sales by month"),
    )
    await model.aclose()


async def test_a_given_client_keeps_working_with_its_own_options(fake: FakeAnthropic) -> None:
    fake.add("hi")
    client = strict_client(fake.base_url)
    model = AnthropicModel(quick_settings(), client=client)
    events: list[ModelEvent] = await collect(model.stream(request()))
    assert done_of(events).content == (TextBlock("hi"),)
    assert client.max_retries == 5  # the caller's client is not modified
    await model.aclose()
    assert not client.is_closed()
    await client.close()


def test_repr_names_model_and_endpoint_only(fake: FakeAnthropic) -> None:
    model = AnthropicModel(
        quick_settings(), client=strict_client(fake.base_url), api_key=CANARY_KEY
    )
    text = repr(model)
    expected = "AnthropicModel(model='claude-sonnet-5-5', provider='anthropic', endpoint='{}')"
    assert text == expected.format(fake.base_url)
