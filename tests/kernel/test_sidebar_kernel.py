"""The sidebar's comm (target ``loom``) against a real ipykernel and the fake Messages API.

One kernel serves the module (kernel starts are slow); the tests run in order
and each opens its own comm. Everything waits on conditions, never on time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.host.wire.protocol import PROTOCOL_MINOR, PROTOCOL_VERSION

from .conftest import archive_rows
from .sidebar_wire import Wire, hello, start_wire

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def wait_type(wire: Wire, comm: str, kind: str, count: int = 1) -> list[dict[str, Any]]:
    """Wait until ``count`` events of ``kind`` arrived on ``comm``; all of them."""
    try:
        return wire.wait(
            lambda: found if len(found := of(wire.comm_events(comm), kind)) >= count else None,
            f"{count} {kind!r} event(s)",
        )
    except TimeoutError as exc:
        seen = [
            (e["type"], e.get("state") or e.get("message") or "") for e in wire.comm_events(comm)
        ]
        raise TimeoutError(f"{exc}; the comm got {seen}") from None


def send(wire: Wire, comm: str, text: str, client_id: str, subshell: str | None = None) -> None:
    wire.send(comm, {"type": "send", "client_id": client_id, "text": text}, subshell=subshell)


def test_open_welcomes_and_a_sidebar_message_streams_into_the_cells_session(
    wire: Wire, fake: FakeAnthropic, wire_notebook: Path
) -> None:
    comm = wire.open_comm(hello())
    (welcome,) = wait_type(wire, comm, "welcome")
    assert welcome["history"] == []
    assert welcome["busy"] is False
    assert welcome["subshells"] is True
    assert welcome["kernel_session"]

    answer = " ".join(f"word{i}" for i in range(30))
    fake.add(answer)
    send(wire, comm, "hello from the sidebar", "c-1")
    (done,) = wait_type(wire, comm, "turn_done")
    events = wire.comm_events(comm)
    started = of(events, "turn_started")[0]
    assert started["source"] == "sidebar"
    assert started["client_id"] == "c-1"
    texts = of(events, "text")
    assert len(texts) > 3
    assert "".join(t["delta"] for t in texts) == answer
    assert done["text"] == answer
    seqs = [e["seq"] for e in events[1:]]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)
    assert {e["turn"] for e in texts} == {started["turn"]}

    fake.add("The cell's answer.")
    assert wire.run("%cowork and one from a cell")["status"] == "ok"
    sessions = archive_rows(wire_notebook, "SELECT DISTINCT session_id FROM conversation_turns")
    assert len(sessions) == 1  # sidebar and cell share one conversation
    users = archive_rows(
        wire_notebook, "SELECT content FROM conversation_turns WHERE role = 'user'"
    )
    assert users == [("hello from the sidebar",), ("and one from a cell",)]


def test_a_cell_turn_is_mirrored_live_to_an_open_sidebar(wire: Wire, fake: FakeAnthropic) -> None:
    comm = wire.open_comm(hello())
    wait_type(wire, comm, "welcome")
    fake.add({"content": ["Mirrored answer, streamed in pieces."]})
    assert wire.run("%cowork tell the sidebar too")["status"] == "ok"
    (done,) = wait_type(wire, comm, "turn_done")
    started = of(wire.comm_events(comm), "turn_started")[0]
    assert started["source"] == "cell"
    assert started["text"] == "tell the sidebar too"
    assert done["text"] == "Mirrored answer, streamed in pieces."
    statuses = [e["state"] for e in of(wire.comm_events(comm), "status")]
    assert statuses[0] == "thinking"
    assert statuses[-1] == "idle"


def test_a_reloaded_sidebar_gets_what_it_missed_or_a_welcome_with_history(
    wire: Wire, fake: FakeAnthropic
) -> None:
    first = wire.open_comm(hello())
    (welcome,) = wait_type(wire, first, "welcome")
    session, seen = welcome["kernel_session"], welcome["seq"]
    fake.add("Missed answer.")
    send(wire, first, "while the other tab was away", "c-replay")
    wait_type(wire, first, "turn_done")
    missed = [e for e in wire.comm_events(first) if e["seq"] > seen]

    again = wire.open_comm(hello(since_seq=seen, kernel_session=session))
    replayed = wire.wait(
        lambda: got if len(got := wire.comm_events(again)) >= len(missed) else None, "replay"
    )
    assert replayed == missed  # exactly the events after since_seq, no welcome
    assert not of(replayed, "welcome")

    stranger = wire.open_comm(hello(since_seq=3, kernel_session="another-kernel"))
    (fresh,) = wait_type(wire, stranger, "welcome")
    (restarted,) = of(wire.comm_events(stranger), "notice")  # sent just before the welcome
    assert restarted["message"] == "Kernel restarted — history intact."
    texts = [(item["kind"], item["text"]) for item in fresh["history"] if item["kind"] != "tool"]
    assert ("user", "while the other tab was away") in texts
    assert ("assistant", "Missed answer.") in texts
    assert fresh["session"]["prompts"] == 4
    assert fresh["session"]["turns"] >= 8

    wire.send(stranger, {"type": "load_more", "before_turn": 3})
    (page,) = wait_type(wire, stranger, "history")
    assert [item["turn"] for item in page["items"]] == [1, 2]
    assert page["more_before"] is None
    wire.send(stranger, {"type": "search", "query": "other tab"})
    (found,) = wait_type(wire, stranger, "search_results")
    assert found["hits"][0]["snippet"] == "while the other tab was away"
    assert found["hits"][0]["match"] == "phrase"
    wire.send(stranger, {"type": "sessions"})
    (listed,) = wait_type(wire, stranger, "sessions")
    assert listed["items"][0]["current"] is True
    assert listed["items"][0]["prompts"] == 4


def test_a_resent_client_id_runs_once_and_bad_messages_get_a_notice(
    wire: Wire, fake: FakeAnthropic, wire_notebook: Path
) -> None:
    comm = wire.open_comm(hello())
    wait_type(wire, comm, "welcome")
    fake.add("Once.")
    send(wire, comm, "only once please", "c-dup")
    wait_type(wire, comm, "turn_done")
    send(wire, comm, "only once please", "c-dup")  # a resend after a reconnect
    wire.send(comm, {"type": "no_such_type"})
    wire.send(comm, {"type": "send", "text": 3})
    notices = wait_type(wire, comm, "notice", count=2)
    assert all(n["level"] == "error" for n in notices)
    assert "no_such_type" in notices[0]["message"]
    assert len(of(wire.comm_events(comm), "turn_started")) == 1
    rows = archive_rows(
        wire_notebook, "SELECT COUNT(*) FROM conversation_turns WHERE content = 'only once please'"
    )
    assert rows == [(1,)]
    assert wire.value("1 + 1") == "2"  # the kernel is fine


def test_messages_queue_behind_a_running_turn_cancel_and_stop(
    wire: Wire, fake: FakeAnthropic, wire_notebook: Path
) -> None:
    comm = wire.open_comm(hello())
    wait_type(wire, comm, "welcome")
    fake.add({"fault": "stall", "after_deltas": 1, "seconds": 60, "text": "A slow start and"})
    fake.add("Second answer.")
    send(wire, comm, "first (slow)", "q-1")
    wait_type(wire, comm, "text")
    send(wire, comm, "second", "q-2")
    send(wire, comm, "third", "q-3")
    queues = wait_type(wire, comm, "queue", count=2)
    assert [item["client_id"] for item in queues[-1]["items"]] == ["q-2", "q-3"]
    wire.wait(
        lambda: [s for s in of(wire.comm_events(comm), "status") if s["state"] == "queued"],
        "the queued status",
    )

    wire.send(comm, {"type": "cancel_queued", "client_id": "q-3"})

    def only_second() -> bool:  # the queue as last announced (other announcements may come)
        queues = of(wire.comm_events(comm), "queue")
        return [item["client_id"] for item in queues[-1]["items"]] == ["q-2"]

    wire.wait(only_second, "the queue without q-3")

    wire.send(comm, {"type": "stop"})
    done = wait_type(wire, comm, "turn_done", count=2)
    assert done[0]["stop_reason"] == "interrupted"
    assert done[1]["text"] == "Second answer."
    users = archive_rows(
        wire_notebook,
        "SELECT content, status FROM conversation_turns WHERE role = 'user' ORDER BY turn_number",
    )
    assert [u[0] for u in users[-2:]] == ["first (slow)", "second"]
    assert ("third",) not in [(u[0],) for u in users]


def test_a_sidebar_turn_asks_approval_in_the_sidebar_and_runs_python(
    wire: Wire, fake: FakeAnthropic
) -> None:
    assert wire.run("%cowork approval ask")["status"] == "ok"
    comm = wire.open_comm(hello())
    wait_type(wire, comm, "welcome")
    code = "from_sidebar = 6 * 7"
    fake.add(
        {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": code}}]},
        "Set it.",
    )
    send(wire, comm, "set a variable", "a-1")
    (approval,) = wait_type(wire, comm, "approval")
    assert approval["tool"] == "run_python"
    assert approval["input"] == {"code": code}
    assert code in approval["preview"]
    assert of(wire.comm_events(comm), "status")[-1]["state"] == "waiting-approval"
    wire.send(comm, {"type": "approve", "request_id": approval["request_id"], "decision": "allow"})
    (closed,) = wait_type(wire, comm, "approval_closed")
    assert closed["by"] == "sidebar"
    (finished,) = wait_type(wire, comm, "tool_finished")
    assert finished["is_error"] is False
    assert finished["input"] == {"code": code}
    assert of(wire.comm_events(comm), "tool_started")[0]["input"] == {"code": code}
    wait_type(wire, comm, "turn_done")
    assert wire.value("from_sidebar") == "42"
    assert wire.run("%cowork approval auto")["status"] == "ok"


def test_insert_cell_from_a_sidebar_turn_goes_to_the_sidebar_and_can_run(
    wire: Wire, fake: FakeAnthropic
) -> None:
    comm = wire.open_comm(hello())
    wait_type(wire, comm, "welcome")
    source = "inserted_and_run = 'yes'"
    call = {"type": "tool_use", "name": "insert_cell", "input": {"source": source, "run": True}}
    fake.add({"content": [call]}, "Inserted.")
    send(wire, comm, "give me a cell", "cell-1")
    (cell,) = wait_type(wire, comm, "cell")
    assert cell["source"] == source
    (finished,) = wait_type(wire, comm, "tool_finished")
    assert "new cell below the active one" in finished["result"]
    assert finished["is_error"] is False
    assert wire.value("inserted_and_run") == "'yes'"


def test_a_cell_turns_approval_answered_in_the_sidebar_ends_the_stdin_question(
    wire: Wire, fake: FakeAnthropic
) -> None:
    assert wire.run("%cowork approval ask")["status"] == "ok"
    subshell = wire.subshell()
    comm = wire.open_comm(hello(), subshell=subshell)
    wait_type(wire, comm, "welcome")
    code = "from_cell_turn = 'allowed in the sidebar'"
    fake.add(
        {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": code}}]},
        "Done.",
    )
    cell = wire.kc.execute("%cowork set it from a cell", allow_stdin=True)
    (approval,) = wait_type(wire, comm, "approval")
    prompt = wire.kc.get_stdin_msg(timeout=120)  # the stdin box is up too
    assert "[y]es / [n]o" in prompt["content"]["prompt"]
    wire.send(
        comm,
        {"type": "approve", "request_id": approval["request_id"], "decision": "allow"},
        subshell=subshell,
    )
    (closed,) = wait_type(wire, comm, "approval_closed")
    assert closed["by"] == "sidebar"
    assert wire.reply_of(cell)["status"] == "ok"  # the cell went on without a stdin answer
    assert wire.value("from_cell_turn") == "'allowed in the sidebar'"
    assert wire.run("%cowork approval auto")["status"] == "ok"


def test_a_cell_turns_approval_answered_on_stdin_closes_the_sidebars_buttons(
    wire: Wire, fake: FakeAnthropic
) -> None:
    assert wire.run("%cowork approval ask")["status"] == "ok"
    comm = wire.open_comm(hello())
    wait_type(wire, comm, "welcome")
    code = "from_stdin = 'typed y'"
    fake.add(
        {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": code}}]},
        "Done.",
    )
    cell = wire.kc.execute("%cowork set it, ask me on stdin", allow_stdin=True)
    (approval,) = wait_type(wire, comm, "approval")
    wire.kc.get_stdin_msg(timeout=120)
    wire.kc.input("y")
    (closed,) = wait_type(wire, comm, "approval_closed")
    assert (closed["request_id"], closed["decision"], closed["by"]) == (
        approval["request_id"],
        "allow",
        "stdin",
    )
    assert wire.reply_of(cell)["status"] == "ok"
    assert wire.value("from_stdin") == "'typed y'"
    wire.send(comm, {"type": "approve", "request_id": approval["request_id"], "decision": "deny"})
    (late,) = wait_type(wire, comm, "notice")  # a late click changes nothing
    assert late["message"] == "That approval was already answered."
    assert wire.run("%cowork approval auto")["status"] == "ok"


def test_stop_in_the_sidebar_interrupts_a_cell_turn(wire: Wire, fake: FakeAnthropic) -> None:
    subshell = wire.subshell()
    comm = wire.open_comm(hello(), subshell=subshell)
    wait_type(wire, comm, "welcome")
    fake.add({"fault": "stall", "after_deltas": 1, "seconds": 60, "text": "Thinking slowly"})
    cell = wire.execute("%cowork take your time")
    wait_type(wire, comm, "text")
    wire.send(comm, {"type": "stop"}, subshell=subshell)
    (done,) = wait_type(wire, comm, "turn_done")
    assert done["stop_reason"] == "interrupted"
    assert wire.reply_of(cell)["status"] == "ok"  # the cell ends with its turn


def test_the_sidebar_answers_while_a_cell_runs_and_its_code_waits_for_the_cell(
    wire: Wire, fake: FakeAnthropic, wire_notebook: Path
) -> None:
    subshell = wire.subshell()
    comm = wire.open_comm(hello(), subshell=subshell)
    wait_type(wire, comm, "welcome")
    flag = wire_notebook.parent / "release-the-cell"
    cell = wire.execute(
        f"import pathlib, time\nwhile not pathlib.Path({str(flag)!r}).exists():\n"
        "    time.sleep(0.05)\nbusy_cell_done = True"
    )
    wire.wait(lambda: wire.position(lambda ch, m: _started(m, cell)) >= 0, "the cell to start")

    fake.add("Answered while your cell runs.")
    send(wire, comm, "are you there?", "busy-1", subshell)
    (done,) = wait_type(wire, comm, "turn_done")
    assert done["text"] == "Answered while your cell runs."
    assert wire._reply(cell) is None  # the cell is still running: the answer came first

    fake.add(
        {
            "content": [
                {
                    "type": "tool_use",
                    "name": "run_python",
                    "input": {"code": "late = busy_cell_done"},
                }
            ]
        },
        "Ran after your cell.",
    )
    send(wire, comm, "now run something", "busy-2", subshell)
    waiting = wire.wait(
        lambda: [s for s in of(wire.comm_events(comm), "status") if s["state"] == "waiting-cell"],
        "the waiting-cell status",
    )
    assert waiting[0]["detail"] == "waiting for your cell to finish"
    assert not of(wire.comm_events(comm), "tool_finished")
    flag.write_text("go")
    assert wire.reply_of(cell)["status"] == "ok"
    wait_type(wire, comm, "turn_done", count=2)
    finished = of(wire.comm_events(comm), "tool_finished")
    assert finished[-1]["is_error"] is False  # the cell's last line had run: it waited
    started = of(wire.comm_events(comm), "tool_started")[-1]
    assert started["input"] == {"code": "late = busy_cell_done"}  # read from the archive
    assert wire.value("late") == "True"


def _started(msg: dict[str, Any], cell: str) -> bool:
    return msg["msg_type"] == "execute_input" and msg["parent_header"].get("msg_id") == cell


def test_new_and_resume_from_the_sidebar_switch_every_sidebar(
    wire: Wire, fake: FakeAnthropic
) -> None:
    comm = wire.open_comm(hello())
    (welcome,) = wait_type(wire, comm, "welcome")
    old = welcome["session"]["id"]
    wire.send(comm, {"type": "new"})
    (changed,) = wait_type(wire, comm, "session_changed")
    assert changed["session"] is None
    assert changed["history"] == []
    fake.add("Fresh.")
    send(wire, comm, "a new beginning", "n-1")
    wait_type(wire, comm, "turn_done")
    wire.send(comm, {"type": "resume", "session": old[:8]})
    changed = wait_type(wire, comm, "session_changed", count=2)[-1]
    assert changed["session"]["id"] == old
    assert any(item.get("text") == "hello from the sidebar" for item in changed["history"])
    banner = wire.run("%cowork sessions")
    assert banner["status"] == "ok"


def test_the_fronts_silent_load_is_idempotent(wire: Wire) -> None:
    first = wire.open_comm(hello())
    (before,) = wait_type(wire, first, "welcome")
    msg_id = wire.kc.execute("%load_ext loom_jupyter", silent=True, store_history=False)
    assert wire.reply_of(msg_id)["status"] == "ok"
    again = wire.open_comm(hello())
    (after,) = wait_type(wire, again, "welcome")
    assert after["kernel_session"] == before["kernel_session"]  # the same hub, not a new one
    assert after["session"]["id"] == before["session"]["id"]


def test_a_sidebar_opened_mid_turn_gets_the_turn_so_far_after_its_welcome(
    wire: Wire, fake: FakeAnthropic
) -> None:
    first = wire.open_comm(hello())
    wait_type(wire, first, "welcome")
    fake.add({"fault": "stall", "after_deltas": 2, "seconds": 60, "text": "One two three four"})
    send(wire, first, "a long one", "mid-1")
    wait_type(wire, first, "text", count=2)
    late = wire.open_comm(hello())
    wire.wait(lambda: len(wire.comm_events(late)) >= 3, "the welcome and the turn so far")
    welcome, started, text = wire.comm_events(late)[:3]
    assert welcome["type"] == "welcome"
    assert welcome["busy"] is True
    assert all(item.get("text") != "a long one" for item in welcome["history"])  # not twice
    assert (started["type"], started["text"]) == ("turn_started", "a long one")
    assert text["type"] == "text"
    assert text["delta"] == "".join(t["delta"] for t in of(wire.comm_events(first), "text"))
    wire.send(first, {"type": "stop"})
    (done,) = wait_type(wire, late, "turn_done")  # and it follows the turn live from there
    assert done["stop_reason"] == "interrupted"


def test_a_front_of_another_protocol_version_gets_a_notice_and_nothing_else(wire: Wire) -> None:
    comm = wire.open_comm(hello(protocol=999))
    (notice,) = wait_type(wire, comm, "notice")
    assert notice["level"] == "error"
    assert (
        f"protocol 999.0, newer than the kernel's loom_jupyter (protocol {PROTOCOL_VERSION})"
        in notice["message"]
    )
    wire.send(comm, {"type": "sessions"})
    wait_type(wire, comm, "notice", count=2)  # refused again, with the same reason
    wire.send(comm, hello())  # the same page after an upgrade: served as usual
    wait_type(wire, comm, "welcome")
    kinds = [e["type"] for e in wire.comm_events(comm)]
    assert kinds.index("welcome") > 1
    assert "sessions" not in kinds[: kinds.index("welcome")]


def test_a_page_one_minor_version_newer_chats(wire: Wire, fake: FakeAnthropic) -> None:
    newer = hello(minor=PROTOCOL_MINOR + 1, hologram={"depth": 3})  # 1.2, with a field of 1.2
    comm = wire.open_comm(newer)
    (welcome,) = wait_type(wire, comm, "welcome")
    assert welcome["protocol"] == PROTOCOL_VERSION  # the page learns the kernel's version
    assert welcome["reply_to"] == ""  # a reply, not a numbered event
    wire.send(comm, {"type": "sessions", "request_id": "r-list", "sort": "newest"})
    (listed,) = wait_type(wire, comm, "sessions")
    assert listed["reply_to"] == "r-list"
    wire.send(comm, {"type": "where_from", "name": "not a name", "request_id": "r-bad"})
    refused = wire.wait(
        lambda: [e for e in of(wire.comm_events(comm), "notice") if e["reply_to"] == "r-bad"],
        "the error notice answering r-bad",
    )
    assert refused[0]["level"] == "error"
    wire.send(comm, {"type": "where_from", "name": 7, "request_id": "r-malformed"})
    malformed = wire.wait(
        lambda: [e for e in of(wire.comm_events(comm), "notice") if e["reply_to"] == "r-malformed"],
        "the bad-message notice answering r-malformed",
    )
    assert "bad sidebar message ('name'" in malformed[0]["message"]

    fake.add("Answer for a newer page, in several pieces.")
    message = {"type": "send", "client_id": "c-newer", "text": "from 1.2", "urgency": "high"}
    wire.send(comm, message)
    (done,) = wait_type(wire, comm, "turn_done")
    events = wire.comm_events(comm)
    texts = of(events, "text")
    assert "".join(t["delta"] for t in texts) == done["text"]
    assert done["text"] == "Answer for a newer page, in several pieces."
    streamed = of(events, "turn_started") + texts + [done]
    assert {e["reply_to"] for e in streamed} == {None}  # broadcast events, numbered
    assert of(events, "turn_started")[0]["client_id"] == "c-newer"


def test_a_page_one_minor_version_older_chats(wire: Wire, fake: FakeAnthropic) -> None:
    older = hello()  # as a 1.0 page sends it: `protocol` 1, no `minor`
    assert (older["protocol"], "minor" in older) == (1, False)
    comm = wire.open_comm(older)
    (welcome,) = wait_type(wire, comm, "welcome")  # its validator ignores the 1.1 fields
    wire.send(comm, {"type": "sessions"})  # no request_id: 1.0 had none
    (listed,) = wait_type(wire, comm, "sessions")
    assert listed["reply_to"] == ""
    assert listed["seq"] == welcome["seq"]  # a reply does not advance seq

    fake.add("Answer for an older page.")
    send(wire, comm, "from 1.0", "c-older")
    (done,) = wait_type(wire, comm, "turn_done")
    texts = of(wire.comm_events(comm), "text")
    assert "".join(t["delta"] for t in texts) == done["text"] == "Answer for an older page."
    assert of(wire.comm_events(comm), "turn_started")[0]["client_id"] == "c-older"


def test_unload_takes_the_comm_target_back_before_any_sidebar_opened(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    notebook = tmp_path / "quiet.ipynb"
    own = start_wire(fake, notebook, tmp_path / "config", approval="auto")
    try:
        assert own.value("1 + 1") == "2"  # loaded; no sidebar has opened
        assert own.run("%unload_ext loom_jupyter")["status"] == "ok"
        targets = "sorted(get_ipython().kernel.comm_manager.targets)"
        assert "'loom'" not in own.value(targets)  # nothing left that answers for a closed coworker
        comm = own.open_comm(hello())
        closed = own.wait(
            lambda: [
                msg
                for channel, msg in own.log
                if channel == "iopub"
                and msg["msg_type"] == "comm_close"
                and msg["content"]["comm_id"] == comm
            ],
            "the kernel closing a comm no target takes",
        )
        assert closed
        assert own.comm_events(comm) == []  # no welcome from the unloaded coworker
    finally:
        own.shutdown()


def _in_pieces(path: Path) -> str:
    return " + ".join(repr(c) for c in str(path))


@pytest.mark.parametrize("keep", [False, True], ids=["left-undone", "kept"])
def test_a_protected_change_is_undone_the_page_asks_to_keep_it_and_the_turn_stops(
    wire: Wire, fake: FakeAnthropic, wire_notebook: Path, keep: bool
) -> None:
    """Issue 38.3 in a real kernel: under auto, run_python writes loom.yaml by a name the
    text rail cannot read; the file is put back, the card asks with the diff, the turn stops
    (the second call is not run) and the archive keeps the attempt and the answer."""
    assert wire.run("%cowork approval auto")["status"] == "ok"
    target = wire_notebook.parent / "loom.yaml"
    assert not target.exists()
    comm = wire.open_comm(hello())
    wait_type(wire, comm, "welcome")
    code = f"open({_in_pieces(target)}, 'w').write('model: planted\\n')"
    calls = [
        {"type": "tool_use", "name": "run_python", "input": {"code": code}},
        {"type": "tool_use", "name": "run_python", "input": {"code": "second_call = 1"}},
    ]
    fake.add({"content": calls})  # the turn stops after them: no second request
    send(wire, comm, f"write the config ({keep})", f"keep-{keep}")
    (question,) = wait_type(wire, comm, "approval")
    assert question["question"] == "keep"
    assert "+model: planted" in question["preview"]
    assert not target.exists()  # already undone while the person reads the diff
    decision = "allow" if keep else "deny"
    wire.send(comm, {"type": "approve", "request_id": question["request_id"], "decision": decision})
    (done,) = wait_type(wire, comm, "turn_done")
    assert done["stop_reason"] == "protected_change"
    assert (target.read_text() if target.exists() else None) == (
        "model: planted\n" if keep else None
    )
    assert "second_call" not in wire.value("dir()")
    results = archive_rows(
        wire_notebook,
        "SELECT content FROM conversation_turns WHERE role = 'tool' ORDER BY turn_number",
    )
    attempt, second = results[-2][0], results[-1][0]
    assert "+model: planted" in attempt
    assert ("chose to keep it" in attempt) is keep
    assert "Not run: the turn stopped" in second
    target.unlink(missing_ok=True)
