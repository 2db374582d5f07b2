"""The sidebar's slash commands that the kernel answers, over the comm of a real ipykernel.

``/rebuild`` (issue 21) after a real kernel restart, its consent rule and its refusals;
``/effort`` shown and set; ``/delegate`` planned, run and judged by the fake Messages
API (the responder below answers the planner, the sub-agent and the judge). One kernel
serves the module but for the restart test, which has its own. Everything waits on
conditions, never on time.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.testing import FakeAnthropic

from .conftest import archive_rows
from .sidebar_wire import Wire, hello, start_wire

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.kernel

GOAL = "Count the rows of the north table"
PLAN = {
    "subtasks": [
        {
            "id": "north",
            "description": "Count the rows of the north table",
            "depends_on": [],
            "acceptance": "a count is reported",
            "check": None,
        }
    ]
}


def answer(body: dict[str, Any]) -> Any:
    """The planner gets PLAN, the judge a pass, the sub-agent a count; the rest an echo."""
    choice = (body.get("tool_choice") or {}).get("name")
    if choice == "submit_plan":
        return {"content": [{"type": "tool_use", "name": "submit_plan", "input": PLAN}]}
    if choice == "submit_verdict":
        verdict = {"verdict": "pass", "feedback": "the count is there"}
        return {"content": [{"type": "tool_use", "name": "submit_verdict", "input": verdict}]}
    if "Count the rows of the north table" in str(body["messages"][0]["content"]):
        return "Counted: 3 rows."
    return None  # the fake echoes


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(responder=answer) as server:
        yield server


@pytest.fixture(scope="module")
def comm(wire: Wire) -> str:
    """An open sidebar, welcomed: the archive is open and cells are recorded from now on."""
    opened = wire.open_comm(hello())
    wire.wait(lambda: wire.events(opened, "welcome"), "the welcome")
    return opened


def command(wire: Wire, comm: str, name: str, args: str = "") -> dict[str, Any]:
    """Send ``/name args``; the ``command_result`` that answers it."""
    before = len(wire.events(comm, "command_result"))
    wire.send(comm, {"type": "command", "name": name, "args": args})
    results = wire.wait(
        lambda: found if len(found := wire.events(comm, "command_result")) > before else None,
        f"the answer to /{name} {args}",
    )
    result = results[before]
    assert result["name"] == name
    return result


def recorded(wire: Wire, comm: str, name: str) -> None:
    """Wait until the archive has the execution that set ``name`` (asked like a hover)."""
    before = len(wire.events(comm, "origin"))
    wire.send(comm, {"type": "where_from", "name": name})
    origins = wire.wait(
        lambda: found if len(found := wire.events(comm, "origin")) > before else None,
        f"the origin of {name}",
    )
    assert origins[before]["found"] is True, origins[before]


# -- the table -------------------------------------------------------------------------


def test_the_welcome_carries_this_kernels_command_table(wire: Wire, comm: str) -> None:
    """The page completes from the kernel's own table (protocol 1.1), not a baked-in one."""
    from loom_jupyter.host.commands.slash import SLASH_COMMANDS

    [welcome, *_] = wire.events(comm, "welcome")
    assert welcome["commands"] == [
        {"name": c.name, "args": c.args, "description": c.description, "front": c.front}
        for c in SLASH_COMMANDS
    ]
    assert next(c for c in welcome["commands"] if c["name"] == "rebuild")["args"] == (
        "NAME [NAME ...] [--yes]"
    )
    shown = command(wire, comm, "help")
    assert shown["ok"] is True
    for c in SLASH_COMMANDS:
        assert f"- `{c.usage}` — {c.description}" in shown["text"]


# -- /rebuild --------------------------------------------------------------------------


