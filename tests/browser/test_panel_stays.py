"""A panel that stays and calls you (issue 40.2, newcomer-5 D8 and D11) in a real JupyterLab.

Loom's panel is in the layout restorer, so a reload brings it back where it was, with a
waiting approval still on it; the Loom tab carries a badge (``data-loom="attention"``)
while a card waits; the command palette's "Loom: Open chat" and Alt+Shift+L open it; an
approval shows its code once, not again in its tool card; tool cards wrap in the narrow
sidebar instead of scrolling sideways.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from lab_harness import SIDEBAR_ID, LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import (
    ANSWER_TIMEOUT_MS,
    env_cell,
    open_chat,
    open_notebook7,
    send,
    wait_answer,
    wait_state,
)

from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from playwright.sync_api import Locator

pytestmark = pytest.mark.browser

CODE = "total = sum(range(10))\nprint(total)"
TAB = f'.jp-SideBar.jp-mod-right li[data-id="{SIDEBAR_ID}"]'
WAITING_CAPTION = "Loom — waiting for your answer"
# Whether a node's content is wider than the node (it would scroll sideways or be cut).
OVERFLOWS = "(node) => node.scrollWidth > node.clientWidth + 1"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def chat(lab: LabPage, folder: Path, fake: FakeAnthropic) -> Locator:
    path = write_notebook(folder, "stays.ipynb", [env_cell(fake.base_url)])
    return open_chat(lab, path.relative_to(lab.server.root_dir).as_posix())


def panel_shown(lab: LabPage) -> Locator:
    """The Loom panel, expected on screen without anyone opening it."""
    panel = lab.page.locator(f"#{SIDEBAR_ID}")
    expect(panel).to_be_visible()
    return panel


def sidebar_open(layout: dict[str, Any]) -> bool:
    """Whether a saved layout has the Loom panel open in the right area."""
    right = layout.get("right") or {}
    return right.get("current") == SIDEBAR_ID and not right.get("collapsed", True)


def test_a_waiting_approval_survives_a_reload_with_its_panel_and_badge(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    tool = {"type": "tool_use", "name": "run_python", "input": {"code": CODE}}
    fake.add({"content": [{"type": "text", "text": "Summing."}, tool]}, "Total printed.")
    panel = chat(lab, notebook_dir, fake)
    tab = lab.page.locator(TAB)
    expect(tab).not_to_have_attribute("data-loom", "attention")

    send(panel, "Sum the first ten numbers")
    wait_state(panel, "waiting-approval", timeout=ANSWER_TIMEOUT_MS)
    expect(tab).to_have_attribute("data-loom", "attention")
    expect(tab).to_have_attribute("title", WAITING_CAPTION)
    # The code shows once: on the approval, not again in its tool card.
    card = panel.locator('[data-loom="tool-card"][data-tool="run_python"]')
    expect(card).to_have_attribute("data-approval", "pending")
    expect(card.locator('[data-loom="tool-input"]')).to_be_hidden()
    expect(panel.locator('[data-loom="approval-input"]')).to_be_visible()

    lab.wait_layout_saved(sidebar_open, "the Loom panel is open")
    lab.reload()
    panel = panel_shown(lab)  # restored with the layout: nobody opened it
    wait_state(panel, "waiting-approval", timeout=ANSWER_TIMEOUT_MS)
    approval = panel.locator('[data-loom="approval"][data-decision="pending"]')
    expect(approval.locator('[data-loom="approval-input"]')).to_have_text(CODE)
    expect(lab.page.locator(TAB)).to_have_attribute("data-loom", "attention")

    panel.locator('[data-loom="approve"][data-decision="allow"]').click()
    wait_answer(panel, "Total printed.")
    expect(lab.page.locator(TAB)).not_to_have_attribute("data-loom", "attention")
    expect(lab.page.locator(TAB)).to_have_attribute("title", "Loom")
    # Answered: the approval keeps its outcome, the tool card (drawn after the reload,
    # after its approval) shows the code and the result.
    card = panel.locator('[data-loom="tool-card"][data-tool="run_python"]')
    answered = panel.locator('[data-loom="approval"][data-decision="allow"]')
    expect(answered).to_contain_text("Allowed")
    expect(answered.locator('[data-loom="approval-input"]')).to_be_hidden()
    expect(card).to_have_attribute("data-approval", "answered")
    expect(card.locator('[data-loom="tool-input"]')).to_have_text(CODE)
    card.locator("summary").click()  # a finished card is folded; opened, it shows the code
    expect(card.locator('[data-loom="tool-input"]')).to_be_visible()


def test_the_palette_and_the_shortcut_open_the_panel(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    chat(lab, notebook_dir, fake)
    panel = lab.page.locator(f"#{SIDEBAR_ID}")

    lab.app_eval("(app) => { app.shell.collapseRight(); }")
    expect(panel).to_be_hidden()
    lab.app_eval("(app) => { void app.commands.execute('apputils:activate-command-palette'); }")
    search = lab.page.locator(".jp-ModalCommandPalette input, #command-palette input").first
    search.fill("Loom open chat")
    item = lab.page.locator(".lm-CommandPalette-item", has_text="Open chat").first
    expect(item).to_be_visible()
    item.click()
    expect(panel).to_be_visible()

    lab.app_eval("(app) => { app.shell.collapseRight(); }")
    expect(panel).to_be_hidden()
    lab.page.locator(".jp-NotebookPanel-notebook").first.click()  # focus in the page
    lab.page.keyboard.press("Alt+Shift+L")
    expect(panel).to_be_visible()


def test_tool_cards_wrap_instead_of_scrolling_sideways(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    calls = [
        {"type": "tool_use", "id": f"toolu_wrap{n}", "name": name, "input": {}}
        for n, name in enumerate(("inspect_variables", "conversation_recall"))
    ]
    fake.add({"content": calls}, "Looked.")
    panel = chat(lab, notebook_dir, fake)
    send(panel, "Look at the variables and what we said")
    wait_answer(panel, "Looked.")

    for name in ("inspect_variables", "conversation_recall"):
        card = panel.locator(f'[data-loom="tool-card"][data-tool="{name}"]')
        expect(card.locator(".loom-ToolCard-name")).to_have_text(name)
        assert not card.locator(".loom-ToolCard-name").evaluate(OVERFLOWS), name
        assert not card.evaluate(OVERFLOWS), name
    assert not panel.locator('[data-loom="messages"]').evaluate(OVERFLOWS)


def test_notebook7_brings_the_panel_back_after_a_reload(
    fresh_lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    lab = fresh_lab  # a page of its own: Notebook 7 is another app than the shared JupyterLab
    path = write_notebook(notebook_dir, "nb7.ipynb", [env_cell(fake.base_url)])
    open_notebook7(lab, path.relative_to(lab.server.root_dir).as_posix())

    lab.page.reload()
    lab.wait_restored()
    panel_shown(lab)
