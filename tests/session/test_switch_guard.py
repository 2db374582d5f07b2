"""A session switch never splits a turn (issue 31 item 1): ``resume``, ``new``, ``fork`` and
``end`` are refused, with a clear word, while a turn or a delegation runs; allowed after.

The turn's stream is held at a gate of the fake Messages API (``"hold"``), so it surely
runs while the switch is asked for; every wait is on a condition, never on time.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.engine.events import TurnDone
from loom_jupyter.errors import SessionBusyError
from loom_jupyter.models.scripted import ScriptedModel, text

from .conftest import FakeApi, OpenSession, collect

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from loom_jupyter.archive import Archive
    from loom_jupyter.engine.events import Event
    from loom_jupyter.session.conversation import CoworkSession
    from loom_jupyter.testing import FakeAnthropic

ANSWER = "The whole answer arrives in one session, every word of it."

SWITCHES: dict[str, tuple[str, Callable[[CoworkSession, str], Awaitable[Any]]]] = {
    "resume": ("resume that session", lambda s, other: s.resume(other)),
    "new": ("start a new session", lambda s, other: s.new()),
    "fork": ("fork the session", lambda s, other: s.fork()),
    "end": ("close the session", lambda s, other: s.end()),
}


async def until(condition: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    """Yield to the loop until ``condition()`` holds (the fake serves on its own thread)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f}s for {what}")
        await asyncio.sleep(0.01)


async def held_turn(
    open_session: OpenSession, fake_api: FakeApi, gate: str
) -> tuple[CoworkSession, FakeAnthropic, str]:
    """A session with one earlier session in the archive (to resume) and an answered turn in
    the current one (to fork); the next turn's stream will hold at ``gate``."""
    model, fake = fake_api.model(["An earlier answer.", "A first answer."])
    session = await open_session(model)
    await collect(session, "an earlier conversation")
    other = session.session_id
    assert other is not None
    await session.new()
    await collect(session, "a first question")
    fake.add({"content": [ANSWER], "hold": gate, "hold_after": 2})
    return session, fake, other


@pytest.mark.parametrize("switch", sorted(SWITCHES))
async def test_a_switch_is_refused_while_a_turn_runs_and_allowed_after(
    switch: str, open_session: OpenSession, fake_api: FakeApi, archive: Archive
) -> None:
    session, fake, other = await held_turn(open_session, fake_api, f"turn-{switch}")
    current = session.session_id
    action, call = SWITCHES[switch]
    turn = asyncio.ensure_future(collect(session, "a question whose answer streams slowly"))
    await until(lambda: fake.held(f"turn-{switch}"), "the stream to hold")
    assert session.busy

    with pytest.raises(SessionBusyError) as refused:
        await call(session, other)
    assert str(refused.value) == (
        f"A turn is running: wait for it to finish or press Stop, then {action} again "
        "(switching now would split its prompt and answer between two sessions)."
    )
    assert (refused.value.running, refused.value.action) == ("A turn", action)
    assert session.session_id == current  # nothing moved

    fake.release(f"turn-{switch}")
    events: list[Event] = await turn
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.text == ANSWER
    turns = await archive.get_turns(current, 1, 100) if current else []
    pairs = [(t.role, t.content) for t in turns if t.role in ("user", "assistant")]
    assert pairs[-2:] == [
        ("user", "a question whose answer streams slowly"),
        ("assistant", ANSWER),
    ]
    assert [t.status for t in turns if t.role == "assistant"][-1] == "complete"

    await call(session, other)  # the turn is over: the switch goes through
    assert session.session_id != current or switch == "fork"
    if switch == "resume":
        assert session.session_id == other
    assert not session.busy


