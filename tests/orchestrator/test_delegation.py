"""Delegations end to end with a ScriptedModel, a real archive, a real session and LocalKernel."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.errors import OverloadedError, SessionBusyError
from loom_jupyter.models.scripted import fail, stall, text, tool_call
from loom_jupyter.orchestrator import DelegateOptions, TaskUpdate

from .conftest import OpenDelegations, Router, first_user_text, plan, scripted, sequence

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive
    from loom_jupyter.models.base import ModelRequest
    from loom_jupyter.tools.local_kernel import LocalKernel

GOAL = "Profile the four regional sales files"


async def rows(archive: Archive, task_id: str) -> dict[str, tuple[str, int, str]]:
    subtasks = await archive.list_subtasks(task_id)
    return {s.subtask_key: (s.status, s.attempts, s.reason) for s in subtasks}


async def test_independent_subtasks_run_at_once_up_to_the_limit(
    delegations: OpenDelegations, archive: Archive
) -> None:
    arrived: list[str] = []
    everyone = asyncio.Event()
    in_flight, peak = [0], [0]

    async def gathered(request: ModelRequest) -> object:
        # Every first request waits for all four: serial execution would never get here.
        arrived.append(first_user_text(request).split("\n")[0])
        in_flight[0] += 1
        peak[0] = max(peak[0], in_flight[0])
        if len(arrived) == 4:
            everyone.set()
        await asyncio.wait_for(everyone.wait(), 60)
        in_flight[0] -= 1
        return text("profiled")

    keys = ("north", "south", "east", "west")
    router = Router(
        [plan(*({"id": k, "description": f"profile {k}"} for k in keys))],
        steps={f"profile {k}": [gathered] for k in keys},
    )
    orchestrator = await delegations(scripted(router), delegate_stagger=False)
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "passed"
    assert peak[0] == 4
    assert sorted(arrived) == sorted(f"profile {k}" for k in keys)
    assert {k: v[:2] for k, v in (await rows(archive, outcome.task_id)).items()} == dict.fromkeys(
        keys, ("passed", 1)
    )
    task = await archive.get_task(outcome.task_id)
    assert task.status == "passed"


async def test_the_parallel_limit_holds(delegations: OpenDelegations) -> None:
    in_flight, peak = [0], [0]
    two = asyncio.Event()

    async def counted(request: ModelRequest) -> object:
        in_flight[0] += 1
        peak[0] = max(peak[0], in_flight[0])
        if in_flight[0] == 2:
            two.set()
        await asyncio.wait_for(two.wait(), 60)
        await asyncio.sleep(0)
        in_flight[0] -= 1
        return text("done")

    keys = ("a", "b", "c", "d", "e")
    router = Router(
        [plan(*({"id": k, "description": f"work {k}"} for k in keys))],
        steps={f"work {k}": [counted] for k in keys},
    )
    orchestrator = await delegations(scripted(router), delegate_stagger=False)
    outcome = await orchestrator.start(GOAL, options=DelegateOptions(max_parallel=2))
    assert outcome.status == "passed"
    assert peak[0] == 2


async def test_staggering_sends_the_others_after_the_first_token(
    delegations: OpenDelegations,
) -> None:
    keys = ("a", "b", "c")
    router = Router([plan(*({"id": k, "description": f"work {k}"} for k in keys))])
    orchestrator = await delegations(scripted(router))
    order: list[str] = []
    orchestrator.subscribe(
        lambda u: order.append(f"answering {u.subtask}") if u.message == "answering" else None
    )
    original = router._step

    async def logged(request: ModelRequest) -> object:
        order.append("request " + first_user_text(request).split("\n")[0])
        return await original(request)

    router._step = logged  # type: ignore[method-assign]
    assert (await orchestrator.start(GOAL)).status == "passed"
    leader = order[0].removeprefix("request work ")
    assert order.index(f"answering {leader}") < min(
        order.index(f"request work {k}") for k in keys if k != leader
    )


async def test_a_dependency_chain_runs_in_order_and_passes_results_on(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router(
        [
            plan(
                {"id": "load", "description": "load the data"},
                {"id": "clean", "description": "clean the data", "depends_on": ["load"]},
                {"id": "report", "description": "write the report", "depends_on": ["clean"]},
            )
        ],
        steps={
            "load the data": [text("loaded 120 rows into df")],
            "clean the data": [text("dropped 3 NaN rows")],
        },
    )
    model = scripted(router)
    orchestrator = await delegations(model)
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "passed"
    firsts = [key for kind, key in router.log if kind == "first"]
    assert firsts == ["load the data", "clean the data", "write the report"]
    clean_request = next(
        r for r in model.requests if first_user_text(r).startswith("clean the data")
    )
    assert "- load: loaded 120 rows into df" in first_user_text(clean_request)
    assert "Subtasks:\n- load: passed (1 attempt) — loaded 120 rows into df" in outcome.digest
    assert f"Delegated task {outcome.task_id} — passed (3/3 subtasks passed)" in outcome.digest


async def test_a_failing_check_is_retried_with_its_error_then_passes(
    delegations: OpenDelegations, archive: Archive, kernel: LocalKernel
) -> None:
    description = "compute the revenue column"
    router = Router(
        [plan({"id": "rev", "description": description, "check": "revenue == 42"})],
        steps={
            description: [
                sequence(tool_call("run_python", {"code": "revenue = 41"}), text("revenue set")),
                sequence(tool_call("run_python", {"code": "revenue = 42"}), text("fixed: 42")),
            ]
        },
    )
    model = scripted(router)
    orchestrator = await delegations(model)
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "passed"
    assert kernel.namespace["revenue"] == 42
    [row] = await archive.list_subtasks(outcome.task_id)
    assert (row.status, row.attempts) == ("passed", 2)
    verdicts = json.loads(row.verdicts_json)
    assert [(v["source"], v["verdict"]) for v in verdicts] == [("check", "fail"), ("judge", "pass")]
    feedback = verdicts[0]["feedback"]
    assert feedback == "check `revenue == 42` was False"
    retry = [r for r in model.requests if len(r.messages) == 1 and r.tool_choice is None][1]
    retry_text = first_user_text(retry)
    assert retry_text.startswith(description)
    assert feedback in retry_text
    assert "revenue (int)" in outcome.digest
    # two attempts, two child sessions, both children of the delegating session
    sessions = json.loads(row.sessions_json)
    assert len(sessions) == 2
    assert row.child_session_id == sessions[-1]
    task = await archive.get_task(outcome.task_id)
    for sid in sessions:
        child = await archive.get_session(sid)
        assert child.parent_session_id == task.session_id
        assert child.status == "closed"
        turns = await archive.get_turns(sid)
        assert turns[0].role == "user"
        assert turns[0].content.startswith(description)


async def test_a_judge_failure_is_retried_with_the_feedback_verbatim(
    delegations: OpenDelegations, archive: Archive
) -> None:
    description = "summarise the regions"
    router = Router(
        [plan({"id": "sum", "description": description, "acceptance": "a total per region"})],
        verdicts={"sum": ["fail: the total for the west region is missing", "pass: all four"]},
    )
    model = scripted(router)
    orchestrator = await delegations(model)
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "passed"
    [row] = await archive.list_subtasks(outcome.task_id)
    assert (row.status, row.attempts, row.verdict) == ("passed", 2, "pass")
    judge = [r for r in model.requests if r.tool_choice == "submit_verdict"]
    assert len(judge) == 2
    assert judge[0].model == "claude-haiku-5-5"
    retry = [r for r in model.requests if len(r.messages) == 1 and r.tool_choice is None][1]
    assert "the total for the west region is missing" in first_user_text(retry)
    assert "Verified:\n- sum: all four" in outcome.digest


async def test_a_subtask_that_never_passes_fails_and_its_dependents_are_skipped(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router(
        [
            plan(
                {"id": "a", "description": "step a"},
                {"id": "b", "description": "step b", "depends_on": ["a"]},
                {"id": "c", "description": "step c", "depends_on": ["b"]},
                {"id": "d", "description": "step d"},
            )
        ],
        verdicts={"a": ["fail: wrong"]},
    )
    orchestrator = await delegations(scripted(router))
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "failed"
    got = await rows(archive, outcome.task_id)
    assert got["a"][:2] == ("failed", 3)
    assert got["a"][2] == "did not pass verification in 3 runs: wrong"
    assert got["b"] == ("skipped", 0, "depends on a, which failed")
    assert got["c"] == ("skipped", 0, "depends on b, which was skipped")
    assert got["d"][:2] == ("passed", 1)


async def test_a_cycle_is_replanned_with_the_error_in_plain_words(
    delegations: OpenDelegations, archive: Archive
) -> None:
    cyclic = plan({"id": "a", "depends_on": ["b"]}, {"id": "b", "depends_on": ["a"]})
    router = Router([cyclic, plan({"id": "a"}, {"id": "b", "depends_on": ["a"]})])
    model = scripted(router)
    orchestrator = await delegations(model)
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "passed"
    planning = [r for r in model.requests if r.tool_choice == "submit_plan"]
    assert len(planning) == 2
    asked_again = planning[1].messages[-1].text
    assert GOAL in asked_again
    assert "cycle: a -> b -> a" in asked_again


async def test_a_plan_invalid_twice_fails_clearly_without_running_anything(
    delegations: OpenDelegations, archive: Archive
) -> None:
    cyclic = plan({"id": "a", "depends_on": ["a"]})
    router = Router([cyclic, cyclic])
    orchestrator = await delegations(scripted(router))
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "failed"
    assert "The plan was invalid twice (cycle: a -> a); nothing was run." in outcome.digest
    task = await archive.get_task(outcome.task_id)
    assert task.status == "failed"
    assert await archive.list_subtasks(outcome.task_id) == []
    assert [kind for kind, _ in router.log] == ["plan", "plan"]


async def test_a_subtask_raising_fails_alone(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router(
        [
            plan(
                {"id": "bad", "description": "break"},
                {"id": "after", "description": "after bad", "depends_on": ["bad"]},
                {"id": "fine", "description": "fine work"},
            )
        ],
        steps={"break": [fail(OverloadedError("Anthropic is overloaded"), after_deltas=1)]},
    )
    orchestrator = await delegations(scripted(router))
    outcome = await orchestrator.start(GOAL)
    got = await rows(archive, outcome.task_id)
    assert got["bad"][0] == "failed"
    assert "overloaded" in got["bad"][2]
    assert got["after"] == ("skipped", 0, "depends on bad, which failed")
    assert got["fine"][0] == "passed"
    assert outcome.status == "failed"


async def test_the_iteration_limit_makes_a_subtask_incomplete_never_passed(
    delegations: OpenDelegations, archive: Archive
) -> None:
    looping = tool_call("inspect_variables", {})
    router = Router(
        [plan({"id": "loop", "description": "loop forever"})], steps={"loop forever": [looping]}
    )
    orchestrator = await delegations(scripted(router), delegate_subtask_iterations=3)
    outcome = await orchestrator.start(GOAL)
    got = await rows(archive, outcome.task_id)
    assert got["loop"][0] == "incomplete"
    assert "max_iterations=3" in got["loop"][2]
    assert outcome.status == "failed"
    assert ("judge", "loop") not in router.log


async def test_the_wall_clock_limit_makes_a_subtask_incomplete(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router(
        [plan({"id": "slow", "description": "slow work"})],
        steps={"slow work": [stall(after_deltas=1)]},
    )
    orchestrator = await delegations(scripted(router), delegate_subtask_seconds=0.5)
    outcome = await orchestrator.start(GOAL)
    got = await rows(archive, outcome.task_id)
    assert got["slow"][:2] == ("incomplete", 1)
    assert got["slow"][2] == "wall-clock limit reached (0.5 s per subtask run)"
    [row] = await archive.list_subtasks(outcome.task_id)
    turns = await archive.get_turns(str(row.child_session_id))
    assert [t.status for t in turns][-1] == "interrupted"  # the partial answer is kept


async def test_the_token_budget_stops_new_work_and_says_so(
    delegations: OpenDelegations, archive: Archive
) -> None:
    keys = ("a", "b", "c")
    router = Router(
        [plan({"id": "a"}, {"id": "b", "depends_on": ["a"]}, {"id": "c", "depends_on": ["b"]})]
    )
    orchestrator = await delegations(scripted(router), delegate_budget_tokens=1)
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "failed"
    got = await rows(archive, outcome.task_id)
    assert {k: got[k][0] for k in keys} == {"a": "skipped", "b": "skipped", "c": "skipped"}
    assert got["a"][2].startswith("token budget reached")
    assert "Note: Stopped early: token budget reached" in outcome.digest
    assert [kind for kind, _ in router.log] == ["plan"]  # nothing ran after the breach


async def test_a_budget_breach_mid_run_stops_the_running_subtasks(
    delegations: OpenDelegations, archive: Archive
) -> None:
    big = sequence(tool_call("inspect_variables", {}), text("done"))
    router = Router([plan({"id": "a", "description": "big"})], steps={"big": [big]})
    model = scripted(router)
    orchestrator = await delegations(model, delegate_budget_tokens=1500)
    outcome = await orchestrator.start(GOAL)
    got = await rows(archive, outcome.task_id)
    assert got["a"][0] in ("incomplete", "skipped")
    task = await archive.get_task(outcome.task_id)
    assert task.status == "failed"
    assert task.message.startswith("Stopped early: token budget")
    assert task.input_tokens + task.output_tokens >= 1500


async def test_cancel_stops_every_running_subtask(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router(
        [
            plan(
                {"id": "a", "description": "wait a"},
                {"id": "b", "description": "wait b"},
                {"id": "c", "description": "after", "depends_on": ["a"]},
            )
        ],
        steps={"wait a": [stall(after_deltas=1)], "wait b": [stall(after_deltas=1)]},
    )
    orchestrator = await delegations(scripted(router))
    both = asyncio.Event()
    seen: set[str] = set()

    def on_update(update: TaskUpdate) -> None:
        if update.message == "answering" and update.subtask:
            seen.add(update.subtask)
            if seen == {"a", "b"}:
                both.set()

    orchestrator.subscribe(on_update)
    started = await orchestrator.start(GOAL, background=True)
    await asyncio.wait_for(both.wait(), 60)
    assert orchestrator.cancel(started.task_id[:8]) == [started.task_id]
    outcome = await orchestrator.wait(started.task_id)
    assert outcome is not None
    assert outcome.status == "cancelled"
    got = await rows(archive, started.task_id)
    assert {k: v[0] for k, v in got.items()} == {
        "a": "cancelled",
        "b": "cancelled",
        "c": "cancelled",
    }
    assert (await archive.get_task(started.task_id)).status == "cancelled"


async def test_background_delegation_posts_its_digest_for_the_next_turn(
    delegations: OpenDelegations, archive: Archive
) -> None:
    router = Router([plan({"id": "only", "description": "the only step"})])
    model = scripted(router)
    orchestrator = await delegations(model)
    started = await orchestrator.start(GOAL, background=True)
    assert started.status == "running"
    assert orchestrator.running == [started.task_id]
    outcome = await orchestrator.wait(started.task_id)
    assert outcome is not None
    assert outcome.status == "passed"
    session = orchestrator.session
    assert session.session_id is not None
    turns = await archive.get_turns(session.session_id)
    note = turns[-1]
    assert note.role == "system"
    assert note.content == outcome.digest
    router.steps["next turn"] = [text("seen")]
    model.script = router  # the next conversation turn sees the digest in its request
    events = [e async for e in session.send("what did the delegation find?")]
    assert events[-1].kind == "turn_done", events[-1]
    assert any(outcome.digest in m.text for m in model.requests[-1].messages)


async def test_a_background_digest_goes_to_the_session_that_delegated(
    delegations: OpenDelegations, archive: Archive
) -> None:
    gate = asyncio.Event()

    async def held(request: ModelRequest) -> object:
        await asyncio.wait_for(gate.wait(), 60)
        return text("done at last")

    router = Router([plan({"id": "only", "description": "held"})], steps={"held": [held]})
    orchestrator = await delegations(scripted(router))
    started = await orchestrator.start(GOAL, background=True)
    delegating = orchestrator.session.session_id
    assert delegating is not None
    with pytest.raises(SessionBusyError, match=r"^A delegation is running: wait for it"):
        await orchestrator.session.new()  # no moving on while it runs (issue 31 item 1)
    gate.set()
    outcome = await orchestrator.wait(started.task_id)  # returns once the digest is posted
    assert outcome is not None
    notes = [t for t in await archive.get_turns(delegating) if t.role == "system"]
    assert [n.content for n in notes] == [outcome.digest]
    await orchestrator.session.new()  # it ended: the person moves on to a new conversation
    assert orchestrator.session.session_id is None  # the new conversation got nothing


async def test_sub_agents_cache_their_history_for_five_minutes(
    delegations: OpenDelegations,
) -> None:
    router = Router(
        [plan({"id": "load", "description": "load the data"})],
        steps={"load the data": [sequence(tool_call("run_python", {"code": "x = 1"}), text("ok"))]},
    )
    model = scripted(router)
    outcome = await (await delegations(model)).start(GOAL)
    assert outcome.status == "passed", outcome.digest
    sub_agent = [r for r in model.requests if first_user_text(r).startswith("load the data")]
    assert len(sub_agent) == 2  # the brief, then after the tool round
    assert {r.history_ttl for r in sub_agent} == {"5m"}  # requests seconds apart
    assert {r.prefix_ttl for r in sub_agent} == {"1h"}  # tools + system shared with the parent


@pytest.mark.parametrize(
    ("model_name", "cost"), [("acme-model-x", "price unknown"), ("claude-sonnet-4-5", "$0.0")]
)
async def test_the_digest_never_shows_an_unpriced_models_cost_as_zero(
    delegations: OpenDelegations, model_name: str, cost: str
) -> None:
    from loom_jupyter.models.scripted import ScriptedModel

    router = Router(
        [plan({"id": "one", "description": "count rows"})],
        steps={"count rows": [text("120 rows")]},
    )
    orchestrator = await delegations(ScriptedModel(router, model_name=model_name))
    outcome = await orchestrator.start(GOAL)
    cost_line = next(line for line in outcome.digest.splitlines() if line.startswith("Cost:"))
    assert f"tokens, {cost}" in cost_line
    assert outcome.snapshot is not None
    assert outcome.snapshot.cost_text.startswith(cost)
    assert cost == "price unknown" or "unknown" not in cost_line


async def test_sub_agents_ask_as_the_session_does(
    delegations: OpenDelegations, notebook: Path
) -> None:
    from loom_jupyter.models.scripted import ScriptedModel
    from loom_jupyter.trust import decide, read_request

    (notebook.parent / "AGENTS.md").write_text("Always use metric units.\n")
    # instructions reach the model only from a trusted folder
    decide(notebook, "trust", shown=read_request(notebook).digest)
    router = Router(
        [plan({"id": "one", "description": "count rows"})],
        steps={"count rows": [text("120 rows")]},
    )
    model = ScriptedModel(router, model_name="claude-opus-4-6")
    orchestrator = await delegations(
        model, thinking="adaptive", effort="high", max_output_tokens=12_345
    )
    outcome = await orchestrator.start(GOAL)
    assert outcome.status == "passed"
    sub_agent = next(r for r in model.requests if first_user_text(r).startswith("count rows"))
    assert "Always use metric units." in sub_agent.system  # the project instructions
    assert (sub_agent.thinking, sub_agent.effort) == (True, "high")
    assert sub_agent.max_tokens == 12_345
