"""The notebook tools' kernel contract (DESIGN §9) against a real ipykernel and the fake API.

A page holding the notebook is played by :class:`DocumentFront` over the real ``loom``
comm; the kernel sends it every change and never writes the ``.ipynb``. The browser
tests drive the real page.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import archive_rows
from .document_front import Cell, DocumentFront
from .sidebar_wire import Wire, hello

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def wire_notebook(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty notebook file: the tools must never write it (the page holds the notebook)."""
    path = tmp_path_factory.mktemp("edits") / "nb.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def page(wire: Wire, *cells: Cell) -> DocumentFront:
    """A page holding the notebook with ``cells``, its comm welcomed."""
    comm = wire.open_comm(hello(documents=True))
    front = DocumentFront(wire, comm, list(cells))
    front.wait(lambda: events(front, "welcome"), "the welcome")
    return front


def events(front: DocumentFront, kind: str) -> list[dict[str, Any]]:
    return [e for e in front.wire.comm_events(front.comm) if e["type"] == kind]


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": input}]}


def turn(front: DocumentFront, text: str, client_id: str) -> list[dict[str, Any]]:
    """Send a message from the page's sidebar; the tool results of its turn."""
    done = len(events(front, "turn_done"))
    front.wire.send(front.comm, {"type": "send", "client_id": client_id, "text": text})
    front.wait(lambda: len(events(front, "turn_done")) > done, f"the turn {text!r}")
    started = events(front, "turn_started")[-1]["turn"]
    return [e for e in events(front, "tool_finished") if e["turn"] >= started]


def close(front: DocumentFront) -> None:
    front.wire.kc.shell_channel.send(
        front.wire.kc.session.msg("comm_close", {"comm_id": front.comm, "data": {}})
    )


def test_read_then_edit_changes_the_live_cell_with_provenance(
    wire: Wire, fake: FakeAnthropic, wire_notebook: Path
) -> None:
    front = page(wire, Cell("a1", "x = 1\nprint(x)"), Cell("b2", "# notes", "markdown"))
    fake.add(
        tool("read_notebook", history=0),
        tool("edit_cell", cell_id="a1", source="x = 2\nprint(x)"),
        "Edited.",
    )
    read, edited = turn(front, "make x two", "e-1")
    assert "[cell 1 id=a1] code" in read["result"]
    assert "unsaved edits" in read["result"]
    assert edited["is_error"] is False
    assert "-x = 1" in edited["result"]
    assert "+x = 2" in edited["result"]
    assert front.source_of("a1") == "x = 2\nprint(x)"
    origin = front.cells[0].metadata["loom"]
    user_turn = events(front, "turn_started")[-1]["turn"]
    assert origin["turn"] == user_turn
    assert origin["action"] == "edited"
    assert origin["tool_call"]
    assert json.loads(wire_notebook.read_text())["cells"] == []  # never the file behind the page
    rows = archive_rows(wire_notebook, "SELECT cell_id, action, before, after FROM cell_changes")
    assert rows[-1] == ("a1", "edited", "x = 1\nprint(x)", "x = 2\nprint(x)")
    close(front)


def test_an_edit_of_a_cell_the_person_changed_since_the_read_is_refused(
    wire: Wire, fake: FakeAnthropic
) -> None:
    front = page(wire, Cell("c1", "total = 10"))
    fake.add(tool("read_notebook", history=0), "Read.")
    turn(front, "look at it", "r-1")
    front.cells[0].source = "total = 11  # the person's own edit"
    fake.add(tool("edit_cell", cell_id="c1", source="total = 12"), "Tried.")
    (refused,) = turn(front, "make it 12", "r-2")
    assert refused["is_error"] is True
    assert "changed since you read it — read it again" in refused["result"]
    assert front.source_of("c1") == "total = 11  # the person's own edit"
    request = fake.message_requests[-2].body or {}
    told = json.dumps(request["messages"])
    assert "The person edited the notebook since your last turn" in told  # and saw the diff
    assert "total = 11" in told
    close(front)


def test_insert_move_delete_and_run_a_cell(wire: Wire, fake: FakeAnthropic) -> None:
    front = page(wire, Cell("k1", "a = 1"), Cell("k2", "b = 2"))
    fake.add(
        tool("insert_cell", source="print('hello from a cell')", after_cell_id="k1"),
        "Inserted.",
    )
    (inserted,) = turn(front, "add a cell", "i-1")
    assert inserted["is_error"] is False, inserted["result"]
    new_id = front.cells[1].id
    assert front.cells[1].source == "print('hello from a cell')"
    assert front.cells[1].metadata["loom"]["action"] == "inserted"
    fake.add(
        tool("run_cell", cell_id=new_id),
        tool("move_cell", cell_id=new_id, after_cell_id=None),
        tool("delete_cell", cell_id="k2"),
        "Done.",
    )
    ran, moved, deleted = turn(front, "run, move and delete", "i-2")
    assert "hello from a cell" in ran["result"]
    assert front.cells[0].outputs[0]["text"] == "hello from a cell\n"  # in that cell
    assert front.cells[0].execution_count is not None
    assert moved["is_error"] is False
    assert [c.id for c in front.cells] == [new_id, "k1"]
    assert deleted["is_error"] is False
    changed = events(front, "turn_started")[-1]["turn"]
    front.wire.send(front.comm, {"type": "revert_turn", "turn": changed})
    front.wait(lambda: _notice(front, "Reverted turn"), "the revert notice")
    assert [c.id for c in front.cells] == ["k1", new_id, "k2"]  # the move went back, by the
    close(front)  # neighbour the page named when it moved the cell


