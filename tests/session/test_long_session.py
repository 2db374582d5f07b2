"""A 300-turn session: the constraint from turn 3 survives in state and through recall."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from engine.checks import assert_valid_request

from loom_jupyter.engine.events import ToolFinished, TurnDone
from loom_jupyter.messages import TextBlock, ToolResultBlock
from loom_jupyter.models.scripted import ScriptedModel, ScriptedReply, text, tool_call

from .conftest import collect
from .test_fake_api import assert_valid_wire

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive
    from loom_jupyter.models.base import Model, ModelRequest

    from .conftest import FakeApi, OpenSession

CONSTRAINT = "Always use polars, never pandas."
QUESTION = "Load the March file like we agreed earlier. Which dataframe library was it?"
BUDGET = 12_000
RESERVE = 2_000


Plan = tuple[str, Any]  # ("text", answer) or ("tool", (name, input))


def analyst(said: str | None, last_result: str) -> Plan:
    """A model that works like an analyst and recalls when asked about the past.

    ``said`` is the person's new message (None when continuing after tool
    results); ``last_result`` the text of the newest tool result.
    """
    if said is None:
        if "[Turn" in last_result:
            return ("text", f"From the archive: {last_result[:400]}")
        return ("text", "The numbers are above; revenue grew in most weeks.")
    if "Which dataframe library" in said:
        return ("tool", ("conversation_recall", {"action": "search", "query": "dataframe library"}))
    if said.startswith("Step"):
        code = "for i in range(60):\n    print(f'week {i}: revenue {i * 1013 % 977}')"
        return ("tool", ("run_python", {"code": code}))
    return ("text", "Noted.")


def person_said(texts: list[str]) -> str | None:
    """The person's message among the final user message's texts (after state and hint)."""
    rest = [t for t in texts if not t.startswith(("<session_state>", "<recall_hint>"))]
    return rest[-1] if rest else None


def scripted_analyst(request: ModelRequest) -> ScriptedReply:
    texts = [b.text for b in request.messages[-1].content if isinstance(b, TextBlock)]
    said = person_said(texts)
    result = ""
    if said is None:
        result = next(
            b for b in request.messages[-2].content if isinstance(b, ToolResultBlock)
        ).text
    kind, value = analyst(said, result)
    return text(value) if kind == "text" else tool_call(*value)


def wire_analyst(body: dict[str, Any]) -> dict[str, Any]:
    final = body["messages"][-1]["content"]
    said = person_said([b["text"] for b in final if b["type"] == "text"])
    result = ""
    if said is None:
        block = next(b for b in body["messages"][-2]["content"] if b["type"] == "tool_result")
        result = "\n".join(part.get("text", "") for part in block["content"])
    kind, value = analyst(said, result)
    if kind == "text":
        return {"content": [value]}
    name, args = value
    return {"content": [{"type": "tool_use", "name": name, "input": args}]}


@pytest.fixture(params=["scripted", "fake_api"])
def analyst_model(request: pytest.FixtureRequest, fake_api: FakeApi) -> tuple[Model, Any]:
    """The analyst as a ScriptedModel, or behind the fake Messages API through the real SDK."""
    if request.param == "scripted":
        scripted = ScriptedModel(scripted_analyst)
        return scripted, scripted
    return fake_api.model(responder=wire_analyst)


def requests_of(recorder: Any) -> list[ModelRequest | dict[str, Any]]:
    if isinstance(recorder, ScriptedModel):
        return list(recorder.requests)
    return [r.body for r in recorder.message_requests]


async def test_a_constraint_from_turn_3_is_kept_and_recalled_at_turn_300(
    open_session: OpenSession, archive: Archive, analyst_model: tuple[Model, Any]
) -> None:
    model, recorder = analyst_model
    session = await open_session(model, context_budget_tokens=BUDGET, output_reserve_tokens=RESERVE)
    await collect(session, "Let's analyse the sales files in data/.")
    await collect(session, CONSTRAINT + " The dataframe library matters to me.")
    step = 0
    while (session.info.turn_count if session.info else 0) < 296:
        step += 1
        await collect(session, f"Step {step}: summarise weekly revenue for region {step % 7}.")

    events = await collect(session, QUESTION)
    recall = next(e for e in events if isinstance(e, ToolFinished))
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.last_turn >= 300

    assert session.state.decisions[0].text == CONSTRAINT
    assert session.state.decisions[0].turn == 3
    assert session.window.first_turn > 3  # turn 3 is long out of the window...
    # ...yet the request that asked recall had the state and a hint, after the history.
    asked = requests_of(recorder)[-2]
    history, ephemeral = split_final(asked)
    assert f"turn 3: {CONSTRAINT}" in ephemeral
    assert "<recall_hint>" in ephemeral
    assert CONSTRAINT not in history

    assert session.session_id is not None
    result = await archive.get_turn(session.session_id, recall.turn_number)
    assert result.tool_name == "conversation_recall"
    assert not result.is_error
    assert "[Turn 3]" in result.content
    assert "polars" in result.content
    assert "polars" in done.text

    for sent in requests_of(recorder):
        if isinstance(sent, dict):
            assert_valid_wire(sent)
        else:
            assert_valid_request(sent, budget=BUDGET - RESERVE)
    assert session.window.moves >= 3


def split_final(sent: ModelRequest | dict[str, Any]) -> tuple[str, str]:
    """(all history text, the final user message's text) of a request or a wire body."""
    if isinstance(sent, dict):
        messages = [json.dumps(m) for m in sent["messages"]]
        return "\n".join(messages[:-1]), messages[-1]
    return "\n".join(m.text for m in sent.messages[:-1]), sent.messages[-1].text


async def test_every_recall_action_through_the_loop(
    open_session: OpenSession, archive: Archive
) -> None:
    model = ScriptedModel(
        [
            tool_call("run_python", {"code": "print('weekly revenue 12345')"}),
            text("Printed."),
            tool_call("conversation_recall", {"action": "search", "query": "revenue"}),
            tool_call("conversation_recall", {"action": "range", "start_turn": 1, "end_turn": 2}),
            tool_call("conversation_recall", {"action": "tool_calls", "tool_name": "run_python"}),
            tool_call("conversation_recall", {"action": "summary"}),
            tool_call("conversation_recall", {"action": "range"}),
            text("Recalled everything."),
        ]
    )
    session = await open_session(model)
    await collect(session, CONSTRAINT + " Print the weekly revenue.")
    events = await collect(session, "What did we do so far?")
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [f.is_error for f in finished] == [False, False, False, False, True]
    assert session.session_id is not None
    texts = [(await archive.get_turn(session.session_id, f.turn_number)).content for f in finished]
    search, ranged, calls, summary, bad = texts
    assert "[Turn 3]" in search
    assert "12345" in search
    assert "[Turn 1]" in ranged
    assert CONSTRAINT in ranged
    assert "[Turn 3]" not in ranged
    assert "print('weekly revenue 12345')" in calls
    assert CONSTRAINT in summary  # the session state block
    assert "start_turn" in bad  # says what is missing
    for request in model.requests:
        assert_valid_request(request)
