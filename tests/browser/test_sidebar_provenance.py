"""Hovering a variable mentioned in the chat shows where it came from (issue 21), in a real
JupyterLab: the answer's inline `code` that names a variable is a mention
(`[data-loom="variable-mention"]`), and its tip (`[data-loom="provenance-tip"]`) names the
cell that last set it, its code and the cells it depends on, asked of the kernel's
archived executions over the comm. Every wait is on a condition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import env_cell, open_chat, send, wait_answer

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.browser

MENTION = '[data-loom="variable-mention"]'
TIP = '[data-loom="provenance-tip"]'
COUNTS = """() => window.jupyterapp.shell.currentWidget.content.widgets.map(
    (cell) => cell.model.executionCount)"""


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def test_hovering_a_mentioned_variable_shows_the_cell_that_set_it_and_its_chain(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    cells = [env_cell(fake.base_url), "scores = [1, 2, 3]", "total = sum(scores)"]
    path = write_notebook(notebook_dir, "origin.ipynb", cells)
    panel = open_chat(lab, path.relative_to(lab.server.root_dir).as_posix())
    _, scores_count, total_count = lab.page.evaluate(COUNTS)

    fake.add("`total` is `sum(scores)`; `nothing_here` was never set.\n\n```\ntotal\n```")
    send(panel, "What is @total?")
    answer = wait_answer(panel, "was never set")
    mentions = answer.locator(MENTION)
    expect(mentions).to_have_count(2)  # not `sum(scores)`, not the code block
    assert [mentions.nth(i).get_attribute("data-name") for i in range(2)] == [
        "total",
        "nothing_here",
    ]

    tip = lab.page.locator(TIP)
    mentions.first.hover()
    expect(tip).to_have_attribute("data-state", "shown")
    expect(tip).to_be_visible()
    expect(tip.locator('[data-part="head"]')).to_contain_text(
        f"total — last set by cell [{total_count}] at "
    )
    expect(tip.locator('[data-part="code"]')).to_have_text("total = sum(scores)")
    expect(tip.locator('[data-part="chain"]')).to_have_text(
        f"depends on: cell [{scores_count}] scores = [1, 2, 3]"
    )
    expect(tip.locator('[data-part="estimate"]')).to_contain_text("rebuild estimate:")

    mentions.nth(1).hover()  # another mention: its own tip
    expect(tip).to_have_attribute("data-name", "nothing_here")
    expect(tip).to_have_text("nothing_here — no archived execution sets it")

    answer.locator("pre").hover()  # off the mentions: the tip goes
    expect(tip).to_be_hidden()

    mentions.first.focus()  # the keyboard reaches it too; Escape closes it
    expect(tip).to_have_attribute("data-name", "total")
    expect(tip).to_be_visible()
    lab.page.keyboard.press("Escape")
    expect(tip).to_be_hidden()

    asked = panel.locator('[data-loom="message"][data-role="user"]').locator(MENTION)
    expect(asked).to_have_text("@total")  # the person's own @-mention is one too
    asked.hover()
    expect(tip).to_have_attribute("data-name", "total")
    expect(tip.locator('[data-part="head"]')).to_contain_text("total — last set by cell [")
