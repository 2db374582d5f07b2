"""The pinned wire contract (DESIGN.md §7), asserted on what the real SDK sent to the fake API."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import anthropic
import pytest

from loom_jupyter.models.anthropic import AnthropicModel
from loom_jupyter.settings import Settings
from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from .conftest import OpenDelegations

GOAL = "Clean the survey answers and tabulate the scores per question"
CYCLIC = [
    {"id": "a", "description": "clean", "depends_on": ["b"], "acceptance": "", "check": None},
    {"id": "b", "description": "tabulate", "depends_on": ["a"], "acceptance": "", "check": None},
]
GOOD = [
    {
        "id": "clean",
        "description": "Clean the answers",
        "depends_on": [],
        "acceptance": "no blanks",
        "check": "cleaned == True",
    },
    {
        "id": "tab",
        "description": "Tabulate the scores",
        "depends_on": ["clean"],
        "acceptance": "a table",
        "check": None,
    },
]
FEEDBACK = "The table has no row for question 7; add it."


def _texts(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


class Script:
    def __init__(self) -> None:
        self.plans = [CYCLIC, GOOD]
        self.verdicts = [("fail", FEEDBACK), ("pass", "question 7 is there")]
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        choice = (body.get("tool_choice") or {}).get("name")
        with self.lock:
            if choice == "submit_plan":
                plan = {"subtasks": self.plans.pop(0)}
                return {"content": [{"type": "tool_use", "name": "submit_plan", "input": plan}]}
            if choice == "submit_verdict":
                first = _texts(body["messages"][-1]).split("\n", 1)[0]
                verdict, feedback = (
                    self.verdicts.pop(0) if first == "Subtask id: tab" else ("pass", "ok")
                )
                answer = {"verdict": verdict, "feedback": feedback}
                return {
                    "content": [{"type": "tool_use", "name": "submit_verdict", "input": answer}]
                }
        if len(body["messages"]) == 1 and "Clean the answers" in _texts(body["messages"][0]):
            return {
                "content": [
                    {"type": "tool_use", "name": "run_python", "input": {"code": "cleaned = True"}}
                ]
            }
        return "Done."


@pytest.fixture
async def model() -> AsyncIterator[tuple[AnthropicModel, FakeAnthropic]]:
    with FakeAnthropic(responder=Script(), default="error") as fake:
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-wire-tests-000000",
            base_url=fake.base_url,
            _strict_response_validation=True,
        )
        yield AnthropicModel(Settings(), client=client), fake
        await client.close()


async def test_requests_follow_the_pinned_contract(
    delegations: OpenDelegations, model: tuple[AnthropicModel, FakeAnthropic]
) -> None:
    adapter, fake = model
    orchestrator = await delegations(adapter)
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "passed", outcome.digest
    bodies = [r.body for r in fake.message_requests]

    planning = [
        b for b in bodies if b.get("tool_choice") == {"type": "tool", "name": "submit_plan"}
    ]
    assert len(planning) == 2
    assert GOAL in _texts(planning[0]["messages"][-1])
    assert [t["name"] for t in planning[0]["tools"]] == ["submit_plan"]
    again = _texts(planning[1]["messages"][-1])
    assert GOAL in again
    assert "cycle: a -> b -> a" in again

    firsts = [b for b in bodies if not b.get("tool_choice") and len(b["messages"]) == 1]
    described = {
        sub["description"]: [b for b in firsts if sub["description"] in _texts(b["messages"][0])]
        for sub in GOOD
    }
    assert len(described["Clean the answers"]) == 1
    assert len(described["Tabulate the scores"]) == 2
    assert "submit_plan" not in str([t["name"] for t in firsts[0]["tools"]])
    assert "delegate_task" not in [t["name"] for t in firsts[0]["tools"]]
    retry = _texts(described["Tabulate the scores"][1]["messages"][0])
    assert "Tabulate the scores" in retry
    assert FEEDBACK in retry

    judging = [
        b for b in bodies if b.get("tool_choice") == {"type": "tool", "name": "submit_verdict"}
    ]
    assert len(judging) == 3
    assert all(b["model"] == "claude-haiku-5-5" for b in judging)
    for body in judging:
        last = _texts(body["messages"][-1])
        sub = next(s for s in GOOD if f"Subtask id: {s['id']}" in last)
        assert sub["description"] in last
