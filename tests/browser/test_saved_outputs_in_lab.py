"""Issue 40.4 and 40.6 in a real JupyterLab: what Loom leaves in a notebook reads well later.

``%cowork status`` shows the live panel; a later turn moves it in place; the notebook is
saved (Jupyter signs it, so a reopened page trusts its outputs), the kernel restarts and a
new page opens it: the panel shows as it last was, and no output reads "Error displaying
widget: model not found" (a widget view in a trusted output is what JupyterLab would pick),
and the sidebar's footer shows the session's cost before any new turn. A shipped notebook
opens unmodified. Every wait is on a condition, never a sleep.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from lab_harness import PAGE_TIMEOUT_MS, LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import ANSWER_TIMEOUT_MS, env_cell, open_chat, sidebar, wait_kernel_idle

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.browser

PANEL = '[data-loom="panel"]'
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ALL_TRUSTED = """() => window.jupyterapp.shell.currentWidget.content.widgets
    .filter((cell) => cell.model.type === 'code')
    .every((cell) => cell.model.trusted)"""
SAVED = """() => window.jupyterapp.shell.currentWidget?.context?.model?.dirty === false"""
# Dirty once JupyterLab has written what the kernel says of itself (its spec and language).
DIRTY_AFTER_KERNEL_INFO = """async (app) => {
    const widget = app.shell.currentWidget;
    await widget.sessionContext.ready;
    const kernel = widget.sessionContext.session.kernel;
    await kernel.info;
    await kernel.spec;
    await new Promise((resolve) => setTimeout(resolve, 0));
    return widget.context.model.dirty;
}"""


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def test_the_status_panel_moves_live_and_reads_the_same_after_a_restart_and_reopen(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Noted.")
    cells = [env_cell(fake.base_url), "%load_ext loom_jupyter", "%cowork status", "%cowork hi"]
    path = write_notebook(notebook_dir, "status.ipynb", cells)
    served = path.relative_to(lab.server.root_dir).as_posix()
    open_chat(lab, served)  # runs every cell
    notebook = lab.page.locator(".jp-NotebookPanel:visible")
    panel = notebook.locator(PANEL)
    expect(panel).to_contain_text("prompts 1", timeout=ANSWER_TIMEOUT_MS)  # moved by cell 4
    expect(panel).to_contain_text("Session state")

    lab.app_eval("async (app) => { await app.commands.execute('docmanager:save'); }")
    lab.page.wait_for_function(SAVED, timeout=PAGE_TIMEOUT_MS)
    lab.app_eval(
        "async (app) => { await app.shell.currentWidget.sessionContext.session.kernel.restart(); }"
    )
    wait_kernel_idle(lab)
    lab.boot(served)  # a new page: the saved notebook reopened on a kernel without the panel
    lab.page.wait_for_function(ALL_TRUSTED)  # signed on save: a widget view would be picked
    notebook = lab.page.locator(".jp-NotebookPanel:visible")
    expect(notebook.locator(PANEL)).to_contain_text("prompts 1")
    assert "model not found" not in notebook.inner_text()
    footer_cost = sidebar(lab).locator('[data-loom="cost"]')  # issue 40.6: before any new turn
    expect(footer_cost).to_contain_text("$")


@pytest.mark.parametrize("name", ["quickstart.ipynb", "delegate.ipynb", "resume.ipynb"])
def test_a_shipped_notebook_opens_unmodified(lab: LabPage, notebook_dir: Path, name: str) -> None:
    shutil.copy(NOTEBOOKS / name, notebook_dir / name)
    lab.open((notebook_dir / name).relative_to(lab.server.root_dir).as_posix())
    wait_kernel_idle(lab)
    assert lab.app_eval(DIRTY_AFTER_KERNEL_INFO) is False