def test_revert_a_turn_and_a_refused_revert_that_names_the_changed_cell(
    wire: Wire, fake: FakeAnthropic
) -> None:
    front = page(wire, Cell("v1", "one"), Cell("v2", "two"))
    fake.add(
        tool("read_notebook", history=0),
        tool("edit_cell", cell_id="v1", source="ONE"),
        tool("insert_cell", source="three", after_cell_id="v2"),
        tool("delete_cell", cell_id="v2"),
        "Changed three things.",
    )
    turn(front, "change things", "v-1")
    changed = events(front, "turn_started")[-1]["turn"]
    assert [c.source for c in front.cells] == ["ONE", "three"]
    front.wire.send(front.comm, {"type": "revert_turn", "turn": changed})
    notice = front.wait(lambda: _notice(front, "Reverted turn"), "the revert notice")
    assert f"Reverted turn {changed}: 3 notebook change(s) undone." == notice["message"]
    assert [(c.id, c.source) for c in front.cells] == [("v1", "one"), ("v2", "two")]

    fake.add(tool("read_notebook", history=0), tool("edit_cell", cell_id="v1", source="1"), "Ok.")
    turn(front, "again", "v-2")
    again = events(front, "turn_started")[-1]["turn"]
    front.cells[0].source = "1 and the person typed more"
    front.wire.send(front.comm, {"type": "revert_turn", "turn": again})
    refused = front.wait(lambda: _notice(front, f"Turn {again} was not reverted"), "a refusal")
    assert "cell(s) v1 changed since; nothing was changed." in refused["message"]
    assert front.cells[0].source == "1 and the person typed more"
    close(front)


def _notice(front: DocumentFront, start: str) -> dict[str, Any] | None:
    found = [n for n in events(front, "notice") if n["message"].startswith(start)]
    return found[-1] if found else None


def test_under_ask_the_edit_is_an_approval_and_a_rejection_changes_nothing(
    wire: Wire, fake: FakeAnthropic
) -> None:
    assert wire.run("%cowork approval ask")["status"] == "ok"
    front = page(wire, Cell("q1", "y = 1"))
    fake.add(
        tool("read_notebook", history=0),
        tool("edit_cell", cell_id="q1", source="y = 100"),
        "Asked.",
    )
    front.wire.send(front.comm, {"type": "send", "client_id": "q-1", "text": "bump y"})
    (approval,) = front.wait(lambda: events(front, "approval"), "the approval")
    assert approval["tool"] == "edit_cell"
    assert approval["input"] == {"cell_id": "q1", "source": "y = 100"}
    assert "-y = 1" in approval["preview"]  # the diff against what the agent read
    assert "+y = 100" in approval["preview"]
    reject = {"type": "approve", "request_id": approval["request_id"], "decision": "deny"}
    front.wire.send(front.comm, reject)
    finished = front.wait(lambda: events(front, "turn_done"), "the end of the turn")
    assert finished
    result = [e for e in events(front, "tool_finished") if e["name"] == "edit_cell"][-1]
    assert result["is_error"] is True
    assert "rejected this edit_cell change; nothing was changed" in result["result"]
    assert front.source_of("q1") == "y = 1"
    assert wire.run("%cowork approval auto")["status"] == "ok"
    close(front)


def test_a_turn_started_in_a_cell_edits_through_the_page(
    wire: Wire, fake: FakeAnthropic, wire_notebook: Path
) -> None:
    subshell = wire.subshell()
    comm = wire.open_comm(hello(documents=True), subshell=subshell)
    front = DocumentFront(wire, comm, [Cell("m1", "n = 1")], subshell=subshell)
    front.wait(lambda: events(front, "welcome"), "the welcome")
    fake.add(
        tool("read_notebook", history=0),
        tool("edit_cell", cell_id="m1", source="n = 3"),
        "Edited from the cell.",
    )
    msg_id = wire.execute("%cowork make n three")
    reply = front.wait(lambda: wire._reply(msg_id), "the %cowork cell")
    assert reply["status"] == "ok"
    assert front.source_of("m1") == "n = 3"
    assert front.cells[0].metadata["loom"]["action"] == "edited"
    outputs = [
        json.dumps(msg["content"])
        for channel, msg in wire.log
        if channel == "iopub" and msg["parent_header"].get("msg_id") == msg_id
    ]
    assert any("+n = 3" in text for text in outputs)  # the diff card in the cell's output
    close(front)


def test_without_a_page_holding_the_notebook_the_tools_say_why(
    wire: Wire, fake: FakeAnthropic
) -> None:
    comm = wire.open_comm(hello())  # a front that does not hold the notebook
    wire.wait(lambda: [e for e in wire.comm_events(comm) if e["type"] == "welcome"], "welcome")
    fake.add(tool("edit_cell", cell_id="zz", source="nothing"), "Could not.")
    front = DocumentFront(wire, comm, [])
    (refused,) = turn(front, "edit it", "n-1")
    assert refused["is_error"] is True
    assert "No JupyterLab or Notebook 7 page has this notebook open" in refused["result"]
    assert front.requests == []  # nothing was sent, nothing half-applied


def test_recall_finds_the_turn_that_wrote_a_cell(wire: Wire, fake: FakeAnthropic) -> None:
    front = page(wire, Cell("w1", "z = 0"))
    fake.add(
        tool("read_notebook", history=0),
        tool("edit_cell", cell_id="w1", source="z = 5"),
        "Set.",
    )
    turn(front, "set z to five", "w-1")
    wrote = events(front, "turn_started")[-1]["turn"]
    fake.add(tool("conversation_recall", action="search", query="w1"), "Found it.")
    (recall,) = turn(front, "which turn wrote cell w1?", "w-2")
    assert "Edited cell w1" in recall["result"]
    assert f"Edited cell w1 (at position 1, in turn {wrote})" in recall["result"]
    close(front)
