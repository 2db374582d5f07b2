"""A session switch never splits a turn (issue 31 item 1), on a real ipykernel.

From a cell (``%cowork new``) during a sidebar turn, and from the sidebar (``new``) during a
cell turn: the switch is refused with a clear word, and the turn's prompt and whole answer
land in one session of the archive; the sidebar gets ``turn_done``. The turn's stream is
held at a gate of the fake Messages API until the refusal is seen: no timing anywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .conftest import archive_rows
from .sidebar_wire import Wire, hello

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

ANSWER = "Every word of this answer lands in the session that archived its prompt, as one."
REFUSED = "A turn is running: wait for it to finish or press Stop, then start a new session again"


def of(wire: Wire, comm: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in wire.comm_events(comm) if e["type"] == kind]


def wait_for(wire: Wire, comm: str, kind: str) -> dict[str, Any]:
    return wire.wait(lambda: (of(wire, comm, kind) or [None])[0], f"a {kind!r} event")


def cell_output(wire: Wire, msg_id: str) -> tuple[str, list[str]]:
    """A cell's stream text and its iopub message types, read once iopub is idle for it."""

    def mine(channel: str, msg: dict[str, Any]) -> bool:
        return channel == "iopub" and msg["parent_header"].get("msg_id") == msg_id

    def idle(channel: str, msg: dict[str, Any]) -> bool:
        state = msg["content"].get("execution_state") if msg["msg_type"] == "status" else None
        return mine(channel, msg) and state == "idle"

    wire.wait(lambda: wire.position(idle) >= 0, f"iopub idle for {msg_id}")
    messages = [msg for channel, msg in wire.log if mine(channel, msg)]
    text = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
    return text, [m["msg_type"] for m in messages]


def one_session(notebook: Path, prompt: str) -> None:
    """The prompt and the whole answer after it are archived, complete, in one session."""
    rows = archive_rows(
        notebook,
        "SELECT session_id, role, content, status FROM conversation_turns ORDER BY id",
    )
    (at,) = [i for i, row in enumerate(rows) if row[1:3] == ("user", prompt)]
    answers = [row for row in rows[at + 1 :] if row[1] == "assistant"]
    assert answers, rows[at:]
    assert answers[0] == (rows[at][0], "assistant", ANSWER, "complete")
    sessions = {row[0] for row in rows[at:]}
    assert sessions == {rows[at][0]}  # nothing after the prompt went to another session


def test_a_cells_new_during_a_sidebar_turn_is_refused_and_the_turn_stays_whole(
    wire: Wire, fake: FakeAnthropic, wire_notebook: Path
) -> None:
    comm = wire.open_comm(hello())
    wait_for(wire, comm, "welcome")
    fake.add({"content": [ANSWER], "hold": "sidebar-turn", "hold_after": 2})
    prompt = "a sidebar question, answered slowly"
    wire.send(comm, {"type": "send", "client_id": "switch-1", "text": prompt})
    wait_for(wire, comm, "text")
    wire.wait(lambda: fake.held("sidebar-turn"), "the stream to hold")

    cell = wire.execute("%cowork new")
    text, kinds = cell_output(wire, cell)
    assert wire.reply_of(cell)["status"] == "ok"
    assert text.startswith(f"loom: {REFUSED}"), text
    assert "error" not in kinds  # a sentence, not a traceback
    assert not of(wire, comm, "session_changed")

    fake.release("sidebar-turn")
    done = wait_for(wire, comm, "turn_done")
    assert done["text"] == ANSWER
    one_session(wire_notebook, prompt)
    assert not of(wire, comm, "session_changed")


def test_a_sidebars_new_during_a_cell_turn_is_refused_and_the_turn_stays_whole(
    wire: Wire, fake: FakeAnthropic, wire_notebook: Path
) -> None:
    subshell = wire.subshell()  # the page's own subshell: it speaks while the cell runs
    comm = wire.open_comm(hello(), subshell=subshell)
    wait_for(wire, comm, "welcome")
    fake.add({"content": [ANSWER], "hold": "cell-turn", "hold_after": 2})
    prompt = "a cell question, answered slowly"
    cell = wire.execute(f"%cowork {prompt}")
    wait_for(wire, comm, "text")
    wire.wait(lambda: fake.held("cell-turn"), "the stream to hold")

    wire.send(comm, {"type": "new"}, subshell=subshell)
    notice = wait_for(wire, comm, "notice")
    assert notice["level"] == "error"
    assert notice["message"].startswith(REFUSED), notice
    assert not of(wire, comm, "session_changed")

    fake.release("cell-turn")
    done = wait_for(wire, comm, "turn_done")
    assert done["text"] == ANSWER
    assert wire.reply_of(cell)["status"] == "ok"
    one_session(wire_notebook, prompt)
    assert not of(wire, comm, "session_changed")

    wire.send(comm, {"type": "new"}, subshell=subshell)  # the turn is over: now it switches
    changed = wait_for(wire, comm, "session_changed")
    assert changed["session"] is None
