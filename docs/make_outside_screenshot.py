"""Make docs/outside-agent.png: Claude Code's calls through ``loom-jupyter mcp`` in the Loom
sidebar ("Claude Code ran ..."), and its cell edit waiting in the cell as a diff.

    python docs/make_outside_screenshot.py

A real JupyterLab + Debian chromium with the installed extension; the outside agent is the
MCP SDK's own stdio client launching ``loom-jupyter mcp`` (named ``claude-code``, as Claude
Code names itself); approval mode ``ask``. No model and no network.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from lab_harness import standalone_lab, write_notebook
from outside_agent import CALL_SECONDS, outside_agent, text
from playwright.sync_api import expect
from sidebar_page import open_chat

ROOT = Path(__file__).resolve().parents[1]
CELL = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'region': ['north', 'south', 'north'], 'amount': [120, 80, 95]})\n"
    "sales.groupby('region').amount.sum"
)
FIXED = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'region': ['north', 'south', 'north'], 'amount': [120, 80, 95]})\n"
    "sales.groupby('region')['amount'].sum().sort_values(ascending=False)"
)
OUT = ROOT / "docs" / "outside-agent.png"


def main() -> int:
    # A stand-in key, so the sidebar shows the conversation rather than its key field (no
    # request is made: the outside agent's calls need no model).
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-screenshot-stand-in")
    with standalone_lab(1400, 900, timeout_ms=120_000) as lab:
        server = lab.server
        path = write_notebook(server.root_dir, "sales.ipynb", [CELL])
        served = path.relative_to(server.root_dir).as_posix()
        panel = open_chat(lab, served)
        with outside_agent(server.root_dir.parent / "runtime", served) as agent:
            for tool, arguments in (
                ("read_notebook", {}),
                ("inspect_variables", {"name": "sales"}),
            ):
                result = agent.call(tool, arguments).result(timeout=CALL_SECONDS)
                assert not result.is_error, text(result)
            cell_id = lab.app_eval(
                "(app) => app.shell.currentWidget.content.model.sharedModel.cells[0].getId()"
            )
            edit = agent.call("edit_cell", {"cell_id": cell_id, "source": FIXED})
            diff = lab.page.locator(f'[data-loom="cell-diff"][data-cell-id="{cell_id}"]')
            expect(diff).to_be_visible(timeout=120_000)
            card = panel.locator('[data-loom="tool-card"][data-outside]').last
            expect(card.locator('[data-loom="outside-agent"]')).to_have_text("Claude Code runs")
            first = panel.locator('[data-loom="tool-card"][data-outside]').first
            first.evaluate("(card) => card.scrollIntoView({block: 'start'})")  # the cards first
            lab.page.screenshot(path=str(OUT))
            diff.locator('[data-loom="diff-accept"]').click()
            assert not edit.result(timeout=CALL_SECONDS).is_error
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
