"""A recovered archive in a real kernel (issue 39.2): what Loom reads from its tables works.

A first kernel writes every kind of row a notebook's work leaves: cells (executions), a
sidebar turn that edits a cell (its cell changes), an outside agent's call (its mark). It
shuts down; the archive's header is destroyed. A second kernel, shared by the module's
tests, loads Loom (the banner names ``%cowork recover``) and recovers; then provenance,
``%cowork rebuild``, the outside agent's mark in the history a page reads, and the turn's
revert work on the recovered archive as they did before the damage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from damaged_archive import zero_header

from loom_jupyter.archive import archive_path_for

from .document_front import Cell, DocumentFront
from .sidebar_wire import Wire, hello, start_wire

if TYPE_CHECKING:
    from collections.abc import Iterator

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

CLIENT = "Claude Code"


@dataclass(frozen=True)
class Recovered:
    """The second kernel, after ``%cowork recover``, and what the first one did."""

    wire: Wire
    report: str  # what %cowork recover printed
    banner: str  # what %load_ext printed on the damaged archive
    edited_turn: int  # the sidebar turn that edited cell a1


def page(wire: Wire, *cells: Cell) -> DocumentFront:
    comm = wire.open_comm(hello(documents=True, minor=3))
    front = DocumentFront(wire, comm, list(cells))
    front.wait(lambda: wire.events(comm, "welcome"), "the welcome")
    return front


def tool(name: str, **input: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": input}]}


def _before(wire: Wire, fake: FakeAnthropic) -> int:
    """Cells, a turn that edits a cell, an outside agent's call; the edited turn's number."""
    assert wire.run("base = 20")["status"] == "ok"
    assert wire.run("unused = 'not needed'")["status"] == "ok"
    assert wire.run("total = base + 22")["status"] == "ok"
    front = page(wire, Cell("a1", "x = 1"))
    fake.add(
        tool("read_notebook", history=0), tool("edit_cell", cell_id="a1", source="x = 2"), "Done."
    )
    done = len(wire.events(front.comm, "turn_done"))
    wire.send(front.comm, {"type": "send", "client_id": "r-1", "text": "make x two"})
    front.wait(lambda: len(wire.events(front.comm, "turn_done")) > done, "the edit's turn")
    assert front.source_of("a1") == "x = 2"
    edited = int(wire.events(front.comm, "turn_started")[-1]["turn"])
    link = wire.open_comm(hello(agent=CLIENT, minor=3), target="loom-agent")
    wire.wait(lambda: wire.events(link, "pages"), "the agent link's pages")
    message = {"type": "outside_call", "request_id": "o-1", "client": CLIENT}
    wire.send(link, {**message, "tool": "inspect_variables", "input": {}})
    front.wait(lambda: wire.events(link, "outside_result"), "the outside call's result")
    return edited


@pytest.fixture(scope="module")
def recovered(tmp_path_factory: pytest.TempPathFactory, fake: FakeAnthropic) -> Iterator[Recovered]:
    folder = tmp_path_factory.mktemp("recovered")
    notebook = folder / "nb.ipynb"
    notebook.write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    first = start_wire(fake, notebook, folder / "config", approval="auto")
    try:
        edited = _before(first, fake)
    finally:
        first.shutdown()
    zero_header(archive_path_for(notebook))  # the 100-byte header destroyed

    wire = start_wire(fake, notebook, folder / "config", approval="auto")
    try:
        # the load's output may come after its reply: wait for the banner, not a moment
        banner = wire.wait(
            lambda: _printed_load(wire) if "%cowork recover" in _printed_load(wire) else None,
            "the banner's word on recovery",
        )
        report, _ = wire.typed("%cowork recover")
        yield Recovered(wire, report, banner, edited)
    finally:
        wire.shutdown()


def _printed_load(wire: Wire) -> str:
    """What the start's ``%load_ext loom_jupyter`` printed."""
    return "".join(
        msg["content"].get("text", "") + msg["content"].get("data", {}).get("text/plain", "")
        for channel, msg in wire.log
        if channel == "iopub" and msg["msg_type"] in ("stream", "display_data")
    )


def test_the_recovery_keeps_every_table(recovered: Recovered) -> None:
    assert "%cowork recover" in recovered.banner
    report = recovered.report
    assert "Its 100-byte header was destroyed" in report
    for label in (
        "executions (provenance, rebuild)",
        "cell changes (revert)",
        "outside-agent marks",
    ):
        line = next(ln for ln in report.splitlines() if ln.startswith(label))
        saved, lost = line[len(label) :].split()[:2]
        assert (int(saved) > 0, lost) == (True, "0"), line


def test_provenance_and_rebuild_read_the_recovered_executions(recovered: Recovered) -> None:
    wire = recovered.wire
    shown, _ = wire.typed("%cowork provenance total")
    assert "total = base + 22" in shown
    assert "base = 20" in shown
    assert wire.value("'total' in globals()") == "False"  # a new kernel
    rebuilt, _ = wire.typed("%cowork rebuild total --yes")
    assert "same fingerprint as recorded" in rebuilt, rebuilt
    assert wire.value("total") == "42"
    assert wire.value("'unused' in globals()") == "False"


def test_the_outside_agents_mark_is_in_the_history(recovered: Recovered) -> None:
    wire = recovered.wire
    front = page(wire)
    items = wire.events(front.comm, "welcome")[-1]["history"]
    marked = [i for i in items if i["kind"] == "tool" and i.get("outside") == CLIENT]
    assert [i["name"] for i in marked] == ["inspect_variables"]
    wire.close_comm(front.comm)


def test_the_turn_that_edited_a_cell_is_reverted(recovered: Recovered) -> None:
    wire, turn = recovered.wire, recovered.edited_turn
    front = page(wire, Cell("a1", "x = 2"))
    wire.send(front.comm, {"type": "revert_turn", "turn": turn})

    def reverted() -> list[dict[str, Any]]:
        notices = wire.events(front.comm, "notice")
        return [n for n in notices if n["message"].startswith(f"Reverted turn {turn}")]

    notice = front.wait(reverted, "the revert notice")[-1]
    assert notice["message"] == f"Reverted turn {turn}: 1 notebook change(s) undone."
    assert front.source_of("a1") == "x = 1"
    wire.close_comm(front.comm)
