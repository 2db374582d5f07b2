"""The engine through the real anthropic SDK against the fake Messages API on 127.0.0.1."""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

from loom_jupyter.engine.events import Notice, ToolFinished, TurnDone, TurnError

from .conftest import collect, kinds

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive

    from .conftest import FakeApi, OpenSession

Json = dict[str, Any]


def assert_valid_wire(body: Json) -> None:
    """The recorded body is a valid Messages API request with the planned cache breakpoints."""
    messages = body["messages"]
    assert messages[0]["role"] == "user"
    assert messages[-1]["role"] == "user"
    for index, message in enumerate(messages):
        calls = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if calls:
            following = messages[index + 1]["content"]
            results = [b["tool_use_id"] for b in following if b["type"] == "tool_result"]
            assert results == calls
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert all("cache_control" not in t for t in body["tools"])  # the system mark covers them
    assert all("cache_control" not in b for b in messages[-1]["content"])  # ephemeral tail
    marked = [i for i, m in enumerate(messages) if "cache_control" in m["content"][-1]]
    assert marked[-1:] == ([len(messages) - 2] if len(messages) > 1 else [])


def flat_blocks(body: Json) -> tuple[list[str], int]:
    """Tools, system and message blocks as JSON (cache marks removed), and the cached count."""
    blocks = [*body["tools"], *body["system"]]
    blocks += [b for m in body["messages"] for b in m["content"]]
    marked = [i for i, b in enumerate(blocks) if "cache_control" in b]
    plain = [json.dumps({k: v for k, v in b.items() if k != "cache_control"}) for b in blocks]
    return plain, marked[-1] + 1


async def test_a_tool_turn_through_the_sdk_is_archived_and_cache_friendly(
    open_session: OpenSession, archive: Archive, fake_api: FakeApi
) -> None:
    model, server = fake_api.model(
        [
            {
                "content": [
                    "Let me check.",
                    {"type": "tool_use", "name": "run_python", "input": {"code": "n = 6 * 7\nn"}},
                ]
            },
            "n is 42.",
            "Still 42.",
        ]
    )
    session = await open_session(model)
    events = await collect(session, "What is six times seven?")
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.text == "Let me check.\nn is 42."
    assert done.cost_usd > 0
    await collect(session, "And again?")

    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    roles = [t.role for t in turns]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert "42" in turns[2].content
    calls = await archive.model_calls(session.session_id)
    assert len(calls) == 3
    assert all(c.input_tokens > 0 and c.model == "claude-sonnet-5-5" for c in calls)

    bodies = [r.body for r in server.message_requests]
    for body in bodies:
        assert_valid_wire(body)
    for before, after in itertools.pairwise(bodies):
        old, cached = flat_blocks(before)
        new, _ = flat_blocks(after)
        assert new[:cached] == old[:cached]  # byte-identical up to the last breakpoint


async def test_an_error_mid_stream_archives_the_partial_answer(
    open_session: OpenSession, archive: Archive, fake_api: FakeApi
) -> None:
    model, _ = fake_api.model(
        [{"fault": "sse_error", "after_deltas": 2, "error_type": "overloaded_error"}]
    )
    session = await open_session(model)
    events = await collect(session, "explain the data")
    error = events[-1]
    assert isinstance(error, TurnError)
    assert error.error_class == "OverloadedError"
    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    assert [(t.role, t.status) for t in turns] == [("user", "complete"), ("assistant", "partial")]
    assert turns[1].content
    calls = await archive.model_calls(session.session_id)
    assert calls[-1].error is not None


async def test_a_dropped_connection_is_a_clear_error_and_nothing_is_lost(
    open_session: OpenSession, archive: Archive, fake_api: FakeApi
) -> None:
    model, _ = fake_api.model([{"fault": "drop", "after_deltas": 3}, "Recovered."])
    session = await open_session(model)
    error = (await collect(session, "long answer please"))[-1]
    assert isinstance(error, TurnError)
    assert error.message
    done = (await collect(session, "try again"))[-1]
    assert isinstance(done, TurnDone)
    assert session.session_id is not None
    statuses = [t.status for t in await archive.get_turns(session.session_id)]
    assert statuses == ["complete", "partial", "complete", "complete"]


async def test_a_rate_limit_is_retried_with_a_visible_notice(
    open_session: OpenSession, fake_api: FakeApi
) -> None:
    model, _ = fake_api.model([{"fault": "http", "status": 429, "retry_after": 0}, "Hello!"])
    session = await open_session(model)
    events = await collect(session, "hi")
    assert "notice" in kinds(events)
    notice = next(e for e in events if isinstance(e, Notice))
    assert "etry" in notice.message
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.text == "Hello!"


async def test_malformed_tool_input_through_the_sdk(
    open_session: OpenSession, fake_api: FakeApi
) -> None:
    model, server = fake_api.model(
        [
            {"content": [{"type": "tool_use", "name": "read_file", "input": {"path": 7}}]},
            "I will fix the path.",
        ]
    )
    session = await open_session(model)
    events = await collect(session, "read it")
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert finished.is_error
    body = server.message_requests[1].body
    result = body["messages"][-2]["content"][0]
    assert result["is_error"] is True
    assert "path" in result["content"][0]["text"]
