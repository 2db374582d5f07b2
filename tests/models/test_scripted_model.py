"""ScriptedModel: the scripted stand-in for the Anthropic adapter."""

from __future__ import annotations

import asyncio

import pytest

from loom_jupyter.errors import ModelError, OverloadedError
from loom_jupyter.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from loom_jupyter.models.base import (
    MessageDone,
    Model,
    ModelEvent,
    ModelRequest,
    RetryNotice,
    TextChunk,
    ToolInputDelta,
    ToolUseReady,
    ToolUseStarted,
    UsageUpdate,
)
from loom_jupyter.models.estimate import estimate_request_tokens, estimate_tokens
from loom_jupyter.models.scripted import (
    ScriptedModel,
    ScriptExhaustedError,
    fail,
    reply,
    stall,
    text,
    tool_call,
    with_retry,
)


def _request(user: str = "hello", *more: Message) -> ModelRequest:
    return ModelRequest(
        model="scripted", system="be brief", messages=(Message.user_text(user), *more)
    )


async def _collect(model: Model, request: ModelRequest) -> list[ModelEvent]:
    return [event async for event in model.stream(request)]


async def _collect_into(seen: list[ModelEvent], model: Model, request: ModelRequest) -> None:
    async for event in model.stream(request):
        seen.append(event)


def _done(events: list[ModelEvent]) -> MessageDone:
    assert isinstance(events[-1], MessageDone)
    return events[-1]


def test_satisfies_the_model_protocol() -> None:
    assert isinstance(ScriptedModel([]), Model)


async def test_text_streams_in_several_deltas_that_join_to_the_reply() -> None:
    model = ScriptedModel([text("The frame has three rows and two columns.")])
    events = await _collect(model, _request())
    deltas = [e.text for e in events if isinstance(e, TextChunk)]
    assert len(deltas) == 8
    assert "".join(deltas) == "The frame has three rows and two columns."
    done = _done(events)
    assert done.stop_reason == "end_turn"
    assert done.content == (TextBlock("The frame has three rows and two columns."),)
    assert sum(isinstance(e, MessageDone) for e in events) == 1


async def test_plain_strings_are_text_replies() -> None:
    model = ScriptedModel(["first", "second"])
    assert _done(await _collect(model, _request())).content == (TextBlock("first"),)
    assert _done(await _collect(model, _request())).content == (TextBlock("second"),)
    assert model.remaining == 0


async def test_tool_call_streams_start_input_pieces_and_ready() -> None:
    model = ScriptedModel([tool_call("run_python", {"code": "df.describe()"})])
    events = await _collect(model, _request())
    started = [e for e in events if isinstance(e, ToolUseStarted)]
    pieces = [e.partial_json for e in events if isinstance(e, ToolInputDelta)]
    ready = [e for e in events if isinstance(e, ToolUseReady)]
    assert [(s.id, s.name) for s in started] == [("toolu_scripted_1", "run_python")]
    assert len(pieces) > 1
    assert "".join(pieces) == '{"code": "df.describe()"}'
    assert ready[0].block == ToolUseBlock(
        "toolu_scripted_1", "run_python", {"code": "df.describe()"}
    )
    assert _done(events).stop_reason == "tool_use"


async def test_a_tool_round_trip_records_both_requests() -> None:
    model = ScriptedModel(
        [tool_call("run_python", {"code": "1 + 1"}, id="toolu_a"), text("It is 2.")]
    )
    first = _done(await _collect(model, _request("add")))
    result = ToolResultBlock("toolu_a", (TextBlock("2"),))
    follow_up = _request("add", Message("assistant", first.content), Message("user", (result,)))
    second = _done(await _collect(model, follow_up))
    assert second.content == (TextBlock("It is 2."),)
    assert model.requests == [_request("add"), follow_up]
    assert model.requests[1].messages[-1].content[0] == result


