"""The person's cells between turns, on a real IPython shell: recorded, summarised, sent."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.jupyter.kernel.activity import NOTE_TOKENS, CellActivity, CellRun, activity_note
from loom_jupyter.jupyter.kernel.execute import run_in_namespace
from loom_jupyter.tools.base import VariableEffect

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from IPython.core.interactiveshell import InteractiveShell

    from loom_jupyter.testing import FakeAnthropic

pytest_plugins = ["loom_jupyter.testing.pytest_plugin"]


@pytest.fixture
def activity(shell: InteractiveShell) -> Iterator[CellActivity]:
    watching = CellActivity(shell)
    yield watching
    watching.close()


def test_cells_are_recorded_with_their_outcome_and_variables(
    shell: InteractiveShell, activity: CellActivity
) -> None:
    shell.run_cell("df_between = 123")
    shell.run_cell("1/0")
    shell.run_cell("names = ['a', 'b']\nprint(names)")
    first, second, third = activity.take()
    assert first.variables == ("df_between: int",)
    assert first.error is None
    assert second.error == "ZeroDivisionError: division by zero"
    assert second.variables == ()
    assert third.code == "names = ['a', 'b'] print(names)"
    assert third.variables == ("names: list len 2",)
    assert activity.take() == []  # handed over once


def test_the_agents_code_and_the_coworkers_magics_are_not_the_persons_activity(
    shell: InteractiveShell, activity: CellActivity
) -> None:
    run_in_namespace(shell, "made_by_agent = 1", cell_id=1)
    shell.run_cell("%cowork --help")  # not loaded here: an error, but still the coworker's
    shell.run_cell("%load_ext loom_jupyter_not_a_module")
    assert shell.user_ns["made_by_agent"] == 1
    assert activity.take() == []


def test_secrets_typed_into_a_cell_never_reach_the_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WAREHOUSE_TOKEN", "tok-1234567890")
    runs = [
        CellRun(1, "os.environ['ANTHROPIC_API_KEY'] = 'sk-ant-api03-abcdefghijklmnop'", None, ()),
        CellRun(2, "connect('tok-1234567890')", "ValueError: bad token tok-1234567890", ()),
    ]
    note = activity_note(runs)
    assert note is not None
    assert "sk-ant-api03" not in note
    assert "tok-1234567890" not in note
    assert note.count("[REDACTED]") == 3


def test_the_note_is_newest_first_within_its_budget() -> None:
    runs = [
        CellRun(n, f"step_{n} = {n} * 2", None, (VariableEffect(f"step_{n}", "int"),))
        for n in range(1, 60)
    ]
    note = activity_note(runs)
    assert note is not None
    assert len(note) <= NOTE_TOKENS * 4
    lines = note.splitlines()
    assert lines[0].startswith("[Notebook activity: since the last turn the person ran 59 cell(s)")
    assert lines[1].startswith("- [59] `step_59 = 59 * 2`")
    assert lines[-1].startswith("(and ")
    assert lines[-1].endswith("older cell(s) not shown)]")
    assert activity_note([]) is None


def _last_request(fake: FakeAnthropic) -> str:
    return json.dumps(fake.message_requests[-1].body)


def test_the_next_request_tells_the_model_what_the_person_ran(
    shell: InteractiveShell, cowork: Callable[[str], str], fake_anthropic: FakeAnthropic
) -> None:
    cowork("hello")
    shell.run_cell("df_between = 123")
    shell.run_cell("1/0")
    cowork("what did I just do?")
    request = _last_request(fake_anthropic)
    assert "df_between: int" in request
    assert "ZeroDivisionError: division by zero" in request
    assert request.index("1/0") < request.index("df_between = 123")  # newest first
    assert "variables:\\n- 'df_between: int" in request  # the state lists it as live
    cowork("and now?")
    assert "Notebook activity" not in json.dumps(
        fake_anthropic.message_requests[-1].body["messages"][-1]
    )


def test_a_setting_turns_it_off(
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "quiet.ipynb"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LOOM_NOTEBOOK_ACTIVITY", "off")
    shell.run_line_magic("load_ext", "loom_jupyter")
    try:
        shell.run_line_magic("cowork", "hello")
        shell.run_cell("quiet_value = 5")
        shell.run_line_magic("cowork", "anything?")
        assert "quiet_value" not in _last_request(fake_anthropic)
    finally:
        shell.run_line_magic("unload_ext", "loom_jupyter")


def test_each_cell_becomes_an_execution_record_with_names_and_fingerprints(
    shell: InteractiveShell,
) -> None:
    from loom_jupyter.lineage import ExecutionRecord, fingerprint

    records: list[ExecutionRecord] = []
    watching = CellActivity(shell, recorder=records.append)
    try:
        shell.run_cell("base_n = 40")
        shell.run_cell("items_l = []\nitems_l.append(base_n + 2)")
        shell.run_cell("items_l.sort()")
        shell.run_cell("exec('hidden_v = 1')")
        shell.run_cell("1/0")
        shell.run_cell("%cowork --help")
    finally:
        watching.close()
    first, second, third, hidden, failed = records
    assert first.source == "cell"
    assert first.sets == ("base_n",)
    assert first.fingerprints == {"base_n": fingerprint(40)}
    assert first.duration_s >= 0
    assert first.execution_count is not None
    assert second.reads == ("base_n",)
    assert second.sets == ("items_l",)
    assert second.code == "items_l = []\nitems_l.append(base_n + 2)"  # whole, not trimmed
    assert third.mutates == ("items_l",)
    assert third.fingerprints == {"items_l": fingerprint([42])}
    assert "hidden_v" in hidden.sets  # the namespace diff saw what the code hid
    assert failed.error == "ZeroDivisionError: division by zero"


def test_the_persons_cells_are_archived_through_the_host(
    shell: InteractiveShell, cowork: Callable[[str], str]
) -> None:
    from loom_jupyter.jupyter.coworker.registry import current

    cowork("hello")
    shell.run_cell("archived_a = 2")
    shell.run_cell("archived_b = archived_a * 3", cell_id="cell-b")
    host = current(shell).host
    records = host.loop_thread.run(host.executions.all(), timeout=30)  # queued after the writes
    mine = [r for r in records if r.code.startswith("archived_")]
    assert [r.sets for r in mine] == [("archived_a",), ("archived_b",)]
    assert mine[1].reads == ("archived_a",)
    assert all(r.kernel_run == host.executions.kernel_run for r in mine)
    assert all(r.session_id for r in mine)
    assert [r.cell_id for r in mine] == [None, "cell-b"]  # the page's cell id, when it sent one
    assert all(r.turn is None for r in mine)  # a person's cell answers no turn


def test_the_agents_run_python_is_archived_too(
    shell: InteractiveShell,
    fake_anthropic: FakeAnthropic,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loom_jupyter.jupyter.coworker.registry import current

    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "agent.ipynb"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LOOM_APPROVAL", "auto")
    fake_anthropic.add(
        {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": "agent_v = 7"}}]},
        "done",
    )
    shell.run_line_magic("load_ext", "loom_jupyter")
    try:
        shell.run_line_magic("cowork", "make agent_v")
        assert shell.user_ns["agent_v"] == 7
        host = current(shell).host
        records = host.loop_thread.run(host.executions.all(), timeout=30)
        (made,) = [r for r in records if r.code == "agent_v = 7"]
        assert made.source == "run_python"
        assert made.turn == 1  # the person's message it answered
        assert made.label == "run_python (turn 1)"
        assert made.sets == ("agent_v",)
        assert "agent_v" in made.fingerprints
    finally:
        shell.run_line_magic("unload_ext", "loom_jupyter")


def test_the_cells_run_before_loom_loaded_are_recorded_late_once(shell: InteractiveShell) -> None:
    """Issue 30: IPython's history before the load, with execution counts; Loom's own lines
    and the sidebar's auto-load are left out; a reload records nothing twice."""
    from loom_jupyter.jupyter.kernel.activity import earlier_cells

    start = shell.execution_count
    for code in (
        "early = 1",
        "later = early + 1",
        "%load_ext loom_jupyter_not_a_module",
        "def _loom_autoload():\n    pass",
        "",
    ):
        shell.run_cell(code, store_history=True)
    records = earlier_cells(shell)
    assert [(r.execution_count, r.code) for r in records] == [
        (start, "early = 1"),
        (start + 1, "later = early + 1"),
    ]
    assert all(r.late and r.source == "cell" and r.duration_s == 0 for r in records)
    assert records[1].sets == ("later",)
    assert records[1].reads == ("early",)
    assert records[0].fingerprints == {}  # no namespace diff: nothing to check against
    assert earlier_cells(shell) == []  # a reload of the extension

    shell.run_cell("after_unload = 3", store_history=True)  # while Loom was not loaded
    assert [r.code for r in earlier_cells(shell)] == ["after_unload = 3"]
