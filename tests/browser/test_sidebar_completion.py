"""Slash commands and @-mentions in the Loom sidebar, in a real JupyterLab.

The completion list (`[data-loom="completions"]` holding `[data-loom="completion"]`,
DESIGN §9) for `/` and `@`, `/sessions`, a mention whose summary reaches the model's
request (read off the fake Messages API), and `/mcp` listing a real stdio MCP server
configured in a loom.yaml beside the notebook. Every wait is on a condition.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect
from sidebar_page import ANSWER_TIMEOUT_MS, INPUT, USER, env_cell, open_chat, send, wait_answer

from loom_jupyter.host.commands.slash import SLASH_COMMANDS
from loom_jupyter.host.services.mentions import MENTIONS_HEADER
from loom_jupyter.testing import FakeAnthropic

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Locator

pytestmark = pytest.mark.browser

COMPLETIONS = '[data-loom="completions"]'
COMPLETION = '[data-loom="completion"]'
TOOLBOX = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "toolbox.py"
COMMAND_NAMES = [command.name for command in SLASH_COMMANDS]  # the one table, in its order


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def chat(lab: LabPage, folder: Path, fake: FakeAnthropic, *cells: str) -> Locator:
    path = write_notebook(folder, "mentions.ipynb", [env_cell(fake.base_url), *cells])
    return open_chat(lab, path.relative_to(lab.server.root_dir).as_posix())


def last_user_text(fake: FakeAnthropic) -> str:
    """The text of the last user message of the last request to the model."""
    body = fake.message_requests[-1].body
    assert isinstance(body, dict)
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if isinstance(block, dict))


def test_slash_lists_the_commands_and_sessions_opens_the_picker(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Hello there.")
    panel = chat(lab, notebook_dir, fake)
    send(panel, "Say hello")
    wait_answer(panel, "Hello there.")

    box = panel.locator(INPUT)
    box.click()
    box.press_sequentially("/")
    listing = panel.locator(COMPLETIONS)
    expect(listing).to_be_visible()
    items = listing.locator(COMPLETION)
    expect(items).to_have_count(len(COMMAND_NAMES))
    assert [items.nth(i).get_attribute("data-label") for i in range(len(COMMAND_NAMES))] == (
        COMMAND_NAMES
    )
    expect(items.filter(has_text="/mcp")).to_contain_text("MCP servers")

    box.press_sequentially("se")  # filtered as the person types
    expect(items).to_have_count(_starting("se"))
    box.press("ArrowDown")
    box.press("ArrowUp")
    expect(items.first).to_have_class("loom-Completion loom-mod-active")
    box.press("Escape")
    expect(listing).to_be_hidden()
    box.press("Backspace")  # "/s": the list comes back
    expect(items).to_have_count(_starting("s"))
    box.press_sequentially("ess")
    expect(items).to_have_count(1)
    box.press("Tab")
    expect(box).to_have_value("/sessions ")
    expect(listing).to_be_hidden()
    box.press("Enter")

    picker = panel.locator('[data-loom="sessions"]')
    expect(picker).to_have_attribute("open", "")
    expect(picker.locator('[data-loom="session"]')).to_have_count(1)
    expect(box).to_have_value("")
    expect(panel.locator(USER)).to_have_count(1)  # the command was no message
    assert len(fake.message_requests) == 1


def test_a_mentioned_variable_is_completed_and_its_summary_sent(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    fake.add("Noted.")
    (notebook_dir / "notes.md").write_text("# Field notes\nchurn rose in the north\n")
    panel = chat(lab, notebook_dir, fake, "sales_by_region = {'north': 1234, 'south': 567}")

    box = panel.locator(INPUT)
    box.click()
    box.press_sequentially("Compare @sales_")
    listing = panel.locator(COMPLETIONS)
    variable = listing.locator(f'{COMPLETION}[data-kind="variable"]')
    expect(variable).to_have_attribute("data-label", "sales_by_region")
    expect(variable).to_contain_text("dict")
    box.press("Tab")
    expect(box).to_have_value("Compare @sales_by_region ")

    box.press_sequentially("with @note")  # the mouse picks too
    note = listing.locator(f'{COMPLETION}[data-kind="file"][data-label="notes.md"]')
    note.click()
    expect(box).to_have_value("Compare @sales_by_region with @notes.md ")
    box.press("Enter")

    wait_answer(panel, "Noted.")
    expect(panel.locator(USER)).to_have_text(["Compare @sales_by_region with @notes.md"])
    sent = last_user_text(fake)
    person, added = sent.split(MENTIONS_HEADER)
    assert "Compare @sales_by_region with @notes.md" in person
    assert "@sales_by_region (variable):" in added
    assert "keys: 'north', 'south'" in added
    assert "@notes.md (file notes.md" in added
    assert "churn rose in the north" in added


def test_mcp_lists_a_configured_stdio_server_and_help_lists_the_commands(
    lab: LabPage, notebook_dir: Path, fake: FakeAnthropic
) -> None:
    config = {"mcp_servers": {"toolbox": {"command": sys.executable, "args": [str(TOOLBOX)]}}}
    (notebook_dir / "loom.yaml").write_text(json.dumps(config))  # JSON is YAML
    panel = chat(lab, notebook_dir, fake)
    trust = panel.locator('[data-loom="trust"]')  # a folder's servers start once trusted
    trust.locator('[data-loom="trust-allow"]').click()
    expect(trust).to_be_hidden(timeout=ANSWER_TIMEOUT_MS)

    send(panel, "/mcp")
    card = panel.locator('[data-loom="command-result"][data-command="mcp"]')
    expect(card).to_contain_text("toolbox", timeout=ANSWER_TIMEOUT_MS)
    expect(card).to_contain_text("running")
    expect(card).to_contain_text("echo")
    expect(card.locator("table")).to_have_count(1)  # markdown, rendered

    send(panel, "/help")
    help_card = panel.locator('[data-loom="command-result"][data-command="help"]')
    for name in COMMAND_NAMES:
        expect(help_card).to_contain_text(f"/{name}")
    expect(panel.locator(USER)).to_have_count(0)
    assert fake.message_requests == []


def _starting(prefix: str) -> int:
    """How many slash commands the completion offers for ``prefix``."""
    return sum(name.startswith(prefix) for name in COMMAND_NAMES)