async def test_several_blocks_stop_reason_and_usage_are_kept() -> None:
    usage = Usage(10, 20, cache_creation_input_tokens=5, cache_read_input_tokens=7)
    scripted = reply(
        "Let me look.", tool_call("read", {"p": 1}, id="t1"), stop_reason="pause_turn", usage=usage
    )
    events = await _collect(ScriptedModel([scripted]), _request())
    done = _done(events)
    assert done.content == (TextBlock("Let me look."), ToolUseBlock("t1", "read", {"p": 1}))
    assert done.stop_reason == "pause_turn"
    assert done.usage == usage
    updates = [e.usage for e in events if isinstance(e, UsageUpdate)]
    assert updates[-1] == usage


async def test_default_usage_is_the_documented_estimate() -> None:
    request = _request("what is in df?")
    done = _done(await _collect(ScriptedModel([text("abcdefgh")]), request))
    assert done.usage == Usage(input_tokens=estimate_request_tokens(request), output_tokens=2)
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("abcdefghi") == 3


async def test_count_tokens_uses_the_estimate() -> None:
    request = _request("x" * 400)
    assert await ScriptedModel([]).count_tokens(request) == estimate_request_tokens(request)
    assert estimate_request_tokens(request) >= 100


async def test_function_script_sees_each_request() -> None:
    model = ScriptedModel(lambda request: text(f"you said {request.messages[-1].text}"))
    done = _done(await _collect(model, _request("pandas")))
    assert done.content == (TextBlock("you said pandas"),)
    assert model.remaining is None


async def test_async_function_script() -> None:
    async def answer(request: ModelRequest) -> str:
        await asyncio.sleep(0)
        return f"{len(request.messages)} message(s)"

    done = _done(await _collect(ScriptedModel(answer), _request()))
    assert done.content == (TextBlock("1 message(s)"),)


async def test_running_out_raises_a_clear_error() -> None:
    model = ScriptedModel([text("only one")])
    await _collect(model, _request())
    with pytest.raises(ScriptExhaustedError, match=r"held 1 and this is request 2") as caught:
        await _collect(model, _request("again"))
    assert isinstance(caught.value, ModelError)
    assert "model.add" in str(caught.value)
    model.add("more")
    assert _done(await _collect(model, _request())).content == (TextBlock("more"),)


async def test_scripted_error_raises_at_once() -> None:
    model = ScriptedModel([fail(OverloadedError("busy"))])
    seen: list[ModelEvent] = []
    with pytest.raises(OverloadedError, match="busy"):
        await _collect_into(seen, model, _request())
    assert not any(isinstance(e, TextChunk) for e in seen)


async def test_scripted_error_after_some_deltas() -> None:
    model = ScriptedModel([fail(OverloadedError("busy"), after_deltas=3)])
    seen: list[ModelEvent] = []
    with pytest.raises(OverloadedError):
        await _collect_into(seen, model, _request())
    assert [e.text for e in seen if isinstance(e, TextChunk)] == ["This ", "answer ", "starts "]
    assert not any(isinstance(e, MessageDone) for e in seen)


async def test_a_stall_waits_until_cancelled_and_the_model_stays_usable() -> None:
    model = ScriptedModel([stall(after_deltas=2), text("next")])
    seen: list[ModelEvent] = []
    two_deltas = asyncio.Event()

    async def consume() -> None:
        async for event in model.stream(_request()):
            seen.append(event)
            if sum(isinstance(e, TextChunk) for e in seen) == 2:
                two_deltas.set()

    task = asyncio.create_task(consume())
    await two_deltas.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _done(await _collect(model, _request())).content == (TextBlock("next"),)


def test_repr_is_short() -> None:
    model = ScriptedModel(["a" * 10_000])
    assert len(repr(model)) < 200


async def test_with_retry_announces_retries_first() -> None:
    events = await _collect(ScriptedModel([with_retry("ok", times=2)]), _request())
    notices = [e for e in events if isinstance(e, RetryNotice)]
    assert [(n.attempt, n.max_attempts) for n in notices] == [(1, 2), (2, 2)]
    assert events[:2] == notices
    assert notices[0].message == "Anthropic API overloaded (529); retrying in 0.0 s (1 of 2)."
    assert _done(events).content == (TextBlock("ok"),)