def test_rebuild_after_a_restart_runs_only_the_slice_and_checks_the_fingerprint(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    notebook = tmp_path / "restart.ipynb"
    wire = start_wire(fake, notebook, tmp_path / "config", approval="auto")
    try:
        first = wire.open_comm(hello())
        wire.wait(lambda: wire.events(first, "welcome"), "the welcome")
        for code in ("base = 20", "other = 1", "total = base + 22"):
            assert wire.run(code)["status"] == "ok"
        wire.send(first, {"type": "send", "client_id": "r-1", "text": "I made total"})
        wire.wait(lambda: wire.events(first, "turn_done"), "the turn that saw the cells")
        recorded(wire, first, "total")

        wire.km.restart_kernel(now=False)
        wire.kc.wait_for_ready(timeout=60)
        assert wire.run("%load_ext loom_jupyter")["status"] == "ok"
        assert wire.value("'total' in globals()") == "False"
        comm = wire.open_comm(hello())
        offers = wire.wait(lambda: wire.events(comm, "notice"), "the restart offer")
        assert "/rebuild" in offers[0]["message"], offers

        result = command(wire, comm, "rebuild", "total")
        text = result["text"]
        assert result["ok"] is True, text
        assert "**To rebuild `total`: 2 step(s), about" in text
        assert "| # | source | first line | est. time | effects |" in text
        assert "`base = 20`" in text
        assert "`total = base + 22`" in text
        assert "other" not in text
        assert "| `total` | yes | present, same fingerprint as recorded |" in text
        assert "Ran 2 of 2 step(s)." in text
        assert wire.value("total") == "42"
        assert wire.value("'other' in globals()") == "False"

        again = wire.open_comm(hello())  # the offer was taken up: not made again
        wire.wait(lambda: wire.events(again, "welcome"), "the next welcome")
        assert not [n for n in wire.events(again, "notice") if "/rebuild" in n["message"]]
    finally:
        wire.shutdown()


def test_a_step_with_side_effects_runs_only_with_yes(
    wire: Wire, comm: str, wire_notebook: Path
) -> None:
    assert wire.run("open('x.txt', 'w').write('hi'); wrote = 1")["status"] == "ok"
    recorded(wire, comm, "wrote")
    written = wire_notebook.parent / "x.txt"
    written.unlink()

    held = command(wire, comm, "rebuild", "wrote")
    assert held["ok"] is False
    assert "writes files" in held["text"]
    assert "Nothing was run" in held["text"]
    assert "Type `/rebuild wrote --yes` to run them." in held["text"]
    assert "`open('x.txt', 'w').write('hi'); wrote = 1`" in held["text"]  # the plan, shown
    assert not written.exists()

    done = command(wire, comm, "rebuild", "wrote --yes")
    assert done["ok"] is True, done["text"]
    assert written.read_text() == "hi"
    assert "| `wrote` | yes |" in done["text"]


def test_bad_names_and_bad_arguments_are_refused_before_anything_runs(
    wire: Wire, comm: str
) -> None:
    for args, says in (
        ("df.head()", "Not a variable name (a Python identifier): 'df.head()'"),
        ("class", "Not a variable name (a Python identifier): 'class'"),
        ("", "Usage: `/rebuild NAME [NAME ...] [--yes]`"),
        ("total --force", "Usage: `/rebuild NAME [NAME ...] [--yes]`"),
        (" ".join(f"v{n}" for n in range(51)), "At most 50 names in one rebuild (got 51)"),
    ):
        result = command(wire, comm, "rebuild", args)
        assert result["ok"] is False
        assert says in result["text"], (args, result["text"])

    gone = command(wire, comm, "rebuild", "never_set")
    assert gone["ok"] is False
    assert "Cannot rebuild:" in gone["text"]
    assert "- `never_set`: no archived execution sets it" in gone["text"]


def test_rebuild_is_refused_while_a_turn_runs(wire: Wire, comm: str, fake: FakeAnthropic) -> None:
    fake.add({"fault": "stall", "after_deltas": 1, "seconds": 60, "text": "A slow start and"})
    before = len(wire.events(comm, "turn_done"))
    wire.send(comm, {"type": "send", "client_id": "busy-1", "text": "take your time"})
    wire.wait(lambda: wire.events(comm, "text"), "the slow answer's first words")
    refused = command(wire, comm, "rebuild", "wrote --yes")
    assert refused["ok"] is False
    assert "Not now: a turn is running" in refused["text"]
    wire.send(comm, {"type": "stop"})
    wire.wait(lambda: len(wire.events(comm, "turn_done")) > before, "the stopped turn")


# -- /effort and /delegate -------------------------------------------------------------


def test_effort_is_shown_set_for_every_sidebar_and_a_bad_level_refused(
    wire: Wire, comm: str, fake: FakeAnthropic
) -> None:
    shown = command(wire, comm, "effort")
    assert shown["ok"] is True
    assert shown["text"].startswith("Thinking: ")
    assert "Effort: " in shown["text"]

    before = len(wire.events(comm, "options"))
    changed = command(wire, comm, "effort", "low")
    assert changed["ok"] is True
    assert "Effort: low" in changed["text"]
    options = wire.wait(
        lambda: found if len(found := wire.events(comm, "options")) > before else None,
        "the options every sidebar gets",
    )
    assert options[-1]["options"]["effort"] == "low"
    assert "Effort: low" in command(wire, comm, "effort")["text"]

    bad = command(wire, comm, "effort", "extreme")
    assert bad["ok"] is False
    assert bad["text"] == (
        "`/effort` takes default, low, medium, high, xhigh or max (got `extreme`)."
    )
    assert "Effort: low" in command(wire, comm, "effort")["text"]  # unchanged
    assert command(wire, comm, "effort", "default")["ok"] is True


def test_delegate_answers_with_the_task_and_its_digest_reaches_the_conversation(
    wire: Wire, comm: str, wire_notebook: Path
) -> None:
    assert command(wire, comm, "delegate")["text"].startswith("Usage: /delegate GOAL")

    started = command(wire, comm, "delegate", GOAL)
    assert started["ok"] is True, started["text"]
    found = re.search(r"Delegated task `([0-9a-f]{8})` is running", started["text"])
    assert found, started["text"]

    def passed() -> dict[str, Any] | None:
        tasks = [t for t in wire.events(comm, "task") if t["task_id"].startswith(found[1])]
        return next((t for t in tasks if t["status"] == "passed"), None)

    task = wire.wait(passed, "the delegated task to pass")
    assert task["goal"] == GOAL
    assert [(s["id"], s["status"]) for s in task["subtasks"]] == [("north", "passed")]

    def digest() -> list[tuple[Any, ...]]:
        return archive_rows(
            wire_notebook,
            "SELECT content FROM conversation_turns WHERE role = 'system'"
            f" AND content LIKE 'Delegated task {task['task_id']}%'",
        )

    [(note,)] = wire.wait(digest, "the digest in the conversation")
    assert note.startswith(f"Delegated task {task['task_id']} — passed")


def test_a_replayed_plot_does_not_land_in_an_old_cells_output(
    wire: Wire, comm: str, fake: FakeAnthropic
) -> None:
    fake.add("Hello from a cell.")
    assert wire.run("%cowork hello")["status"] == "ok"  # a cell's turn: it had a renderer
    plot = "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplotted = 1"
    assert wire.run(plot)["status"] == "ok"
    recorded(wire, comm, "plotted")
    assert wire.run("del plotted")["status"] == "ok"

    mark = len(wire.log)
    result = command(wire, comm, "rebuild", "plotted")
    assert result["ok"] is True, result["text"]
    shown = [
        msg
        for channel, msg in wire.log[mark:]
        if channel == "iopub" and msg["msg_type"] in ("display_data", "update_display_data")
    ]
    assert shown == []  # no cell asked: the figure goes nowhere (the answer names the step)
    assert wire.value("plotted") == "1"


def test_what_the_replayed_steps_print_is_in_the_answer(wire: Wire, comm: str) -> None:
    assert wire.run("print('loaded 3 rows'); printed_rows = 3")["status"] == "ok"
    recorded(wire, comm, "printed_rows")
    assert wire.run("del printed_rows")["status"] == "ok"
    result = command(wire, comm, "rebuild", "printed_rows")
    assert result["ok"] is True, result["text"]
    assert "The steps printed:\n\n```text\nloaded 3 rows\n```" in result["text"]
