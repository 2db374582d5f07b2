"""%delegate in a real ipykernel against the fake Messages API through the real SDK.

The fake answers by what each request is (the pinned forced tools, or the subtask
description heading the first user message), so parallel subtasks may arrive in
any order. The pinned wire contract is asserted on the requests it recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.testing import FakeAnthropic

from .conftest import TIMEOUT, archive_rows

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from .conftest import Kernel

pytestmark = pytest.mark.kernel

GOAL = "Profile the two sales tables and record their row counts"
PLAN = {
    "subtasks": [
        {
            "id": "north",
            "description": "Count the rows of the north table",
            "depends_on": [],
            "acceptance": "rows_north holds the count",
            "check": "rows_north == 3",
        },
        {
            "id": "south",
            "description": "Count the rows of the south table",
            "depends_on": [],
            "acceptance": "a count is reported",
            "check": None,
        },
    ]
}


def _user_texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content if b.get("type") == "text"]


def _description(body: dict[str, Any]) -> str:
    texts = [t for t in _user_texts(body["messages"][0]) if not t.startswith("<")]
    return texts[0].split("\n", 1)[0] if texts else ""


class Script:
    """Answers the planner, the sub-agents and the judge; ``hold`` makes south hang once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.firsts: Counter[str] = Counter()
        self.hold_south = False

    def __call__(self, body: dict[str, Any]) -> Any:
        choice = (body.get("tool_choice") or {}).get("name")
        if choice == "submit_plan":
            return {"content": [{"type": "tool_use", "name": "submit_plan", "input": PLAN}]}
        if choice == "submit_verdict":
            verdict = {"verdict": "pass", "feedback": "the count is there"}
            return {"content": [{"type": "tool_use", "name": "submit_verdict", "input": verdict}]}
        return self._subtask(body)

    def _subtask(self, body: dict[str, Any]) -> Any:
        description = _description(body)
        first = len(body["messages"]) == 1
        with self.lock:
            if first:
                self.firsts[description] += 1
            hold = self.hold_south and description.endswith("south table")
        if hold:
            return {"fault": "hang", "seconds": 120}
        if description.endswith("north table") and first:
            code = {"code": "rows_north = 3"}
            return {"content": [{"type": "tool_use", "name": "run_python", "input": code}]}
        if description.endswith("table"):
            return f"Counted: {description}"
        return _conversation(body)


def _conversation(body: dict[str, Any]) -> Any:
    """The person's turn: "please delegate" calls delegate_task; its result gets an answer."""
    messages = body["messages"]
    blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
    if any(b.get("type") == "tool_result" for b in blocks):
        return "The delegation is done; the digest is above."
    said = [t for m in messages if m["role"] == "user" for t in _user_texts(m)]
    if any("please delegate" in t and not t.startswith("<") for t in said):
        call = {"type": "tool_use", "name": "delegate_task", "input": {"goal": GOAL}}
        return {"content": [call]}
    return None  # anything else: the fake echoes


@pytest.fixture(scope="module")
def script() -> Script:
    return Script()


@pytest.fixture(scope="module")
def fake(script: Script) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(responder=script) as server:
        yield server


def _requests(fake: FakeAnthropic) -> list[dict[str, Any]]:
    return [r.body for r in fake.message_requests]


