"""Thinking and effort on the wire, against the fake Messages API (real SDK, strict).

What the request carries (only when on and the model takes it), thinking blocks sent back
with their signature before the tool_use of the tool loop, redacted thinking archived and
returned verbatim, the archive's round trip on resume, and the fake refusing what the
real API refuses.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.engine.events import ThinkingDelta, TurnDone
from loom_jupyter.messages import RedactedThinkingBlock, ThinkingBlock, ToolUseBlock
from loom_jupyter.models.thinking import effort_levels, supports_effort, supports_thinking
from loom_jupyter.testing.fake_anthropic import FakeAnthropic

from .conftest import collect

if TYPE_CHECKING:
    from .conftest import FakeApi, OpenSession

THINK_THEN_CALL = {
    "content": [
        {"type": "thinking", "thinking": "The sum is easiest in Python."},
        {"type": "tool_use", "id": "toolu_t1", "name": "run_python", "input": {"code": "1 + 1"}},
    ]
}
THINK_THEN_ANSWER = {
    "content": [{"type": "thinking", "thinking": "It printed 2."}, {"type": "text", "text": "2"}]
}


def bodies(server: FakeAnthropic) -> list[dict[str, Any]]:
    return [r.body for r in server.message_requests if r.body is not None]


def assistant_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The content of the request's last assistant message."""
    last = [m for m in body["messages"] if m["role"] == "assistant"][-1]
    return list(last["content"])


