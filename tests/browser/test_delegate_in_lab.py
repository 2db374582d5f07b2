"""%delegate in a real JupyterLab: the sidebar shows the task live and again after a reload."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ANSWER_TIMEOUT_MS,
    env_cell,
    run_all,
    sidebar,
    wait_kernel_idle,
    wait_state,
)

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.browser

SUBTASKS = [
    {"id": "clean", "description": "Clean the survey table", "check": "cleaned == 1"},
    {"id": "count", "description": "Count the answers", "check": None},
]


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content]


def responder(body: dict[str, Any]) -> Any:
    choice = (body.get("tool_choice") or {}).get("name")
    if choice == "submit_plan":
        plan = [{"depends_on": [], "acceptance": "done", **s} for s in SUBTASKS]
        return {
            "content": [{"type": "tool_use", "name": "submit_plan", "input": {"subtasks": plan}}]
        }
    if choice == "submit_verdict":
        verdict = {"verdict": "pass", "feedback": "looks right"}
        return {"content": [{"type": "tool_use", "name": "submit_verdict", "input": verdict}]}
    first = "\n".join(_texts(body["messages"][0]))
    if "Clean the survey table" in first and len(body["messages"]) == 1:
        code = {"code": "cleaned = 1"}
        return {"content": [{"type": "tool_use", "name": "run_python", "input": code}]}
    return "Done."


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(responder=responder) as server:
        yield server


def test_a_delegation_shows_in_the_sidebar_and_survives_a_reload(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    cells = [env_cell(fake.base_url), "%delegate Clean the survey and count the answers"]
    path = write_notebook(notebook_dir, "delegate.ipynb", cells)
    lab.open(path.relative_to(lab.server.root_dir).as_posix())
    wait_kernel_idle(lab)
    panel = sidebar(lab)
    wait_state(panel, "idle")
    run_all(lab, wait=False)  # the %delegate cell waits for the approval below

    task = panel.locator('[data-loom="task"]')
    expect(task).to_contain_text(
        "Clean the survey and count the answers", timeout=ANSWER_TIMEOUT_MS
    )
    # Sub-agents run under the session's mode (`ask`): the clean step's code asks here.
    allow = panel.locator('[data-loom="approve"][data-decision="allow"]')
    expect(allow).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    expect(panel.locator('[data-loom="approval-input"]')).to_contain_text("cleaned = 1")
    allow.click()
    passed = task.locator('[data-loom="subtask"][data-status="passed"]')
    expect(passed).to_have_count(2, timeout=ANSWER_TIMEOUT_MS)

    lab.reload()
    panel = sidebar(lab)
    wait_state(panel, "idle")
    again = panel.locator('[data-loom="task"]')
    expect(again.locator('[data-loom="subtask"][data-status="passed"]')).to_have_count(
        2, timeout=ANSWER_TIMEOUT_MS
    )
