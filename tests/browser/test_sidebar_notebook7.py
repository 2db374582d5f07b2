"""The Loom chat sidebar in Notebook 7's right panel (same prebuilt extension, no ILabShell).

Notebook 7 has no side tab bar for the Lab tab's badge: while an approval waits and the
panel is closed, the notebook's toolbar shows a Loom button (``data-loom="attention"``)
that opens the panel, and the page title starts with a mark (issue 40).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ANSWER_TIMEOUT_MS,
    USER,
    env_cell,
    open_notebook7,
    run_all,
    send,
    wait_answer,
    wait_state,
)

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from pathlib import Path

WAITING_CAPTION = "Loom — waiting for your answer"
INDICATOR = '.jp-NotebookPanel-toolbar [data-loom="attention"]'
MARKED = re.compile(r"^● ")
CODE = "total = sum(range(10))\nprint(total)"

ANSWER = "Hello from **Notebook 7**. " + " ".join(f"n{n}" for n in range(60)) + " NB7-END"


@pytest.mark.browser
def test_notebook7_send_and_stream(fresh_lab: LabPage, notebook_dir: Path) -> None:
    lab = fresh_lab  # a page of its own: Notebook 7 is another app than the shared JupyterLab
    script = [{"content": [{"type": "text", "text": ANSWER}], "delay": 0.02}]
    with FakeAnthropic(script=script) as fake:
        path = write_notebook(notebook_dir, "nb7.ipynb", [env_cell(fake.base_url)])
        served = path.relative_to(lab.server.root_dir).as_posix()
        panel = open_notebook7(lab, served)
        run_all(lab)

        send(panel, "Say hello from Notebook 7")

        expect(panel.locator(USER)).to_have_text(["Say hello from Notebook 7"])
        message = wait_answer(panel, "NB7-END")
        expect(message.locator("strong", has_text="Notebook 7")).to_be_visible()
        wait_state(panel, "idle")


@pytest.mark.browser
def test_notebook7_calls_you_to_a_waiting_approval_while_the_panel_is_closed(
    fresh_lab: LabPage, notebook_dir: Path, tmp_path: Path
) -> None:
    lab = fresh_lab
    page = lab.page
    tool = {"type": "tool_use", "name": "run_python", "input": {"code": CODE}}
    with FakeAnthropic() as fake:
        fake.add({"content": [{"type": "text", "text": "Summing."}, tool]}, "Total printed.")
        path = write_notebook(notebook_dir, "nb7wait.ipynb", [env_cell(fake.base_url)])
        panel = open_notebook7(lab, path.relative_to(lab.server.root_dir).as_posix())
        run_all(lab)
        indicator = page.locator(INDICATOR)
        expect(indicator).to_have_count(1)  # in the toolbar, hidden while nothing waits
        expect(indicator).to_be_hidden()

        # The person asks, then closes the panel while the model works.
        send(panel, "Sum the first ten numbers")
        lab.app_eval("(app) => { app.shell.collapseRight(); }")
        expect(panel).to_be_hidden()

        expect(indicator).to_be_visible(timeout=ANSWER_TIMEOUT_MS)
        expect(indicator).to_have_attribute("title", WAITING_CAPTION)
        expect(indicator).to_have_accessible_name(WAITING_CAPTION)
        expect(page).to_have_title(MARKED)
        page.screenshot(path=str(tmp_path / "nb7-waiting-indicator.png"))

        indicator.click()
        expect(panel).to_be_visible()
        wait_state(panel, "waiting-approval")
        approval = panel.locator('[data-loom="approval"][data-decision="pending"]')
        expect(approval.locator('[data-loom="approval-input"]')).to_have_text(CODE)
        expect(indicator).to_be_hidden()  # the panel is open: the card is in sight
        expect(page).to_have_title(MARKED)  # still waiting (for someone on another tab)

        panel.locator('[data-loom="approve"][data-decision="allow"]').click()
        wait_answer(panel, "Total printed.")
        expect(page).not_to_have_title(MARKED)
        lab.app_eval("(app) => { app.shell.collapseRight(); }")
        expect(panel).to_be_hidden()
        expect(indicator).to_be_hidden()  # answered: nothing calls any more
