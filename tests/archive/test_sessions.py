"""Sessions: create, get, list, update, close/reopen, fork at a turn, delete with cascades."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from loom_jupyter.errors import ArchiveError, SessionNotFoundError
from loom_jupyter.messages import TurnDraft, Usage

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive


async def test_create_and_get(archive: Archive, notebook: str) -> None:
    sid = await archive.create_session(notebook_path=notebook, model="claude-x", title="t")
    info = await archive.get_session(sid)
    assert len(sid) == 32
    assert (info.id, info.notebook_path, info.model, info.title) == (sid, notebook, "claude-x", "t")
    assert info.status == "active"
    assert info.turn_count == 0
    assert info.created_at == info.last_active_at
    assert info.created_at.endswith("+00:00")


async def test_first_user_message_becomes_the_title(archive: Archive, session: str) -> None:
    await archive.append_turn(session, TurnDraft(role="system", content="setup"))
    await archive.append_turn(
        session, TurnDraft(role="user", content="  Plot   revenue\nby month " + "x" * 200)
    )
    await archive.append_turn(session, TurnDraft(role="user", content="second message"))
    title = (await archive.get_session(session)).title
    assert title.startswith("Plot   revenue by month x")  # one line, trimmed
    assert len(title) == 100


async def test_unknown_session_is_a_clear_error(archive: Archive) -> None:
    with pytest.raises(SessionNotFoundError, match=r"No session 'nope'.*loom-jupyter sessions"):
        await archive.get_session("nope")
    for call in (
        archive.append_turn("nope", TurnDraft(role="user", content="x")),
        archive.get_turns("nope"),
        archive.recent_turns("nope", token_budget=100),
        archive.last_turn_number("nope"),
        archive.search("nope", "x"),
        archive.tool_calls("nope"),
        archive.update_session("nope", title="x"),
        archive.fork_session("nope"),
        archive.delete_session("nope"),
        archive.usage_totals("nope"),
        archive.create_task("nope", goal="g"),
        archive.acquire_lease("nope", "me"),
    ):
        with pytest.raises(SessionNotFoundError):
            await call


async def test_list_is_most_recently_active_first(archive: Archive, notebook: str) -> None:
    old = await archive.create_session(notebook_path=notebook, model="m")
    new = await archive.create_session(notebook_path=notebook, model="m")
    other = await archive.create_session(notebook_path="/other.ipynb", model="m")
    assert [s.id for s in await archive.list_sessions()] == [other, new, old]
    await archive.append_turn(old, TurnDraft(role="user", content="I am back"))
    assert [s.id for s in await archive.list_sessions(notebook)] == [old, new]
    assert [s.id for s in await archive.list_sessions(limit=1)] == [old]
    latest = await archive.latest_active_session(notebook)
    assert latest is not None
    assert latest.id == old


async def test_update_close_reopen(archive: Archive, session: str) -> None:
    await archive.update_session(session, title="new title", model="opus", session_state='{"a": 1}')
    info = await archive.get_session(session)
    assert (info.title, info.model, info.session_state) == ("new title", "opus", '{"a": 1}')
    await archive.close_session(session)
    assert (await archive.get_session(session)).status == "closed"
    assert await archive.latest_active_session() is None
    assert [s.id for s in await archive.list_sessions(status="closed")] == [session]
    await archive.reopen_session(session)
    assert (await archive.get_session(session)).status == "active"
    await archive.update_session(session, status="archived")
    assert (await archive.get_session(session)).status == "archived"
    with pytest.raises(ArchiveError, match="unknown session status"):
        await archive.update_session(session, status="deleted")  # type: ignore[arg-type]


async def test_fork_at_turn_copies_the_prefix(archive: Archive, session: str) -> None:
    for i in range(1, 6):
        await archive.append_turn(
            session, TurnDraft(role="user", content=f"turn {i}", token_count=i)
        )
    fork = await archive.fork_session(session, at_turn=3)
    info = await archive.get_session(fork)
    assert (info.parent_session_id, info.forked_at_turn, info.turn_count) == (session, 3, 3)
    assert [t.content for t in await archive.get_turns(fork)] == ["turn 1", "turn 2", "turn 3"]
    assert await archive.append_turn(fork, TurnDraft(role="user", content="diverge")) == 4
    assert {h.session_id for h in await archive.search(fork, "diverge")} == {fork}
    assert len(await archive.get_turns(session)) == 5  # the original is untouched
    whole = await archive.fork_session(session)
    assert (await archive.get_session(whole)).turn_count == 5


async def test_delete_cascades_and_keeps_forks(archive: Archive, session: str) -> None:
    await archive.append_turn(session, TurnDraft(role="user", content="searchable words"))
    fork = await archive.fork_session(session)
    await archive.record_model_call(
        session, model="m", usage=Usage(10, 5), stop_reason="end_turn", latency_ms=3.0
    )
    task = await archive.create_task(session, goal="g")
    await archive.create_subtask(task, subtask_key="a", description="d")
    await archive.delete_session(session)
    with pytest.raises(SessionNotFoundError):
        await archive.get_session(session)
    db = archive._db
    for table in ("conversation_turns", "model_calls", "tasks"):
        row = await db.fetchone(f"SELECT count(*) FROM {table} WHERE session_id = ?", [session])
        assert row is not None
        assert row[0] == 0
    assert (await db.fetchone("SELECT count(*) FROM subtasks"))[0] == 0  # type: ignore[index]
    assert (await archive.get_session(fork)).parent_session_id is None
    assert [h.session_id for h in await archive.search(fork, "searchable", all_sessions=True)] == [
        fork
    ]
    await db.execute("INSERT INTO turns_fts (turns_fts) VALUES ('integrity-check')")
