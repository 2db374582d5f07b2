"""Interrupting a turn: the partial answer and unfinished tool calls are archived."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest
from engine.checks import assert_valid_request

from loom_jupyter.engine.events import Event, ToolStarted, TurnDone
from loom_jupyter.messages import ToolSpec
from loom_jupyter.models.scripted import ScriptedModel, stall, text, tool_call
from loom_jupyter.tools.base import ToolContext, ToolOutput
from loom_jupyter.tools.registry import ToolRegistry, default_tools

from .conftest import OpenSession, collect

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loom_jupyter.archive import Archive
    from loom_jupyter.session.conversation import CoworkSession


class Consumer:
    """Iterates a turn in a task, recording events; ``reached`` once ``count`` of ``kind`` came."""

    def __init__(self, session: CoworkSession, message: str, kind: str, count: int = 1) -> None:
        self.seen: list[Event] = []
        self.reached = asyncio.Event()
        self.task = asyncio.create_task(self._run(session, message, kind, count))

    async def _run(self, session: CoworkSession, message: str, kind: str, count: int) -> None:
        async for event in session.send(message):
            self.seen.append(event)
            if sum(e.kind == kind for e in self.seen) >= count:
                self.reached.set()


async def test_cancelling_the_consumer_archives_the_partial_answer_as_interrupted(
    open_session: OpenSession, archive: Archive
) -> None:
    model = ScriptedModel([stall(after_deltas=2), text("Back again.")])
    session = await open_session(model)
    consumer = Consumer(session, "write an essay", "text_delta", count=2)
    await consumer.reached.wait()
    consumer.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer.task
    assert not session.busy
    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    assert [(t.role, t.status) for t in turns] == [
        ("user", "complete"),
        ("assistant", "interrupted"),
    ]
    assert turns[1].content == "This answer "
    # The session carries on, and the interrupted answer is in the next request.
    events = await collect(session, "go on")
    assert isinstance(events[-1], TurnDone)
    assert_valid_request(model.requests[-1])
    assert "This answer" in model.requests[-1].messages[1].text


async def test_interrupt_ends_the_turn_with_a_clean_event(
    open_session: OpenSession, archive: Archive
) -> None:
    model = ScriptedModel([stall(after_deltas=1)])
    session = await open_session(model)
    consumer = Consumer(session, "think hard", "text_delta")
    await consumer.reached.wait()
    assert session.interrupt()
    await consumer.task  # ends normally
    done = consumer.seen[-1]
    assert isinstance(done, TurnDone)
    assert done.stop_reason == "interrupted"
    assert done.text == "This "
    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    assert turns[-1].status == "interrupted"
    assert not session.interrupt()  # nothing running any more


class Sleepy:
    """A tool that runs until cancelled."""

    spec = ToolSpec("sleepy", "Sleeps.", {"type": "object", "properties": {}})
    access = "read"

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> ToolOutput:
        await asyncio.sleep(3600)
        return ToolOutput.text("never")


async def test_interrupting_a_running_tool_archives_an_interrupted_result(
    open_session: OpenSession, archive: Archive
) -> None:
    tools = ToolRegistry((*default_tools(), Sleepy()))
    model = ScriptedModel([tool_call("sleepy"), text("Next answer.")])
    session = await open_session(model, tools=tools)
    consumer = Consumer(session, "sleep", "tool_started")
    await consumer.reached.wait()
    assert isinstance(consumer.seen[-1], ToolStarted)
    session.interrupt()
    await consumer.task
    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    tool = turns[-1]
    assert (tool.role, tool.status, tool.is_error, tool.tool_name) == (
        "tool",
        "interrupted",
        True,
        "sleepy",
    )
    await collect(session, "what happened?")
    assert_valid_request(model.requests[-1])


async def test_a_front_that_stops_iterating_leaves_a_consistent_archive(
    open_session: OpenSession, archive: Archive
) -> None:
    model = ScriptedModel([stall(after_deltas=3), text("Fresh start.")])
    session = await open_session(model)
    turn = session.send("describe the data")
    async for event in turn:
        if event.kind == "text_delta":
            break
    await turn.aclose()  # type: ignore[attr-defined]
    assert not session.busy
    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    assert [(t.role, t.status) for t in turns] == [
        ("user", "complete"),
        ("assistant", "interrupted"),
    ]
    assert isinstance((await collect(session, "hello again"))[-1], TurnDone)