async def test_a_busy_probe_refuses_switches_with_its_word(open_session: OpenSession) -> None:
    session = await open_session(ScriptedModel([text("Hi.")]))
    await collect(session, "hello")
    running: list[str] = ["A delegation"]
    session.add_busy_probe(lambda: running[0] or None)
    assert session.running_now() == "A delegation"
    for name in ("new", "fork", "end"):
        with pytest.raises(SessionBusyError, match=r"^A delegation is running: wait for it"):
            await SWITCHES[name][1](session, "")
    running[0] = ""  # it ended
    assert session.running_now() is None
    await session.fork()


async def test_an_orchestrator_tells_its_session_when_a_delegation_runs(
    open_session: OpenSession,
) -> None:
    from loom_jupyter.orchestrator.service import attach

    session = await open_session(ScriptedModel([]))
    delegations = attach(session)
    assert attach(session) is delegations  # idempotent: one probe
    assert session.running_now() is None
    delegations._running["t-1"] = (Any, Any)  # type: ignore[assignment]  # as start() files one
    try:
        assert session.running_now() == "A delegation"
        with pytest.raises(SessionBusyError, match=r"^A delegation is running"):
            await session.new()
    finally:
        delegations._running.clear()
    await session.new()


async def test_a_message_sent_during_a_switch_waits_and_lands_in_the_new_session(
    open_session: OpenSession, fake_api: FakeApi, archive: Archive
) -> None:
    model, _ = fake_api.model(["First.", "In the new one."])
    session = await open_session(model)
    await collect(session, "first")
    old = session.session_id
    gate = asyncio.Event()
    release = session.switches.release

    async def slow_release() -> None:  # the switch pauses half way
        await gate.wait()
        await release()

    session.switches.release = slow_release  # type: ignore[method-assign]
    switching = asyncio.ensure_future(session.new())
    await until(lambda: session.switches.lock.locked(), "the switch to start")
    turn = asyncio.ensure_future(collect(session, "sent while switching"))
    gate.set()
    await switching
    events = await turn
    assert isinstance(events[-1], TurnDone)
    assert session.session_id not in (None, old)
    new_turns = await archive.get_turns(session.session_id or "", 1, 10)
    assert [t.content for t in new_turns if t.role == "user"] == ["sent while switching"]
    old_turns = await archive.get_turns(old or "", 1, 10)
    assert [t.content for t in old_turns if t.role == "user"] == ["first"]


async def test_a_switch_asked_once_the_answer_is_out_waits_for_the_turn_to_be_put_away(
    open_session: OpenSession, fake_api: FakeApi, archive: Archive
) -> None:
    """The person sees the answer (TurnDone) and presses New at once: the turn is only being
    put away, so the switch waits for it rather than saying a turn is running."""
    model, _ = fake_api.model(["A first answer.", ANSWER])
    session = await open_session(model)
    await collect(session, "a first question")
    first = session.session_id
    events = session.send("the question answered just now")
    switched = None
    async for event in events:
        if isinstance(event, TurnDone):  # the answer is out; the generator is not finished
            assert session.busy
            switched = asyncio.ensure_future(session.new())
            await asyncio.sleep(0)  # the switch starts and waits for the turn's end
            assert not switched.done()
    assert not session.busy
    assert switched is not None
    await switched
    assert session.session_id != first
    turns = await archive.get_turns(first or "", 1, 100)
    assert [(t.role, t.content) for t in turns if t.role in ("user", "assistant")][-2:] == [
        ("user", "the question answered just now"),
        ("assistant", ANSWER),
    ]


async def test_the_session_list_read_during_a_fork_waits_for_the_fork(
    open_session: OpenSession, fake_api: FakeApi, archive: Archive
) -> None:
    """A page asks for the session list right after Fork: it sees the forked session."""
    model, _ = fake_api.model(["A first answer."])
    session = await open_session(model)
    await collect(session, "a first question")
    forking = asyncio.ensure_future(session.fork())
    await asyncio.sleep(0)  # the fork holds the switch
    await session.settled()
    assert forking.done()
    listed = await archive.list_sessions(delegated=False)
    assert len(listed) == 2
    assert session.session_id in {info.id for info in listed}
