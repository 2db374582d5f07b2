"""The sidebar's parts without a kernel: codec, replay, queue, history, events, ending stdin."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.archive import Archive
from loom_jupyter.engine.events import (
    ApprovalNeeded,
    Notice,
    StateChanged,
    TextDelta,
    ToolDraft,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
    TurnStarted,
    UsageEvent,
)
from loom_jupyter.host.runtime.history import history_page, session_rows
from loom_jupyter.host.runtime.mirror import TurnMirror
from loom_jupyter.host.runtime.queue import SendQueue
from loom_jupyter.host.runtime.replay import EventLog
from loom_jupyter.host.wire.protocol import (
    Approve,
    Fork,
    Hello,
    NoticeMsg,
    ProtocolError,
    Send,
    Status,
    TextMsg,
    ToolInputMsg,
    parse_inbound,
)
from loom_jupyter.jupyter.cell.approval import Interruptible
from loom_jupyter.messages import TurnDraft, Usage

if TYPE_CHECKING:
    from pathlib import Path


def test_inbound_messages_parse_into_typed_values() -> None:
    assert parse_inbound({"type": "send", "client_id": "c", "text": "hi"}) == Send("c", "hi")
    assert parse_inbound({"type": "hello", "since_seq": 4, "kernel_session": "k"}) == Hello(
        since_seq=4, kernel_session="k"
    )
    assert parse_inbound({"type": "approve", "request_id": "r", "decision": "always"}) == Approve(
        "r", "always"
    )
    assert parse_inbound({"type": "fork", "at_turn": None}) == Fork(None)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("hello", "JSON object"),
        ({"type": "dance"}, "unknown message type"),
        ({"type": "send", "client_id": "c"}, "'text'"),
        ({"type": "approve", "request_id": "r", "decision": "maybe"}, "decision"),
        ({"type": "load_more", "before_turn": True}, "before_turn"),
        ({"type": "hello", "since_seq": "3"}, "since_seq"),
    ],
)
def test_malformed_messages_raise_protocol_errors(data: object, problem: str) -> None:
    with pytest.raises(ProtocolError, match=problem):
        parse_inbound(data)


def test_the_log_numbers_events_and_replays_only_what_it_still_holds() -> None:
    log = EventLog(capacity=3, kernel_session="k1")
    sent = [log.record(TextMsg(1, str(i)), turn=1) for i in range(5)]
    assert [e["seq"] for e in sent] == [1, 2, 3, 4, 5]
    envelope = {"seq": 1, "kernel_session": "k1", "turn": 1, "reply_to": None}  # a broadcast
    assert sent[0] == {**envelope, "delta": "0", "type": "text"}
    assert log.since(2, "k1") == sent[2:]
    assert log.since(5, "k1") == []
    assert log.since(1, "k1") is None  # event 2 fell out of the buffer
    assert log.since(3, "another kernel") is None
    assert log.since(9, "k1") is None
    reply = log.reply(NoticeMsg("hi"))
    assert reply["seq"] == 5  # replies do not advance the sequence
    assert reply["reply_to"] == ""  # and say they are replies
    assert log.record(Status("idle"), None)["seq"] == 6


def test_the_queue_keeps_order_cancels_and_ignores_resends() -> None:
    queue = SendQueue()
    for cid in ("a", "b", "c"):
        assert queue.accept(cid)
        queue.push(cid, cid.upper())
    assert not queue.accept("b")
    assert queue.cancel("b")
    assert not queue.cancel("b")
    assert [q.client_id for q in queue.items()] == ["a", "c"]
    first = queue.pop()
    assert first is not None
    assert first.text == "A"
    assert not queue.accept("a")  # ran already: a resend stays ignored


async def test_history_pages_come_from_the_archive(tmp_path: Path) -> None:
    async with Archive.open(tmp_path / "nb.sqlite") as archive:
        sid = await archive.create_session(notebook_path=str(tmp_path / "nb.ipynb"), model="m")
        for n in range(5):
            await archive.append_turn(sid, TurnDraft(role="user", content=f"question {n}"))
            await archive.append_turn(sid, TurnDraft(role="assistant", content=f"answer {n}"))
        await archive.append_turn(
            sid,
            TurnDraft(role="tool", content="x = 1\nmore", tool_name="run_python", tool_call_id="t1",
                      tool_input={"code": "x = 1"}),
        )  # fmt: skip
        items, more = await history_page(archive, sid, None, rows=4)
        assert [i.turn for i in items] == [8, 9, 10, 11]
        assert more == 8
        tool = items[-1]
        assert tool.kind == "tool"
        assert tool.input == {"code": "x = 1"}  # type: ignore[union-attr]
        assert tool.summary == "x = 1"  # type: ignore[union-attr]
        older, more = await history_page(archive, sid, 8, rows=4)
        assert [i.turn for i in older] == [4, 5, 6, 7]
        first, more = await history_page(archive, sid, 4, rows=4)
        assert [i.text for i in first] == ["question 0", "answer 0", "question 1"]  # type: ignore[union-attr]
        assert more is None
        (row,) = await session_rows(archive, await archive.list_sessions(), sid)
        assert (row.prompts, row.turns, row.current) == (5, 11, True)


def test_engine_events_map_to_sidebar_messages() -> None:
    mirror = TurnMirror("sidebar", "hello", "c1", cost_before=1.0, context_budget=1000)
    usage = Usage(input_tokens=10, output_tokens=5)
    kinds = []
    for event in (
        TurnStarted("s", 7),
        TextDelta("Hi"),
        ToolDraft("t1", "run_python", '{"code": "x'),
        ApprovalNeeded("t1", "run_python", "x = 1", "x = 1"),
        ToolStarted("t1", "run_python", "x = 1"),
        ToolFinished("t1", "run_python", "set x", False, 9),
        UsageEvent(usage, 0.5, "m"),
        Notice("careful", "warning"),
        StateChanged("s", "t", 9, 1, 1, 1.0, ""),
        TurnDone("end_turn", 7, 9, "Hi", usage, 0.5),
        TurnError("broke", "ModelError"),
    ):
        kinds.append([m.type for m in mirror.messages(event)])
    assert kinds == [
        ["turn_started", "status"],
        ["text"],
        ["tool_input"],
        ["status"],
        ["status", "tool_started"],
        ["tool_finished"],
        ["usage"],
        ["notice"],
        [],
        ["turn_done", "status"],
        ["turn_error", "status"],
    ]
    assert mirror.turn == 7
    (draft,) = mirror.messages(ToolDraft("t2", "shell", '{"command": "ls'))
    assert draft == ToolInputMsg(7, "t2", "shell", '{"command": "ls')
    (usage_msg,) = mirror.messages(UsageEvent(usage, 0.25, "m"))
    assert usage_msg.cost_usd == pytest.approx(1.75)  # type: ignore[union-attr]


def test_tool_cards_come_from_the_events_alone() -> None:
    """The engine's tool events carry the call's input and its (capped, redacted) result,
    so the sidebar's cards need no read of the archive."""
    mirror = TurnMirror("sidebar", "go", "c1")
    mirror.messages(TurnStarted("s", 3))
    (started,) = mirror.messages(ToolStarted("t9", "shell", "ls", {"command": "ls -l"}))
    assert started.input == {"command": "ls -l"}  # type: ignore[union-attr]
    finished_event = ToolFinished(
        "t9", "shell", "2 files", False, 5, input={"command": "ls -l"}, result="a.py\nb.py"
    )
    (finished,) = mirror.messages(finished_event)
    assert finished.result == "a.py\nb.py"  # type: ignore[union-attr]
    assert finished.input == {"command": "ls -l"}  # type: ignore[union-attr]
    assert finished.call_id == "t9"  # type: ignore[union-attr]


def test_an_interruptible_call_ends_when_cancelled_from_another_thread() -> None:
    pending = Interruptible()
    started = threading.Event()
    results: list[object] = []

    def blocking() -> str:
        started.set()
        while True:  # like ipykernel's stdin poll: a loop of short waits
            time.sleep(0.01)

    pending.arm()
    worker = threading.Thread(target=lambda: results.append(pending.run(blocking)))
    worker.start()
    assert started.wait(60)
    assert pending.cancel()
    worker.join(60)
    assert results == [None]
    assert not pending.cancel()  # this question is over
    pending.arm()
    assert pending.run(lambda: "answered") == "answered"  # the next one is not hit late


def test_a_question_cancelled_before_it_starts_never_blocks() -> None:
    pending = Interruptible()
    pending.arm()
    assert pending.cancel()  # the sidebar answered before the main thread got to it

    def never() -> str:
        raise AssertionError("the cancelled question must not be asked")

    assert pending.run(never) is None
