"""One %delegate run's tree: the delegation, its planner's and judge's chat spans, and one
invoke_agent span per attempt at a subtask with that sub-agent's chat and execute_tool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loom_jupyter.models.scripted import ScriptedModel, text, tool_call
from loom_jupyter.orchestrator import attach

if TYPE_CHECKING:
    from loom_jupyter.models.base import ModelRequest

    from .conftest import OpenSession, Recorded

PLAN = {
    "subtasks": [
        {
            "id": "load",
            "description": "load the numbers",
            "depends_on": [],
            "acceptance": "",
            "check": None,
        },
        {
            "id": "sum",
            "description": "sum the numbers",
            "depends_on": ["load"],
            "acceptance": "",
            "check": None,
        },
    ]
}


def _route(request: ModelRequest) -> Any:
    if request.tool_choice == "submit_plan":
        return tool_call("submit_plan", PLAN)
    if request.tool_choice == "submit_verdict":
        return tool_call("submit_verdict", {"verdict": "pass", "feedback": "ok"})
    if len(request.messages) == 1:  # a sub-agent's first call: run some code
        return tool_call("run_python", {"code": "numbers = [1, 2, 3]"})
    return text("done: numbers ready")


async def test_a_delegation_is_a_tree_of_invoke_agent_spans(
    recorded: Recorded, open_session: OpenSession
) -> None:
    session = await open_session(ScriptedModel(_route), delegate_stagger=False)
    outcome = await attach(session).start("Add up some numbers")
    assert outcome.status == "passed"

    roots = [s for s in recorded.named("invoke_agent loom") if s.parent is None]
    (delegation,) = roots
    assert dict(delegation.attributes or {})["loom.task.id"] == outcome.task_id
    assert delegation.attributes["loom.front"] == "delegate"  # type: ignore[index]
    assert delegation.attributes["gen_ai.conversation.id"] == session.session_id  # type: ignore[index]
    assert recorded.tree(delegation) == [
        "invoke_agent loom",
        "  chat scripted",
        "  invoke_agent loom-subagent",
        "    chat scripted",
        "    execute_tool run_python",
        "    chat scripted",
        "  chat scripted",
        "  invoke_agent loom-subagent",
        "    chat scripted",
        "    execute_tool run_python",
        "    chat scripted",
        "  chat scripted",
    ]
    purposes = [s.attributes.get("loom.purpose") for s in recorded.children(delegation)]  # type: ignore[union-attr]
    assert purposes == ["submit_plan", None, "submit_verdict", None, "submit_verdict"]
    subagents = recorded.named("invoke_agent loom-subagent")
    assert [s.attributes["loom.subtask.id"] for s in subagents] == ["load", "sum"]  # type: ignore[index]
    assert all(s.attributes["gen_ai.conversation.id"] != session.session_id for s in subagents)  # type: ignore[index]
    assert delegation.attributes["loom.end_reason"] == "passed"  # type: ignore[index]