async def test_a_tool_loop_sends_thinking_back_signed_before_its_tool_use(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    model, server = fake_api.model([THINK_THEN_CALL, THINK_THEN_ANSWER])
    session = await open_session(model, thinking="adaptive", effort="high")

    events = await collect(session, "what is 1 + 1?")

    assert isinstance(events[-1], TurnDone), events[-1]
    thought = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thought == "The sum is easiest in Python.It printed 2."
    first, second = bodies(server)
    for body in (first, second):
        assert body["thinking"] == {"type": "adaptive"}
        assert body["output_config"] == {"effort": "high"}
    sent = assistant_blocks(second)
    assert [b["type"] for b in sent] == ["thinking", "tool_use"]
    assert sent[0]["thinking"] == "The sum is easiest in Python."
    assert sent[0]["signature"].startswith("fakesig_")  # the fake checked it too
    turns = await session.archive.get_turns(session.session_id or "")
    answers = [t for t in turns if t.role == "assistant"]
    assert isinstance(answers[0].blocks[0], ThinkingBlock)
    assert answers[0].blocks[0].signature == sent[0]["signature"]
    assert answers[0].content == ""  # thinking is not the answer's text
    assert answers[1].content == "2"


async def test_redacted_thinking_is_archived_verbatim_sent_back_and_survives_resume(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    call = {
        "content": [
            {"type": "redacted_thinking", "data": "opaque-bytes"},
            {"type": "thinking", "thinking": "and some plain thinking"},
            {"type": "tool_use", "id": "toolu_r1", "name": "run_python", "input": {"code": "2"}},
        ]
    }
    model, server = fake_api.model([call, "done", THINK_THEN_CALL, THINK_THEN_ANSWER])
    session = await open_session(model, thinking="adaptive", owner="first")

    events = await collect(session, "think hard")
    assert isinstance(events[-1], TurnDone), events[-1]
    assert any(isinstance(e, ThinkingDelta) and e.redacted for e in events)
    sent = assistant_blocks(bodies(server)[1])
    assert [b["type"] for b in sent] == ["redacted_thinking", "thinking", "tool_use"]
    data = sent[0]["data"]
    assert data.startswith("opaque-bytes.")

    await session.close()
    resumed = await open_session(model, thinking="adaptive", owner="second")
    assert resumed.session_id == session.session_id
    answer = next(t for t in resumed.window.turns if t.role == "assistant")
    assert answer.blocks[0] == RedactedThinkingBlock(data)
    assert isinstance(answer.blocks[1], ThinkingBlock)
    assert isinstance(answer.blocks[2], ToolUseBlock)

    events = await collect(resumed, "again")  # the whole history goes back, unchanged
    assert isinstance(events[-1], TurnDone), events[-1]
    history = bodies(server)[2]["messages"]
    assert history[1]["content"][0] == {"type": "redacted_thinking", "data": data}


@pytest.mark.parametrize(
    ("model_id", "thinking", "effort", "expect_thinking", "expect_effort"),
    [
        ("claude-sonnet-5-5", "off", None, False, None),
        ("claude-sonnet-5-5", "adaptive", None, True, None),
        ("claude-sonnet-5-5", "off", "low", False, "low"),
        ("claude-haiku-4-5", "adaptive", "high", False, None),  # takes neither
        ("claude-opus-4-6", "adaptive", "xhigh", True, None),  # no xhigh before Opus 4.7
        ("claude-opus-4-6", "adaptive", "max", True, "max"),
        ("some-unknown-model", "adaptive", "high", False, None),
    ],
)
async def test_thinking_and_effort_are_sent_only_when_on_and_supported(
    fake_api: FakeApi,
    open_session: OpenSession,
    model_id: str,
    thinking: str,
    effort: str | None,
    expect_thinking: bool,
    expect_effort: str | None,
) -> None:
    model, server = fake_api.model(["hi"], model=model_id)
    session = await open_session(model, thinking=thinking, effort=effort)
    await collect(session, "hello")
    (body,) = bodies(server)
    assert ("thinking" in body) is expect_thinking
    if expect_thinking:
        assert body["thinking"] == {"type": "adaptive"}
    assert body.get("output_config") == ({"effort": expect_effort} if expect_effort else None)


async def test_turning_thinking_off_leaves_old_thinking_out_and_a_turn_keeps_its_setting(
    fake_api: FakeApi, open_session: OpenSession
) -> None:
    model, server = fake_api.model([THINK_THEN_CALL, THINK_THEN_ANSWER, "plain"])
    session = await open_session(model, thinking="adaptive")
    await collect(session, "first")
    session.environment.options.set_thinking("off")
    await collect(session, "second")
    last = bodies(server)[-1]
    assert "thinking" not in last
    kinds = [b["type"] for m in last["messages"] for b in m["content"]]
    assert "thinking" not in kinds
    assert "tool_use" in kinds


def _post(base_url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"{base_url}/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": "k"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_fake_refuses_a_tool_loop_without_its_thinking_or_with_it_changed() -> None:
    with FakeAnthropic(script=[THINK_THEN_CALL, "ok", "ok", "ok"], default="error") as fake:
        base = {"model": "claude-sonnet-5-5", "max_tokens": 100, "thinking": {"type": "adaptive"}}
        ask = {"role": "user", "content": [{"type": "text", "text": "sum?"}]}
        status, first = _post(fake.base_url, {**base, "messages": [ask]})
        assert status == 200
        thinking, call = first["content"]
        result = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "2"}],
        }

        def loop(content: list[dict[str, Any]], **extra: Any) -> tuple[int, dict[str, Any]]:
            messages = [ask, {"role": "assistant", "content": content}, result]
            return _post(fake.base_url, {**base, **extra, "messages": messages})

        status, error = loop([call])
        assert status == 400
        assert "Expected `thinking` or `redacted_thinking`, but found `tool_use`" in str(error)
        status, error = loop([{**thinking, "thinking": "edited"}, call])
        assert status == 400
        assert "Invalid `signature`" in str(error)
        assert loop([call], thinking={"type": "disabled"})[0] == 200  # thinking off: fine
        assert loop([thinking, call])[0] == 200


def test_the_capability_table() -> None:
    assert supports_thinking("claude-sonnet-5-5")
    assert supports_thinking("claude-opus-4-6-20260101")  # a dated id
    assert not supports_thinking("claude-haiku-4-5")
    assert not supports_effort("claude-sonnet-4-5")
    assert effort_levels("claude-opus-4-5") == ("low", "medium", "high")
    assert not supports_thinking("gpt-whatever")
