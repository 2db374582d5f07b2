"""The agent loop through CoworkSession: write-through, tools, errors, limits, approvals."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from engine.checks import assert_valid_request

from loom_jupyter.engine.events import (
    ApprovalNeeded,
    Notice,
    ToolDraft,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
)
from loom_jupyter.errors import ContextBudgetError, OverloadedError
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock
from loom_jupyter.models import base as model_events
from loom_jupyter.models.scripted import ScriptedModel, fail, reply, text, tool_call
from loom_jupyter.tools.registry import ToolRegistry, default_tools

from .conftest import OpenSession, collect, kinds

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping

    from loom_jupyter.archive import Archive
    from loom_jupyter.models.base import ModelEvent, ModelRequest
    from loom_jupyter.tools.approval import ApprovalRequest
    from loom_jupyter.tools.base import ToolContext, ToolOutput
    from loom_jupyter.tools.local_kernel import LocalKernel


async def test_a_turn_is_written_through_with_exact_blocks(
    open_session: OpenSession, archive: Archive, kernel: LocalKernel
) -> None:
    model = ScriptedModel(
        [
            reply("Let me compute it.", tool_call("run_python", {"code": "total = 40 + 2\ntotal"})),
            text("The total is 42."),
        ]
    )
    session = await open_session(model)
    assert session.session_id is None  # lazy until the first message
    events = await collect(session, "What is 40 + 2? Keep it short.")

    assert kinds(events)[0] == "turn_started"
    assert kinds(events)[-2:] == ["state_changed", "turn_done"]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.stop_reason == "end_turn"
    assert (done.first_turn, done.last_turn) == (1, 4)
    assert kernel.namespace["total"] == 42

    sid = session.session_id
    assert sid is not None
    turns = await archive.get_turns(sid)
    assert [t.role for t in turns] == ["user", "assistant", "tool", "assistant"]
    assert turns[0].content == "What is 40 + 2? Keep it short."
    call = turns[1].blocks[1]
    assert isinstance(call, ToolUseBlock)
    assert call.name == "run_python"
    assert turns[1].blocks[0] == TextBlock("Let me compute it.")
    tool = turns[2]
    assert (tool.tool_name, tool.tool_call_id, tool.is_error) == ("run_python", call.id, False)
    assert tool.tool_input == {"code": "total = 40 + 2\ntotal"}
    assert isinstance(tool.blocks[0], ToolResultBlock)
    assert "42" in tool.content
    assert all(t.token_count > 0 for t in turns)
    info = await archive.get_session(sid)
    assert info.title == "What is 40 + 2? Keep it short."
    calls = await archive.model_calls(sid)
    assert [c.stop_reason for c in calls] == ["tool_use", "end_turn"]
    assert [c.turn_number for c in calls] == [2, 4]
    for request in model.requests:
        assert_valid_request(request)


async def test_the_second_request_sees_the_archived_tool_result(open_session: OpenSession) -> None:
    model = ScriptedModel([tool_call("run_python", {"code": "print('hello')"}), text("done")])
    session = await open_session(model)
    await collect(session, "say hello")
    second = model.requests[1]
    assert second.history_breakpoint == len(second.messages) - 2
    results = second.messages[-2].content
    assert isinstance(results[0], ToolResultBlock)
    assert "hello" in results[0].text
    assert "<session_state>" in second.messages[-1].text


async def test_malformed_input_and_unknown_tool_become_error_results(
    open_session: OpenSession, archive: Archive
) -> None:
    model = ScriptedModel(
        [
            reply(
                tool_call("run_python", {"source": "1"}),
                tool_call("teleport", {"to": "mars"}),
            ),
            text("Sorry, fixed my calls."),
        ]
    )
    session = await open_session(model)
    events = await collect(session, "go")
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [f.is_error for f in finished] == [True, True]
    assert isinstance(events[-1], TurnDone)
    assert session.session_id is not None
    tools = [t for t in await archive.get_turns(session.session_id) if t.role == "tool"]
    assert "code" in tools[0].content  # says which key is missing
    assert "Unknown tool 'teleport'" in tools[1].content
    assert_valid_request(model.requests[1])


class Exploding:
    """A tool whose bug raises a plain exception."""

    spec = ToolSpec("explode", "Always fails.", {"type": "object", "properties": {}})
    access = "read"

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("boom")


async def test_a_raising_tool_is_an_error_result_and_the_loop_goes_on(
    open_session: OpenSession,
) -> None:
    tools = ToolRegistry((*default_tools(), Exploding()))
    model = ScriptedModel([tool_call("explode"), text("It failed; moving on.")])
    session = await open_session(model, tools=tools)
    events = await collect(session, "try it")
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.is_error
    assert "boom" in model.requests[1].messages[-2].text
    assert isinstance(events[-1], TurnDone)
    assert events[-1].text == "It failed; moving on."


async def test_the_iteration_limit_ends_a_runaway_loop(
    open_session: OpenSession, archive: Archive
) -> None:
    model = ScriptedModel([tool_call("inspect_variables", {}) for _ in range(3)] + [text("ok")])
    session = await open_session(model, max_iterations=3)
    events = await collect(session, "loop forever")
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.stop_reason == "iteration_limit"
    assert "max_iterations=3" in done.message
    assert len(model.requests) == 3
    assert session.session_id is not None
    roles = [t.role for t in await archive.get_turns(session.session_id)]
    assert roles == ["user", "assistant", "tool"] * 1 + ["assistant", "tool"] * 2
    # The next message continues validly after the tool results.
    await collect(session, "continue")
    assert_valid_request(model.requests[-1])


async def test_stop_reasons_end_the_turn_with_a_clear_message(open_session: OpenSession) -> None:
    model = ScriptedModel(
        [
            reply(
                "A long answer", tool_call("run_python", {"code": "1"}), stop_reason="max_tokens"
            ),
            text("", stop_reason="refusal"),
            text("partial", stop_reason="model_context_window_exceeded"),
        ]
    )
    session = await open_session(model)
    first = await collect(session, "write a lot")
    done = first[-1]
    assert isinstance(done, TurnDone)
    assert done.stop_reason == "max_tokens"
    assert "max_output_tokens" in done.message
    not_run = next(e for e in first if isinstance(e, ToolFinished))
    assert not_run.is_error  # the cut-off call got a result, so the history stays valid
    refused = (await collect(session, "something else"))[-1]
    assert isinstance(refused, TurnDone)
    assert refused.stop_reason == "refusal"
    assert "declined" in refused.message
    full = (await collect(session, "more"))[-1]
    assert isinstance(full, TurnDone)
    assert full.stop_reason == "model_context_window_exceeded"
    for request in model.requests:
        assert_valid_request(request)


async def test_a_model_error_mid_stream_archives_the_partial_answer(
    open_session: OpenSession, archive: Archive
) -> None:
    model = ScriptedModel([fail(OverloadedError("overloaded, try later"), after_deltas=3)])
    session = await open_session(model)
    events = await collect(session, "tell me a story")
    error = events[-1]
    assert isinstance(error, TurnError)
    assert error.error_class == "OverloadedError"
    assert "overloaded" in error.message
    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    assert [(t.role, t.status) for t in turns] == [("user", "complete"), ("assistant", "partial")]
    assert turns[1].content == "This answer starts "
    calls = await archive.model_calls(session.session_id)
    assert calls[-1].error is not None
    assert "OverloadedError" in calls[-1].error


async def test_a_message_too_big_for_the_budget_is_refused_before_sending(
    open_session: OpenSession,
) -> None:
    model = ScriptedModel([])
    session = await open_session(model, context_budget_tokens=6_000, output_reserve_tokens=1_000)
    events = await collect(session, "data " * 8_000)
    error = events[-1]
    assert isinstance(error, TurnError)
    assert error.error_class == ContextBudgetError.__name__
    assert "shorten" in error.message
    assert model.requests == []


async def test_ask_mode_asks_the_approver_and_remembers_always(open_session: OpenSession) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> str:
        asked.append(request)
        return "always" if len(asked) == 2 else "deny"

    model = ScriptedModel(
        [
            tool_call("run_python", {"code": "a = 1"}),
            tool_call("run_python", {"code": "b = 2"}),
            tool_call("run_python", {"code": "c = 3"}),
            tool_call("inspect_variables", {}),
            text("done"),
        ]
    )
    session = await open_session(model, approval="ask", approver=approver)  # type: ignore[arg-type]
    events = await collect(session, "set some variables")
    needed = [e for e in events if isinstance(e, ApprovalNeeded)]
    assert [n.detail for n in needed] == ["a = 1", "b = 2"]  # c runs without asking: "always"
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [f.is_error for f in finished] == [True, False, False, False]
    assert "declined" in model.requests[1].messages[-2].text
    assert [r.tool_name for r in asked] == ["run_python", "run_python"]


async def test_ask_mode_without_an_approver_denies_write_tools(open_session: OpenSession) -> None:
    model = ScriptedModel([tool_call("run_python", {"code": "x = 1"}), text("ok")])
    session = await open_session(model, approval="ask")
    events = await collect(session, "set x")
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.is_error
    assert "approval" in model.requests[1].messages[-2].text
    assert "approval_needed" not in kinds(events)


class BrokenClient:
    """A model whose client has a bug: it raises a plain exception mid-stream."""

    name = "broken"

    async def count_tokens(self, request: ModelRequest) -> int:
        return 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield model_events.TextChunk("Half an ")
        raise RuntimeError("socket exploded")


async def test_an_unexpected_model_failure_is_a_clean_turn_error(
    open_session: OpenSession, archive: Archive
) -> None:
    session = await open_session(BrokenClient())
    events = await collect(session, "hi")
    error = events[-1]
    assert isinstance(error, TurnError)
    assert error.error_class == "ModelAPIError"
    assert "socket exploded" in error.message
    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    assert (turns[-1].status, turns[-1].content) == ("partial", "Half an ")


async def test_a_pasted_key_is_redacted_for_every_front(
    open_session: OpenSession, archive: Archive
) -> None:
    key = "sk-ant-api03-pastedKeyForEveryFront0123456789"
    model = ScriptedModel([text("Noted.")])
    session = await open_session(model)
    events = await collect(session, f"my key is {key}")
    notices = [e for e in events if isinstance(e, Notice)]
    assert notices
    assert "[REDACTED]" in notices[0].message
    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    assert turns[0].content == "my key is [REDACTED]"
    assert key not in str(model.requests[0])


async def test_a_tool_calls_input_streams_as_drafts_before_the_call_runs(
    open_session: OpenSession,
) -> None:
    code = "total = 0\nfor i in range(10):\n    total += i\n"
    model = ScriptedModel([tool_call("run_python", {"code": code}), text("Done.")])
    session = await open_session(model, approval="auto")
    events = await collect(session, "sum the first ten numbers")
    drafts = [e for e in events if isinstance(e, ToolDraft)]
    assert len(drafts) > 1  # the input arrived in pieces...
    assert {(d.call_id, d.name) for d in drafts} == {(drafts[0].call_id, "run_python")}
    assert json.loads("".join(d.piece for d in drafts)) == {"code": code}  # ...that add up
    started = next(i for i, e in enumerate(events) if isinstance(e, ToolStarted))
    assert max(events.index(d) for d in drafts) < started  # all of it before the call runs
