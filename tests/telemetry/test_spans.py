"""A real session turn with tool calls, through the real SDK against the fake Messages API:
the span tree, the GenAI attributes DESIGN §16 pins, the metrics, and contents only when
``capture_content`` is on (then redacted)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from loom_jupyter.engine.events import TurnDone
from loom_jupyter.tools.output import REDACTED

from .conftest import Recorded

if TYPE_CHECKING:
    import pytest

    from .conftest import FakeModel, OpenSession

SECRET = "sk-ant-api03-" + "Z" * 40  # key-shaped: the archive's redaction removes it
SCRIPT = [
    {
        "content": [
            "Let me check.",
            {"type": "tool_use", "name": "run_python", "input": {"code": "n = 6 * 7\nn"}},
        ]
    },
    {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": "1 / 0"}}]},
    "n is 42.",
]


async def _turn(session: object, text: str) -> TurnDone:
    events = [e async for e in session.send(text, front="cell")]  # type: ignore[attr-defined]
    done = events[-1]
    assert isinstance(done, TurnDone), done
    return done


async def test_a_turn_is_an_invoke_agent_span_with_chat_and_execute_tool_children(
    recorded: Recorded, open_session: OpenSession, fake_model: FakeModel
) -> None:
    model, _ = fake_model(list(SCRIPT))
    session = await open_session(model)
    done = await _turn(session, "What is six times seven?")

    (turn,) = recorded.named("invoke_agent")
    assert recorded.tree(turn) == [
        "invoke_agent loom",
        "  chat claude-sonnet-5-5",
        "  execute_tool run_python",
        "  chat claude-sonnet-5-5",
        "  execute_tool run_python",
        "  chat claude-sonnet-5-5",
    ]
    attrs = dict(turn.attributes or {})
    assert attrs["gen_ai.operation.name"] == "invoke_agent"
    assert attrs["gen_ai.agent.name"] == "loom"
    assert attrs["gen_ai.conversation.id"] == session.session_id
    assert attrs["loom.front"] == "cell"
    assert str(attrs["loom.notebook"]).endswith("analysis.ipynb")
    assert "gen_ai.input.messages" not in attrs  # contents are off by default

    chats = recorded.named("chat")
    first = dict(chats[0].attributes or {})
    assert first["gen_ai.operation.name"] == "chat"
    assert first["gen_ai.provider.name"] == "anthropic"
    assert first["gen_ai.request.model"] == first["gen_ai.response.model"] == "claude-sonnet-5-5"
    assert first["gen_ai.usage.input_tokens"] > 0  # type: ignore[operator]
    assert first["gen_ai.usage.output_tokens"] > 0  # type: ignore[operator]
    assert "gen_ai.usage.cache_read.input_tokens" in first
    assert "gen_ai.usage.cache_creation.input_tokens" in first
    assert tuple(first["gen_ai.response.finish_reasons"]) == ("tool_use",)  # type: ignore[arg-type]
    assert tuple(chats[-1].attributes["gen_ai.response.finish_reasons"]) == ("end_turn",)  # type: ignore[index]
    total = sum(float(c.attributes["loom.cost_usd"]) for c in chats)  # type: ignore[arg-type,index]
    assert abs(total - done.cost_usd) < 1e-9
    assert all(c.start_time <= c.end_time for c in chats)  # type: ignore[operator]

    ok, failed = recorded.named("execute_tool")
    assert ok.attributes["gen_ai.tool.name"] == "run_python"  # type: ignore[index]
    assert str(ok.attributes["gen_ai.tool.call.id"]).startswith("toolu_")  # type: ignore[index]
    assert ok.attributes["loom.approval"] == "auto"  # type: ignore[index]
    assert ok.status.is_ok
    assert failed.status.status_code.name == "ERROR"
    assert failed.attributes["error.type"] == "tool_error"  # type: ignore[index]
    assert "gen_ai.tool.call.arguments" not in (ok.attributes or {})


async def test_tokens_and_durations_are_gen_ai_histograms(
    recorded: Recorded, open_session: OpenSession, fake_model: FakeModel
) -> None:
    model, _ = fake_model(list(SCRIPT))
    session = await open_session(model)
    done = await _turn(session, "What is six times seven?")

    tokens = recorded.metric_points("gen_ai.client.token.usage")
    by_type = {p.attributes["gen_ai.token.type"]: p for p in tokens}
    assert by_type["input"].count == by_type["output"].count == 3
    assert by_type["output"].sum == done.usage.output_tokens
    assert by_type["input"].attributes["gen_ai.request.model"] == "claude-sonnet-5-5"
    (duration,) = recorded.metric_points("gen_ai.client.operation.duration")
    assert duration.count == 3
    assert duration.sum > 0


async def test_approval_words_say_whether_the_person_was_asked(
    recorded: Recorded, open_session: OpenSession, fake_model: FakeModel
) -> None:
    model, _ = fake_model(
        [
            {
                "content": [
                    {"type": "tool_use", "name": "list_files", "input": {}},
                    {"type": "tool_use", "name": "run_python", "input": {"code": "a = 1"}},
                    {"type": "tool_use", "name": "run_python", "input": {"code": "b = 2"}},
                ]
            },
            "Done.",
        ]
    )
    answers = iter([True, False])

    async def approver(request: object) -> str:
        return "yes" if next(answers) else "no"

    session = await open_session(model, approval="ask", approver=approver)
    await _turn(session, "set a and b")
    words = [s.attributes["loom.approval"] for s in recorded.named("execute_tool")]  # type: ignore[index]
    assert words == ["allowed", "asked", "denied"]


async def test_contents_only_with_capture_content_and_then_redacted(
    open_session: OpenSession, fake_model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_TEST_TOKEN", SECRET)
    script = [
        {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": f"'{SECRET}'"}}]},
        "The key is hidden.",
    ]
    for capture in (False, True):
        recorded = Recorded(capture_content=capture)
        model, _ = fake_model(list(script))
        session = await open_session(model, resume=False)
        await _turn(session, f"Print the string {SECRET[:12]} for me")
        turn = recorded.named("invoke_agent")[-1]
        tool = recorded.named("execute_tool")[-1]
        chat = recorded.named("chat")[-1]
        attrs = {**turn.attributes, **tool.attributes, **chat.attributes}  # type: ignore[dict-item]
        keys = (
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
        )
        if not capture:
            assert not set(keys) & set(attrs)
            continue
        assert set(keys) <= set(attrs)
        everything = json.dumps([str(v) for v in attrs.values()])
        assert SECRET not in everything
        assert REDACTED in str(tool.attributes["gen_ai.tool.call.arguments"])  # type: ignore[index]
        said = json.loads(str(chat.attributes["gen_ai.output.messages"]))  # type: ignore[index]
        assert said[0]["parts"][0]["content"] == "The key is hidden."
        asked = json.loads(str(turn.attributes["gen_ai.input.messages"]))  # type: ignore[index]
        assert asked[0]["role"] == "user"