def test_delegate_runs_end_to_end_with_the_pinned_wire_contract(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, notebook: Path
) -> None:
    kernel = start_kernel()
    assert kernel.run("%load_ext loom_jupyter").status == "ok"
    helped = kernel.run("%delegate --help")
    assert "%delegate status" in helped.stdout
    assert "--max-parallel" in helped.stdout
    assert "usage: %delegate resume" in kernel.run("%delegate resume --help").stdout
    before = len(fake.message_requests)
    ran = kernel.run(f"%delegate {GOAL} --max-parallel 2")
    assert ran.status == "ok", ran.text()
    out = ran.stdout
    assert "— passed (2/2 subtasks passed)" in out
    assert "Planned 2 subtasks: north, south" in ran.text()
    assert kernel.value("rows_north") == "3"
    tables = [
        m
        for m in ran.of("display_data", "update_display_data")
        if "text/html" in m["content"]["data"]
    ]
    assert any("data-loom-task" in m["content"]["data"]["text/html"] for m in tables)

    bodies = _requests(fake)[before:]
    planning = [
        b for b in bodies if b.get("tool_choice") == {"type": "tool", "name": "submit_plan"}
    ]
    assert len(planning) == 1
    assert GOAL in "\n".join(_user_texts(planning[0]["messages"][-1]))
    for sub in PLAN["subtasks"]:
        firsts = [b for b in bodies if len(b["messages"]) == 1 and not b.get("tool_choice")]
        assert any(sub["description"] in "\n".join(_user_texts(b["messages"][0])) for b in firsts)
    judging = [
        b for b in bodies if b.get("tool_choice") == {"type": "tool", "name": "submit_verdict"}
    ]
    assert len(judging) == 2
    for sub in PLAN["subtasks"]:
        judged = [b for b in judging if f"Subtask id: {sub['id']}" in str(b["messages"][-1])]
        assert judged
        assert sub["description"] in "\n".join(_user_texts(judged[0]["messages"][-1]))

    [(task_id, status, session_id)] = archive_rows(
        notebook, "SELECT id, status, session_id FROM tasks"
    )
    assert status == "passed"
    subtasks = archive_rows(
        notebook,
        "SELECT subtask_key, status, attempts, child_session_id FROM subtasks ORDER BY subtask_key",
    )
    assert [row[:3] for row in subtasks] == [("north", "passed", 1), ("south", "passed", 1)]
    children = archive_rows(
        notebook,
        "SELECT parent_session_id, status FROM cowork_sessions"
        f" WHERE id IN ('{subtasks[0][3]}', '{subtasks[1][3]}')",
    )
    assert children == [(session_id, "closed"), (session_id, "closed")]
    [(note,)] = archive_rows(
        notebook,
        "SELECT content FROM conversation_turns"
        f" WHERE session_id = '{session_id}' AND role = 'system'"
        " AND content LIKE 'Delegated task%'",
    )
    assert note.startswith(f"Delegated task {task_id} — passed")

    status_out = kernel.run("%delegate status").stdout
    assert f"task {task_id} [passed]" in status_out
    assert "north" in status_out

    turn = kernel.run("%cowork what did the delegation find?")
    assert turn.status == "ok"
    assert f"Delegated task {task_id}" in json.dumps(fake.message_requests[-1].body["messages"])


