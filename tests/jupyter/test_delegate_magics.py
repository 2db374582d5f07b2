"""%delegate and %%delegate on a real in-process IPython shell (terminal output), fake API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from IPython.core.interactiveshell import InteractiveShell

PLAN = [
    {"id": "sum", "description": "Sum the list into total", "check": "total == 6"},
    {"id": "report", "description": "Report the total", "depends_on": ["sum"], "check": None},
]


def responder(body: dict[str, Any]) -> Any:
    choice = (body.get("tool_choice") or {}).get("name")
    if choice == "submit_plan":
        plan = [{"depends_on": [], "acceptance": "done", **s} for s in PLAN]
        return {
            "content": [{"type": "tool_use", "name": "submit_plan", "input": {"subtasks": plan}}]
        }
    first = body["messages"][0]["content"]
    texts = [b.get("text", "") for b in first] if isinstance(first, list) else [first]
    if any(t.startswith("Sum the list") for t in texts) and len(body["messages"]) == 1:
        return {
            "content": [{"type": "tool_use", "name": "run_python", "input": {"code": "total = 6"}}]
        }
    return "Done: the total is 6."


@pytest.fixture
def delegate(
    shell: InteractiveShell,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[tuple[Callable[..., str], FakeAnthropic]]:
    """``run("status")`` runs ``%delegate status``; ``run(line, cell)`` runs ``%%delegate``."""
    with FakeAnthropic(responder=responder) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-magic-tests-0000")
        monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "sums.ipynb"))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
        # Sub-agents run under the session's mode; nobody answers stdin here: `auto`.
        monkeypatch.setenv("LOOM_APPROVAL", "auto")
        shell.run_line_magic("load_ext", "loom_jupyter")
        capsys.readouterr()

        def run(line: str, cell: str | None = None) -> str:
            if cell is None:
                shell.run_line_magic("delegate", line)
            else:
                shell.run_cell_magic("delegate", line, cell)
            return capsys.readouterr().out

        yield run, fake
        shell.run_line_magic("unload_ext", "loom_jupyter")


def test_usage_help_and_bad_options(delegate: tuple[Callable[..., str], FakeAnthropic]) -> None:
    run, fake = delegate
    assert "%delegate resume TASK" in run("")
    assert "usage: %delegate status" in run("status --help")
    assert "usage: %delegate resume" in run("resume")
    assert "--budget-usd X" in run("--help")
    assert "loom: --max-parallel must be at least 1" in run("sum things --max-parallel 0")
    assert "No delegated tasks in this session yet" in run("status")
    assert fake.message_requests == []


def test_the_cell_magic_runs_a_goal_without_verification(
    delegate: tuple[Callable[..., str], FakeAnthropic], shell: InteractiveShell
) -> None:
    run, fake = delegate
    out = run("--no-verify --max-parallel 1", "Sum the list [1, 2, 3]\nand report it.")
    assert "Planned 2 subtasks: sum, report" in out
    assert "▶ sum (attempt 1)" in out
    assert "— passed (2/2 subtasks passed)" in out
    assert shell.user_ns["total"] == 6
    bodies = [r.body for r in fake.message_requests]
    assert not [b for b in bodies if (b.get("tool_choice") or {}).get("name") == "submit_verdict"]
    planning = next(b for b in bodies if b.get("tool_choice"))
    assert (
        "Sum the list [1, 2, 3]\nand report it." in planning["messages"][-1]["content"][0]["text"]
    )
    status = run("status")
    assert "[passed]" in status
    assert "sum" in status
    assert "report" in status
