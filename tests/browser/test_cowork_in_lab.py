"""%cowork in a real JupyterLab notebook: the answer streams into the cell as rendered markdown,
the agent's code runs in the notebook's kernel, and the turn lands in the notebook's archive."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

ANSWER = "Done: `answer` is **42** in your namespace."


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    script = [
        {
            "content": [
                {"type": "text", "text": "I'll compute it in your kernel."},
                {"type": "tool_use", "name": "run_python", "input": {"code": "answer = 6 * 7"}},
            ]
        },
        ANSWER,
    ]
    with FakeAnthropic(script=script) as server:
        yield server


def cells(base_url: str) -> list[str]:
    return [
        "import os\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {base_url!r}\n"
        "os.environ['ANTHROPIC_API_KEY'] = 'sk-ant-browser-test-key'",
        "%load_ext loom_jupyter",
        "%cowork approval auto",
        "%cowork What is six times seven? Keep it in a variable called answer.",
        "print('kernel sees', answer)",
    ]


def start_kernel_and_run_all(lab: LabPage) -> None:
    """Accept the kernel dialog if JupyterLab shows one, wait for the kernel, run every cell."""
    select = lab.page.locator(".jp-Dialog").get_by_role("button", name="Select")
    lab.page.wait_for_function(
        """() => {
            const widget = window.jupyterapp.shell.currentWidget;
            const dialog = document.querySelector('.jp-Dialog');
            return dialog !== null || widget?.sessionContext?.session?.kernel?.status === 'idle';
        }""",
        timeout=60_000,
    )
    if select.is_visible():
        select.click()
    lab.page.wait_for_function(
        """() => window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel
                   ?.status === 'idle'""",
        timeout=60_000,
    )
    lab.app_eval("async (app) => { await app.commands.execute('notebook:run-all-cells'); }")


@pytest.mark.browser
def test_a_turn_streams_into_the_cell_and_is_archived(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    notebook = write_notebook(notebook_dir, "lab_turn.ipynb", cells(fake.base_url))
    panel = lab.open(notebook.relative_to(lab.server.root_dir).as_posix())
    start_kernel_and_run_all(lab)

    outputs = panel.locator(".jp-OutputArea-output")
    expect(panel.get_by_text("kernel sees 42")).to_be_visible(timeout=120_000)
    strong = outputs.locator("strong", has_text="42")
    expect(strong).to_be_visible()  # markdown rendered, not shown raw
    expect(outputs.filter(has_text="run_python").first).to_be_visible()
    expect(panel.get_by_text("**42**")).to_have_count(0)
    expect(panel.get_by_text("sk-ant-browser-test-key")).to_have_count(1)  # only the source cell

    archive = notebook_dir / ".loom" / "lab_turn.ipynb.sqlite"
    with sqlite3.connect(archive) as db:
        rows = db.execute("SELECT role FROM conversation_turns ORDER BY id")
        # A system note of the person's earlier cells comes first when the sidebar's
        # auto-load ran before them (it races the run-all).
        roles = [row[0] for row in rows if row[0] != "system"]
        texts = "\n".join(row[0] for row in db.execute("SELECT content FROM conversation_turns"))
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert ANSWER in texts
    assert "sk-ant-browser-test-key" not in texts
    lab.close_all()