def _wait_for(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise TimeoutError(what)


def test_resume_after_a_kernel_restart_reruns_only_what_did_not_pass(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, notebook: Path, script: Script
) -> None:
    kernel = start_kernel()
    assert kernel.run("%load_ext loom_jupyter").status == "ok"
    script.hold_south = True
    started = kernel.run(f"%delegate {GOAL} --bg")
    assert "runs in the background" in started.stdout, started.text()
    [(task_id,)] = archive_rows(notebook, "SELECT id FROM tasks")

    def north_passed() -> bool:
        rows = archive_rows(notebook, "SELECT status FROM subtasks WHERE subtask_key = 'north'")
        return rows == [("passed",)]

    _wait_for(north_passed, "north to pass while south hangs")
    kernel.km.restart_kernel(now=True)
    kernel.kc.wait_for_ready(timeout=TIMEOUT)
    script.hold_south = False
    assert kernel.run("%load_ext loom_jupyter").status == "ok"
    status = kernel.run("%delegate status").stdout
    assert f"task {task_id} [interrupted]" in status
    assert "%delegate resume TASK" in status
    rows = dict(archive_rows(notebook, "SELECT subtask_key, status FROM subtasks"))
    assert rows == {"north": "passed", "south": "incomplete"}

    north_runs = script.firsts["Count the rows of the north table"]
    resumed = kernel.run(f"%delegate resume {task_id[:8]}")
    assert "— passed (2/2 subtasks passed)" in resumed.stdout, resumed.text()
    assert script.firsts["Count the rows of the north table"] == north_runs
    assert archive_rows(notebook, "SELECT status FROM tasks") == [("passed",)]
    attempts = dict(archive_rows(notebook, "SELECT subtask_key, attempts FROM subtasks"))
    assert attempts == {"north": 1, "south": 2}


def test_delegate_task_under_ask_shows_the_plan_card_and_progress_in_the_turn(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, notebook: Path
) -> None:
    kernel = start_kernel(approval="ask")
    assert kernel.run("%load_ext loom_jupyter").status == "ok"
    # the plan first; then the north sub-agent's run_python asks too (approving a plan
    # approves the plan, not every call in it)
    turn = kernel.run("%cowork please delegate the profiling", answers=["y", "y"])
    assert turn.status == "ok", turn.text()
    question, call = turn.prompts
    assert "The agent wants to run run_python" in turn.text()
    assert "rows_north = 3" in turn.text()
    assert call.startswith("Allow?")
    shown = turn.text() + question
    assert "Plan (2 subtasks):" in shown
    assert "- north: Count the rows of the north table" in shown
    assert "Estimated cost:" in shown
    assert "Planned 2 subtasks: north, south" in turn.text()  # the turn is not silent
    assert "■ north passed" in turn.text()
    html = [m["content"]["data"].get("text/html", "") for m in turn.of("display_data")]
    assert any("data-loom-task" in h for h in html)  # the live table, in the %cowork cell
    assert archive_rows(notebook, "SELECT status FROM tasks") == [("passed",)]


def test_the_sidebar_gets_task_snapshots_and_replays_them(
    fake: FakeAnthropic, notebook: Path, tmp_path: Path
) -> None:
    from .sidebar_wire import hello, start_wire

    wire = start_wire(fake, notebook, tmp_path / "config", approval="auto")
    try:
        comm = wire.open_comm(hello())
        wire.wait(lambda: wire.comm_events(comm), "the welcome")
        assert wire.run(f"%delegate {GOAL}")["status"] == "ok"

        def finished() -> dict[str, Any] | None:
            tasks = [e for e in wire.comm_events(comm) if e["type"] == "task"]
            return next((t for t in tasks if t["status"] == "passed"), None)

        task = wire.wait(finished, "a passed task snapshot")
        assert set(task) >= {"type", "task_id", "goal", "status", "subtasks", "seq"}
        assert task["goal"] == GOAL
        keys = {"id", "description", "status", "attempt", "elapsed_s", "tokens", "last_tool"}
        assert all(set(s) == keys for s in task["subtasks"])
        assert [(s["id"], s["status"], s["attempt"]) for s in task["subtasks"]] == [
            ("north", "passed", 1),
            ("south", "passed", 1),
        ]
        statuses = [e["status"] for e in wire.comm_events(comm) if e["type"] == "task"]
        assert statuses[0] in ("planning", "running")
        assert statuses[-1] == "passed"

        again = wire.open_comm(hello())  # a reloaded page: the welcome carries the tasks
        welcome = wire.wait(
            lambda: next((e for e in wire.comm_events(again) if e["type"] == "welcome"), None),
            "the second welcome",
        )
        assert [(t["task_id"], t["status"]) for t in welcome["tasks"]] == [
            (task["task_id"], "passed")
        ]
    finally:
        wire.shutdown()


def test_a_kernel_interrupt_cancels_every_running_subtask(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, notebook: Path, script: Script
) -> None:
    kernel = start_kernel()
    assert kernel.run("%load_ext loom_jupyter").status == "ok"
    script.hold_south = True
    interrupted: list[bool] = []

    def interrupt_once_south_runs(msg: dict[str, Any]) -> None:
        text = str(msg["content"].get("text", "")) + str(msg["content"].get("data", {}))
        if "▶ south" in text and not interrupted:
            interrupted.append(True)
            kernel.km.interrupt_kernel()

    try:
        ran = kernel.run(f"%delegate {GOAL}", on_message=interrupt_once_south_runs)
    finally:
        script.hold_south = False
    assert interrupted
    assert "every running subtask was cancelled" in ran.text()
    assert "— cancelled (" in ran.stdout
    [(status,)] = archive_rows(notebook, "SELECT status FROM tasks")
    assert status == "cancelled"
    rows = dict(archive_rows(notebook, "SELECT subtask_key, status FROM subtasks"))
    assert rows["south"] == "cancelled"
    assert rows["north"] in ("passed", "cancelled")


def test_cancel_stops_a_background_task(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, notebook: Path, script: Script
) -> None:
    kernel = start_kernel()
    assert kernel.run("%load_ext loom_jupyter").status == "ok"
    script.hold_south = True
    try:
        assert "runs in the background" in kernel.run(f"%delegate {GOAL} --bg").stdout
        [(task_id,)] = archive_rows(notebook, "SELECT id FROM tasks")
        _wait_for(
            lambda: ("running",) in archive_rows(notebook, "SELECT status FROM subtasks"),
            "a running subtask",
        )
        assert f"Cancelling {task_id}." in kernel.run(f"%delegate cancel {task_id[:8]}").stdout
        _wait_for(
            lambda: archive_rows(notebook, "SELECT status FROM tasks") == [("cancelled",)],
            "the task to be cancelled",
        )
    finally:
        script.hold_south = False
    assert "No running task matches." in kernel.run("%delegate cancel").stdout
    [(note,)] = archive_rows(
        notebook,
        "SELECT content FROM conversation_turns WHERE role = 'system' AND content LIKE 'Deleg%'",
    )
    assert note.startswith(f"Delegated task {task_id} — cancelled")
