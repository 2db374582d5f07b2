"""An outside agent in a real JupyterLab (DESIGN §14, issue 32): Claude Code's calls through
``loom-jupyter mcp`` show in the Loom sidebar as tool cards marked "Claude Code ran", and its
``edit_cell`` under ``ask`` is a diff in the cell that the person accepts in the page (the
page answered the kernel's ``ping``: it is there to ask). Without ``--notebook`` the bridge
works in the notebook whose tab the person turned to (the page's ``focus``, issue 38.6).

The agent is the MCP SDK's own stdio client launching ``loom-jupyter mcp`` (it finds the
server in the runtime folder); the page is headless chromium. Every wait is on a condition.
"""

from __future__ import annotations

import json
import urllib.request
from typing import TYPE_CHECKING

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from lab_harness import LabPage, write_notebook
from outside_agent import CALL_SECONDS, outside_agent, text
from playwright.sync_api import expect
from sidebar_page import KERNEL_TIMEOUT_MS, open_chat

if TYPE_CHECKING:
    from pathlib import Path

# The agent lists every kernel of the server's runtime folder: none of an earlier test's
# may still be shutting down.
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("kernels_settled")]

OUTSIDE_CARD = '[data-loom="tool-card"][data-outside="Claude Code"]'
SOURCE_IS = (
    "([i, text]) => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
    ".cells[i]?.getSource() === text"
)


def test_an_outside_agents_edit_is_a_diff_the_person_accepts(
    lab: LabPage, notebook_dir: Path
) -> None:
    path = write_notebook(notebook_dir, "outside.ipynb", ["total = 1 + 1\ntotal"])
    served = path.relative_to(lab.server.root_dir).as_posix()
    panel = open_chat(lab, served)  # the page loads Loom; approval mode `ask` (the default)
    runtime = lab.server.root_dir.parent / "runtime"
    with outside_agent(runtime, served) as agent:
        read = agent.call("read_notebook", {}).result(timeout=CALL_SECONDS)
        assert read.is_error is False, text(read)
        cell_id = lab.app_eval(
            "(app) => app.shell.currentWidget.content.model.sharedModel.cells[0].getId()"
        )
        card = panel.locator(OUTSIDE_CARD).filter(has_text="read_notebook")
        expect(card).to_be_visible(timeout=KERNEL_TIMEOUT_MS)
        expect(card.locator('[data-loom="outside-agent"]')).to_have_text("Claude Code ran")

        edit = agent.call("edit_cell", {"cell_id": cell_id, "source": "total = 2 + 2\ntotal"})
        diff = lab.page.locator(f'[data-loom="cell-diff"][data-cell-id="{cell_id}"]')
        expect(diff).to_be_visible(timeout=KERNEL_TIMEOUT_MS)
        expect(diff).to_contain_text("2 + 2")
        running = panel.locator(OUTSIDE_CARD).filter(has_text="edit_cell")
        expect(running.locator('[data-loom="outside-agent"]')).to_have_text("Claude Code runs")
        diff.locator('[data-loom="diff-accept"]').click()

        result = edit.result(timeout=CALL_SECONDS)
        assert result.is_error is False, text(result)
        lab.page.wait_for_function(SOURCE_IS, arg=[0, "total = 2 + 2\ntotal"])
        expect(running.locator('[data-loom="outside-agent"]')).to_have_text("Claude Code ran")


def _last_active(lab: LabPage) -> dict[str, str]:
    with urllib.request.urlopen(lab.server.url("api/sessions"), timeout=30) as response:
        return {s["path"]: s["kernel"]["last_activity"] for s in json.load(response)}


def _run_in_kernel(lab: LabPage, notebook: str, code: str) -> None:
    """Run ``code`` in ``notebook``'s kernel straight over ZMQ (not through the page)."""
    with urllib.request.urlopen(lab.server.url("api/sessions"), timeout=30) as response:
        kernel_id = next(s["kernel"]["id"] for s in json.load(response) if s["path"] == notebook)
    runtime = lab.server.root_dir.parent / "runtime"
    client = BlockingKernelClient(connection_file=str(runtime / f"kernel-{kernel_id}.json"))
    client.load_connection_file()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=CALL_SECONDS)
        reply = client.execute_interactive(code, timeout=CALL_SECONDS, output_hook=lambda _: None)
        assert reply["content"]["status"] == "ok", reply
    finally:
        client.stop_channels()


def test_without_notebook_the_agent_works_in_the_notebook_on_screen(
    lab: LabPage, notebook_dir: Path
) -> None:
    looked_at = write_notebook(notebook_dir, "looked_at.ipynb", ["where = 'looked at'"])
    elsewhere = write_notebook(notebook_dir, "elsewhere.ipynb", ["where = 'elsewhere'"])
    shown = looked_at.relative_to(lab.server.root_dir).as_posix()
    other = elsewhere.relative_to(lab.server.root_dir).as_posix()
    open_chat(lab, shown)
    open_chat(lab, other, more=True)
    lab.activate_tab(shown)  # the person turns back to the first notebook
    lab.page.wait_for_function(
        "(path) => window.jupyterapp.shell.currentWidget?.context?.path === path", arg=shown
    )
    _run_in_kernel(lab, other, "where = 'elsewhere, active last'")
    active = _last_active(lab)
    assert active[other] > active[shown]  # the old rule would have chosen it

    runtime = lab.server.root_dir.parent / "runtime"
    with outside_agent(runtime, None) as agent:
        listed = text(agent.call("list_notebooks", {}).result(timeout=CALL_SECONDS))
        line = next(row for row in listed.splitlines() if row.startswith(f"- {shown} "))
        assert line.endswith("<- the tools work here"), listed
        assert "on screen, 1 page(s) open" in line, listed
        assert f"The tools work in {shown}: it is on screen in JupyterLab." in listed
        looked = agent.call("inspect_variables", {}).result(timeout=CALL_SECONDS)
        assert looked.is_error is False, text(looked)
        assert "looked at" in text(looked)
