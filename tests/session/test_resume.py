"""Sessions: lazy creation, resume (with repair), leases, new, fork, end."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from engine.checks import assert_valid_request

from loom_jupyter.archive.liveness import LeaseOwner
from loom_jupyter.engine.events import TurnDone, TurnError
from loom_jupyter.errors import LeaseHeldError
from loom_jupyter.messages import TextBlock, ToolResultBlock, ToolUseBlock, TurnDraft
from loom_jupyter.models.scripted import ScriptedModel, text

from .conftest import OpenSession, collect

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.archive import Archive


async def test_no_session_row_until_the_first_message(
    open_session: OpenSession, archive: Archive, notebook: Path
) -> None:
    session = await open_session(ScriptedModel([text("hi")]))
    assert session.session_id is None
    assert session.info is None
    assert await archive.list_sessions() == []
    await collect(session, "Hello there, " + "x" * 200)
    (info,) = await archive.list_sessions()
    assert info.id == session.session_id
    assert info.notebook_path == str(notebook)
    assert info.title == ("Hello there, " + "x" * 200)[:100]
    assert info.lease_owner == session.owner


async def test_reopening_resumes_the_latest_active_session_with_its_state(
    open_session: OpenSession, archive: Archive
) -> None:
    first = await open_session(ScriptedModel([text("Noted.")]))
    await collect(first, "Always use polars, never pandas. Load sales.csv next.")
    sid = first.session_id
    await first.close()

    model = ScriptedModel([text("Using polars.")])
    second = await open_session(model)
    assert second.session_id == sid
    assert [d.text for d in second.state.decisions] == ["Always use polars, never pandas."]
    assert [t.turn_number for t in second.window.turns] == [1, 2]
    await collect(second, "now load it")
    request = model.requests[0]
    assert request.messages[0].text == "Always use polars, never pandas. Load sales.csv next."
    assert "Always use polars, never pandas." in request.messages[-1].text
    assert_valid_request(request)


async def crash_mid_tool_call(archive: Archive, notebook: Path) -> str:
    """What a kernel killed while run_python ran leaves: a tool_use without a result."""
    sid = await archive.create_session(notebook_path=str(notebook), model="scripted")
    await archive.append_turn(sid, TurnDraft(role="user", content="train the model", token_count=8))
    call = ToolUseBlock("toolu_crash", "run_python", {"code": "fit()"})
    blocks = (TextBlock("Training now."), call)
    await archive.append_turn(
        sid, TurnDraft(role="assistant", content="Training now.", blocks=blocks, token_count=20)
    )
    await archive.acquire_lease(sid, dead_owner())
    return sid


def dead_owner() -> str:
    """The lease owner of a kernel on this host that is gone (its process has exited)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    # A start time no live process has: even a reused pid does not look like the old kernel.
    return str(LeaseOwner(socket.gethostname(), int(done.stdout), "gone/0", "dead"))


async def test_resume_after_a_crash_mid_tool_call_repairs_the_dangling_call(
    open_session: OpenSession, archive: Archive, notebook: Path
) -> None:
    sid = await crash_mid_tool_call(archive, notebook)
    model = ScriptedModel([text("The training was interrupted; rerun it?")])
    session = await open_session(model)  # default settings: no waiting for the heartbeat
    assert session.session_id == sid  # the dead kernel's lease is taken over at once
    turns = await archive.get_turns(sid)
    repaired, note = turns[-2], turns[-1]
    assert (repaired.role, repaired.tool_call_id, repaired.is_error, repaired.status) == (
        "tool",
        "toolu_crash",
        True,
        "interrupted",
    )
    assert isinstance(repaired.blocks[0], ToolResultBlock)
    assert "the kernel died while this ran" in repaired.content
    assert note.role == "system"
    assert "run_python" in note.content
    assert "variables are gone" in note.content
    assert session.recovered is not None
    assert session.recovered.tools_cut == ("run_python",)
    assert "died during a turn" in session.recovered.banner()
    assert "kernel died" in session.state.to_yaml()
    events = await collect(session, "what happened?")
    assert isinstance(events[-1], TurnDone)
    assert_valid_request(model.requests[0])
    assert "interrupted" in model.requests[0].messages[2].text


