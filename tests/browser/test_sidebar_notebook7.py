"""The Loom chat sidebar in Notebook 7's right panel (same prebuilt extension, no ILabShell)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
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
