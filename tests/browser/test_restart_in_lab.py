"""Issue 30 in a real JupyterLab: the sidebar's restart offer is checked against the kernel
when the sidebar opens. A conversation used ``prices`` and ``weights``; the kernel restarts
(the sidebar offers both); the person re-runs the ``prices`` cell; a sidebar opened after
that (a reloaded page) offers only ``weights``. Issue 40.3: the sidebar says "kernel
restarted" only when the kernel's process changed, never after ``%unload_ext`` /
``%load_ext`` in the same kernel. Every wait is on a condition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ANSWER_TIMEOUT_MS,
    KERNEL_RUN,
    env_cell,
    open_chat,
    send,
    sidebar,
    wait_answer,
    wait_state,
)

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.browser

NOTICE = '[data-loom="notice"]'
RESTARTED = "kernel restarted — history intact"
RUN_CELL = """(app, index) => {
    app.shell.currentWidget.content.activeCellIndex = index;
    void app.commands.execute('notebook:run-cell');
}"""
COUNT = """([index, before]) => {
    const count = window.jupyterapp.shell.currentWidget.content.widgets[index].model.executionCount;
    return typeof count === 'number' && count !== before;  // a restarted kernel counts from 1
}"""


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def test_a_sidebar_opened_after_the_person_re_ran_a_cell_offers_only_what_is_gone(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    cells = [env_cell(fake.base_url), "prices = [1, 2, 3]", "weights = [3, 2, 1]"]
    path = write_notebook(notebook_dir, "restart.ipynb", cells)
    served = path.relative_to(lab.server.root_dir).as_posix()
    panel = open_chat(lab, served)
    fake.add("Noted.")
    send(panel, "I made prices and weights")  # the conversation now uses both
    wait_answer(panel, "Noted.")

    lab.app_eval(
        "async (app) => { await app.shell.currentWidget.sessionContext.session.kernel.restart(); }"
    )
    both = panel.locator(NOTICE, has_text="gone with the previous kernel")
    expect(both).to_contain_text("weights, prices", timeout=ANSWER_TIMEOUT_MS)
    wait_state(panel, "idle")

    before = lab.page.evaluate(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[1].model.executionCount"
    )
    lab.app_eval(RUN_CELL, 1)  # the person re-runs the prices cell
    lab.page.wait_for_function(COUNT, arg=[1, before], timeout=ANSWER_TIMEOUT_MS)

    lab.boot(served)  # a new page: its sidebar opens now, after the cell ran
    panel = sidebar(lab)
    wait_state(panel, "idle")
    offer = panel.locator(NOTICE, has_text="gone with the previous kernel")
    expect(offer).to_contain_text("gone with the previous kernel: weights.")
    expect(offer).to_contain_text("/rebuild weights")
    expect(offer).not_to_contain_text("prices")


def test_an_extension_reload_is_no_restart_and_a_restart_is_one(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    cells = [env_cell(fake.base_url), "%load_ext loom_jupyter"]  # as the quickstart loads it
    path = write_notebook(notebook_dir, "reload.ipynb", cells)
    panel = open_chat(lab, path.relative_to(lab.server.root_dir).as_posix())
    fake.add("Before the reload.", "After the reload.")
    send(panel, "hello")
    wait_answer(panel, "Before the reload.")

    # The quickstart's own cell: a new Loom in the same kernel process.
    lab.app_eval(KERNEL_RUN, "%unload_ext loom_jupyter\n%load_ext loom_jupyter")
    send(panel, "still there?")  # answered once the page is linked to the new Loom
    wait_answer(panel, "After the reload.")
    expect(panel.locator(NOTICE, has_text=RESTARTED)).to_have_count(0)

    lab.app_eval(
        "async (app) => { await app.shell.currentWidget.sessionContext.session.kernel.restart(); }"
    )
    expect(panel.locator(NOTICE, has_text=RESTARTED)).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
    wait_state(panel, "idle")
    expect(panel.locator('[data-loom="message"][data-role="user"]')).to_have_text(
        ["hello", "still there?"]
    )
