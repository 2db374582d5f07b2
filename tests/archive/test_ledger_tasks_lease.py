"""The usage ledger, delegated tasks and single-writer leases."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive
from loom_jupyter.archive.clock import ManualClock
from loom_jupyter.errors import LeaseHeldError, SessionNotFoundError, TurnNotFoundError
from loom_jupyter.messages import Usage

if TYPE_CHECKING:
    from pathlib import Path


async def test_model_calls_add_up_per_session_and_notebook(
    archive: Archive, session: str, notebook: str
) -> None:
    other = await archive.create_session(notebook_path=notebook, model="m")
    elsewhere = await archive.create_session(notebook_path="/else.ipynb", model="m")
    await archive.record_model_call(
        session,
        model="m",
        usage=Usage(100, 20, 5, 50),
        stop_reason="tool_use",
        latency_ms=120.5,
        cost_usd=0.01,
        turn_number=2,
    )
    await archive.record_model_call(
        session,
        model="m",
        usage=Usage(1, 2),
        stop_reason=None,
        latency_ms=9.0,
        error="overloaded",
        cost_usd=0.001,
    )
    await archive.record_model_call(
        other, model="m", usage=Usage(7, 3), stop_reason="end_turn", latency_ms=1.0
    )
    await archive.record_model_call(
        elsewhere, model="m", usage=Usage(1000, 1000), stop_reason="end_turn", latency_ms=1.0
    )
    totals = await archive.usage_totals(session)
    assert (totals.input_tokens, totals.output_tokens) == (101, 22)
    assert (totals.cache_creation_tokens, totals.cache_read_tokens, totals.calls) == (5, 50, 2)
    assert totals.cost_usd == pytest.approx(0.011)
    info = await archive.get_session(session)
    assert (info.input_tokens, info.output_tokens, info.cost_usd) == (101, 22, totals.cost_usd)
    calls = await archive.model_calls(session)
    assert [(c.stop_reason, c.error, c.turn_number) for c in calls] == [
        ("tool_use", None, 2),
        (None, "overloaded", None),
    ]
    assert calls[0].latency_ms == 120.5
    book = await archive.notebook_usage(notebook)
    assert (book.input_tokens, book.output_tokens, book.calls) == (108, 25, 3)
    assert (await archive.notebook_usage("/never.ipynb")).calls == 0
    with pytest.raises(SessionNotFoundError):
        await archive.record_model_call(
            "nope", model="m", usage=Usage(), stop_reason=None, latency_ms=0
        )
    assert (await archive.notebook_usage(notebook)).calls == 3  # the failed call added nothing


async def test_tasks_and_subtasks(archive: Archive, session: str) -> None:
    task = await archive.create_task(session, goal="clean the data", plan_json='{"steps": 2}')
    a = await archive.create_subtask(task, subtask_key="load", description="load it")
    b = await archive.create_subtask(
        task, subtask_key="clean", description="clean it", depends_on=("load",), acceptance="no NaN"
    )
    child = await archive.create_session(notebook_path="/n", model="m", parent_session_id=session)
    await archive.update_subtask(
        a, status="done", attempts=1, verdict="pass", result="ok", child_session_id=child
    )
    await archive.update_task(task, status="running")
    await archive.update_task(task, result_json='{"ok": true}', status="done")
    [info] = await archive.list_tasks(session)
    assert (info.goal, info.plan_json, info.status, info.result_json) == (
        "clean the data",
        '{"steps": 2}',
        "done",
        '{"ok": true}',
    )
    first, second = await archive.list_subtasks(task)
    assert (first.id, first.status, first.attempts, first.verdict, first.result) == (
        a,
        "done",
        1,
        "pass",
        "ok",
    )
    assert first.child_session_id == child
    assert (second.id, second.depends_on, second.acceptance, second.status) == (
        b,
        ("load",),
        "no NaN",
        "pending",
    )
    with pytest.raises(TurnNotFoundError, match="No task"):
        await archive.update_task("nope", status="x")
    with pytest.raises(TurnNotFoundError, match="No subtask"):
        await archive.update_subtask("nope", status="x")
    with pytest.raises(TurnNotFoundError):
        await archive.create_subtask("nope", subtask_key="k", description="d")


async def test_one_writer_per_session(archive: Archive, session: str) -> None:
    await archive.acquire_lease(session, "kernel-A")
    await archive.acquire_lease(session, "kernel-A")  # re-entrant for the holder
    with pytest.raises(LeaseHeldError, match="being written by kernel-A"):
        await archive.acquire_lease(session, "kernel-B")
    await archive.heartbeat(session, "kernel-A")
    await archive.release_lease(session, "kernel-B")  # not the holder: no effect
    assert (await archive.get_session(session)).lease_owner == "kernel-A"
    await archive.release_lease(session, "kernel-A")
    await archive.acquire_lease(session, "kernel-B")
    info = await archive.get_session(session)
    assert info.lease_owner == "kernel-B"
    assert info.lease_heartbeat is not None


async def test_stale_lease_is_taken_over(archive_file: Path, notebook: str) -> None:
    clock = ManualClock()
    archive_file.parent.mkdir(exist_ok=True)
    async with Archive.open(archive_file, clock=clock) as archive:
        session = await archive.create_session(notebook_path=notebook, model="m")
        await archive.acquire_lease(session, "crashed-kernel")  # judged by its heartbeat
        clock.advance(20)
        with pytest.raises(LeaseHeldError, match="last heartbeat 20 s ago"):
            await archive.acquire_lease(session, "new-kernel", stale_after=30)
        clock.advance(11)
        await archive.acquire_lease(session, "new-kernel", stale_after=30)
        assert (await archive.get_session(session)).lease_owner == "new-kernel"
        with pytest.raises(LeaseHeldError, match="no longer holds the lease"):
            await archive.heartbeat(session, "crashed-kernel")
