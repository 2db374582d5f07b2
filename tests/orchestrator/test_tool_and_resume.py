"""delegate_task in a conversation turn (the approval card under ask), resume, recall by task id."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.models.scripted import ScriptedModel, stall, text, tool_call
from loom_jupyter.orchestrator import DelegateOptions
from loom_jupyter.settings import Settings
from loom_jupyter.tools.base import ToolContext
from loom_jupyter.tools.recall import ConversationRecall

from .conftest import OpenDelegations, Router, plan, scripted, sequence

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.tools.approval import ApprovalRequest
    from loom_jupyter.tools.local_kernel import LocalKernel

GOAL = "Build and compare three models of churn"
ASK = "please delegate the churn models"


def _delegating_turn() -> list[object]:
    return [
        sequence(
            tool_call("delegate_task", {"goal": GOAL, "context": "use df_churn"}),
            text("The delegation is done."),
        )
    ]


async def test_under_ask_the_plan_and_an_estimate_are_shown_before_anything_runs(
    delegations: OpenDelegations, archive: Archive
) -> None:
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> str:
        asked.append(request)
        return "yes"

    router = Router(
        [plan({"id": "lr", "description": "fit a logistic regression", "check": "True"})],
        steps={ASK: _delegating_turn()},
    )
    orchestrator = await delegations(scripted(router), approver=person, approval="ask")
    events = [e async for e in orchestrator.session.send(ASK)]
    assert events[-1].kind == "turn_done"
    [card] = asked
    assert card.tool_name == "delegate_task"
    assert "- lr: fit a logistic regression" in card.detail
    assert "check: True" in card.detail
    assert "Estimated cost:" in card.detail
    assert "tokens, $" in card.detail
    assert card.detail.endswith("Run this plan? (yes = Run, no = Cancel)")
    finished = [e for e in events if e.kind == "tool_finished" and e.name == "delegate_task"]
    assert finished
    assert not finished[0].is_error
    [task] = await archive.list_tasks(str(orchestrator.session.session_id))
    assert task.status == "passed"
    assert "use df_churn" in router.log[1][1]  # the caller's context reached the planner
    assert ("first", "fit a logistic regression") in router.log


async def test_cancel_on_the_card_runs_nothing(
    delegations: OpenDelegations, archive: Archive
) -> None:
    async def person(request: ApprovalRequest) -> str:
        return "no"

    router = Router([plan({"id": "lr"})], steps={ASK: _delegating_turn()})
    model = scripted(router)
    orchestrator = await delegations(model, approver=person, approval="ask")
    events = [e async for e in orchestrator.session.send(ASK)]
    finished = next(e for e in events if e.kind == "tool_finished")
    assert finished.is_error
    [task] = await archive.list_tasks(str(orchestrator.session.session_id))
    assert task.status == "cancelled"
    assert [s.status for s in await archive.list_subtasks(task.id)] == ["cancelled"]
    assert ("first", "do lr") not in router.log
    assert "The person cancelled the plan" in str(model.requests[-1].messages)


async def test_read_only_refuses_and_auto_runs_without_asking(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router([plan({"id": "lr"})], steps={ASK: _delegating_turn()})
    orchestrator = await delegations(scripted(router), approval="read-only")
    events = [e async for e in orchestrator.session.send(ASK)]
    finished = next(e for e in events if e.kind == "tool_finished")
    assert finished.is_error
    assert "read-only" in finished.summary
    assert await archive.list_tasks(str(orchestrator.session.session_id)) == []
    orchestrator.session.environment.options.set_approval("auto")
    output = await orchestrator.delegate_for_tool(GOAL, "", wait=True)
    assert not output.is_error
    assert output.text_content.startswith("Delegated task ")


async def test_resume_reruns_only_what_did_not_pass(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router(
        [
            plan(
                {"id": "a", "description": "part a"},
                {"id": "b", "description": "part b", "depends_on": ["a"]},
            )
        ],
        verdicts={"b": ["fail: not yet"]},
    )
    orchestrator = await delegations(scripted(router))
    first = await orchestrator.start("two parts")
    assert first.status == "failed"
    router.verdicts["b"] = ["pass: now it is"]
    again = await orchestrator.resume(first.task_id[:6])
    assert again.task_id == first.task_id
    assert again.status == "passed"
    assert router.log.count(("first", "part a")) == 1  # a passed before: not rerun
    assert router.log.count(("first", "part b")) == 4
    rows = {s.subtask_key: s for s in await archive.list_subtasks(first.task_id)}
    assert (rows["a"].status, rows["a"].attempts) == ("passed", 1)
    assert (rows["b"].status, rows["b"].attempts) == ("passed", 4)
    assert "- a: passed (1 attempt)" in again.digest


async def test_unfinished_tasks_show_as_interrupted_after_a_restart(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router([plan({"id": "a"}, {"id": "b"})])
    orchestrator = await delegations(scripted(router))
    done = await orchestrator.start("two parts")
    subtasks = await archive.list_subtasks(done.task_id)
    # what a kernel killed mid-run leaves behind
    await archive.update_task(done.task_id, status="running")
    await archive.update_subtask(subtasks[1].id, status="running")
    assert await orchestrator.mark_interrupted() == [done.task_id]
    task = await archive.get_task(done.task_id)
    assert task.status == "interrupted"
    after = {s.subtask_key: (s.status, s.reason) for s in await archive.list_subtasks(task.id)}
    assert after == {
        "a": ("passed", after["a"][1]),
        "b": ("incomplete", "interrupted by a kernel restart"),
    }
    [snapshot] = await orchestrator.snapshots()
    assert snapshot.status == "interrupted"
    assert [s["status"] for s in snapshot.to_json()["subtasks"]] == ["passed", "incomplete"]
    resumed = await orchestrator.resume(done.task_id)
    assert resumed.status == "passed"
    assert router.log.count(("first", "do a")) == 1


async def test_recall_opens_a_subtask_transcript_by_task_id(
    delegations: OpenDelegations, archive: Archive, kernel: LocalKernel, notebook: Path
) -> None:
    router = Router([plan({"id": "eda", "description": "explore the churn table"})])
    orchestrator = await delegations(scripted(router))
    outcome = await orchestrator.start(GOAL)
    ctx = ToolContext(
        notebook_dir=notebook.parent,
        settings=Settings(),
        kernel=kernel,
        archive=archive,
        session_id=orchestrator.session.session_id,
    )
    recall = ConversationRecall()
    listing = await recall.run(
        recall.parse({"action": "range", "task_id": outcome.task_id[:10]}), ctx
    )
    assert "- eda: passed, 1 attempt(s), 1 transcript(s)" in listing.text_content
    opened = await recall.run(
        recall.parse({"action": "range", "task_id": outcome.task_id, "subtask": "eda"}), ctx
    )
    assert not opened.is_error
    assert "Subtask eda — passed, attempt 1" in opened.text_content
    assert "explore the churn table" in opened.text_content
    assert "finished explore the churn table" in opened.text_content


async def test_interrupting_the_turn_cancels_the_delegation_it_started(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router(
        [plan({"id": "slow", "description": "slow part"}, {"id": "later", "depends_on": ["slow"]})],
        steps={ASK: _delegating_turn(), "slow part": [stall(after_deltas=1)]},
    )
    orchestrator = await delegations(scripted(router))
    session = orchestrator.session
    answering = asyncio.Event()
    orchestrator.subscribe(lambda u: answering.set() if u.message == "answering" else None)

    async def turn() -> list[object]:
        return [e async for e in session.send(ASK)]

    running = asyncio.ensure_future(turn())
    await asyncio.wait_for(answering.wait(), 60)
    assert session.interrupt()
    events = await asyncio.wait_for(running, 60)
    assert events[-1].kind == "turn_done"
    assert events[-1].stop_reason == "interrupted"
    [task] = await archive.list_tasks(str(session.session_id))
    assert task.status == "cancelled"
    rows = {s.subtask_key: s.status for s in await archive.list_subtasks(task.id)}
    assert rows == {"slow": "cancelled", "later": "cancelled"}


async def test_the_run_cap_stops_new_runs(delegations: OpenDelegations, archive: Archive) -> None:
    router = Router(
        [plan({"id": "a"}, {"id": "b", "depends_on": ["a"]})], verdicts={"a": ["fail: again"]}
    )
    orchestrator = await delegations(scripted(router), delegate_max_runs=2)
    outcome = await orchestrator.start(GOAL)
    subtasks = await archive.list_subtasks(outcome.task_id)
    rows = {s.subtask_key: (s.status, s.attempts, s.reason) for s in subtasks}
    assert rows["a"] == ("failed", 2, "run cap reached (2 sub-agent runs)")
    assert rows["b"] == ("skipped", 0, "depends on a, which failed")


async def test_the_dollar_budget_stops_new_work(
    delegations: OpenDelegations, archive: Archive
) -> None:
    priced = ScriptedModel(Router([plan({"id": "c"})]), model_name="claude-opus-5-5")
    orchestrator = await delegations(priced)
    outcome = await orchestrator.start(GOAL, options=DelegateOptions(budget_usd=0.0001))
    task = await archive.get_task(outcome.task_id)
    assert task.status == "failed"
    assert task.message.startswith("Stopped early: cost budget reached ($")
    assert task.cost_usd >= 0.0001


async def test_sub_agents_of_a_read_only_session_stay_read_only(
    delegations: OpenDelegations, archive: Archive, kernel: LocalKernel
) -> None:
    change = sequence(tool_call("run_python", {"code": "changed = True"}), text("tried"))
    router = Router([plan({"id": "a", "description": "change it"})], steps={"change it": [change]})
    orchestrator = await delegations(scripted(router), approval="read-only")
    outcome = await orchestrator.start(GOAL, options=DelegateOptions(verify=False))
    assert "changed" not in kernel.namespace
    [row] = await archive.list_subtasks(outcome.task_id)
    turns = await archive.get_turns(str(row.child_session_id))
    refused = [t for t in turns if t.role == "tool"]
    assert refused[0].is_error
    assert "read-only" in refused[0].content


@pytest.mark.attack(
    attack="Approving a delegate_task plan ran every sub-agent under `auto`: injected text "
    "in a file a sub-agent reads gets a shell command run with no question",
    stopped_by="Sub-agents run under the session's approval mode: under `ask` each write call "
    "asks through the same cards, one at a time",
    ref="F7",
)
async def test_under_ask_a_sub_agents_write_calls_ask_too(
    delegations: OpenDelegations, archive: Archive, tmp_path: Path
) -> None:
    marker = tmp_path / "SUB_AGENT_RAN"
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> str:
        asked.append(request)
        return "yes" if request.tool_name == "delegate_task" else "no"

    shell = tool_call("shell", {"command": f"touch {marker}"})
    router = Router(
        [plan({"id": "lr", "description": "fit a logistic regression"})],
        steps={
            ASK: _delegating_turn(),
            "fit a logistic regression": [sequence(shell, text("could not run it"))],
        },
    )
    orchestrator = await delegations(scripted(router), approver=person, approval="ask")
    events = [e async for e in orchestrator.session.send(ASK)]

    assert events[-1].kind == "turn_done"
    assert [r.tool_name for r in asked] == ["delegate_task", "shell"]
    assert f"touch {marker}" in asked[1].detail
    assert not marker.exists()