async def test_a_second_live_writer_gets_a_clear_error(
    open_session: OpenSession, archive: Archive
) -> None:
    first = await open_session(ScriptedModel([text("hi")]), owner="kernel-A")
    await collect(first, "hello")
    with pytest.raises(LeaseHeldError, match="kernel-A") as caught:
        await open_session(ScriptedModel([]), owner="kernel-B")
    assert "%cowork new" in str(caught.value)
    other = await open_session(ScriptedModel([text("fresh")]), owner="kernel-B", resume=False)
    await collect(other, "a separate conversation")
    assert other.session_id != first.session_id


async def test_a_lost_lease_ends_turns_with_a_clear_error(
    open_session: OpenSession, archive: Archive
) -> None:
    session = await open_session(ScriptedModel([text("hi")]), lease_stale_seconds=0.06)
    await collect(session, "hello")
    assert session.session_id is not None
    await asyncio.sleep(0.1)  # beats would keep it, so pretend the lease was taken over
    await archive.release_lease(session.session_id, session.owner)
    await archive.acquire_lease(session.session_id, "intruder")
    await asyncio.sleep(0.1)
    events = await collect(session, "still there?")
    assert isinstance(events[-1], TurnError)
    assert events[-1].error_class == "LeaseHeldError"


async def test_new_fork_and_end(open_session: OpenSession, archive: Archive) -> None:
    model = ScriptedModel([text("one"), text("two"), text("three"), text("four")])
    session = await open_session(model)
    await collect(session, "first topic")
    await collect(session, "second message")
    original = session.session_id
    assert original is not None

    forked = await session.fork(at_turn=2)
    assert forked.parent_session_id == original
    assert forked.turn_count == 2
    assert session.session_id == forked.id
    assert (await archive.get_session(original)).lease_owner is None  # released

    await session.new()
    assert session.session_id is None
    await collect(session, "another topic")
    fresh = session.session_id
    assert fresh not in (original, forked.id)

    await session.end()
    assert fresh is not None
    assert (await archive.get_session(fresh)).status == "closed"
    assert session.session_id is None

    resumed = await session.resume(original)
    assert resumed.id == original
    assert [t.turn_number for t in session.window.turns] == [1, 2, 3, 4]
    await collect(session, "back to the first")
    assert_valid_request(model.requests[-1])


async def test_open_delegated_tasks_are_in_the_state(
    open_session: OpenSession, archive: Archive
) -> None:
    session = await open_session(ScriptedModel([text("Started."), text("Still running.")]))
    await collect(session, "profile every csv file")
    assert session.session_id is not None
    task = await archive.create_task(session.session_id, goal="profile every csv file")
    await archive.update_task(task, status="running")
    done = await archive.create_task(session.session_id, goal="an old job")
    await archive.update_task(done, status="passed")
    events = await collect(session, "how is it going?")
    assert [(t.id, t.status) for t in session.state.open_tasks] == [(task, "running")]
    state_yaml = events[-2].state_yaml  # type: ignore[union-attr]
    assert "profile every csv file" in state_yaml
    assert "an old job" not in state_yaml


async def test_resuming_a_session_held_elsewhere_leaves_this_one_lazy(
    open_session: OpenSession, archive: Archive, notebook: Path
) -> None:
    other = await archive.create_session(notebook_path=str(notebook), model="scripted")
    await archive.acquire_lease(other, "another-kernel")
    session = await open_session(ScriptedModel([text("one"), text("two")]), resume=False)
    await collect(session, "my own conversation")
    mine = session.session_id
    with pytest.raises(LeaseHeldError):
        await session.resume(other)
    assert session.session_id is None
    assert mine is not None
    assert (await archive.get_session(mine)).lease_owner is None
    await collect(session, "a fresh start")
    assert session.session_id not in (mine, other)
