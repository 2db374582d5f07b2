"""Make docs/cell-diff.png: an agent's edit shown as a diff in its cell, asking Accept / Reject.

    python docs/make_cell_diff_screenshot.py

A real JupyterLab + Debian chromium with the installed extension, the fake Messages API
scripting the edit (no network), approval mode ``ask``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from lab_harness import standalone_lab, write_notebook
from playwright.sync_api import expect
from sidebar_page import env_cell, hide_setup_cell, open_chat, send

from loom_jupyter.testing import FakeAnthropic

ROOT = Path(__file__).resolve().parents[1]
BEFORE = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'region': ['north', 'south', 'north'], 'amount': [120, 80, 95]})\n"
    "totals = sales.groupby('region').amount.sum\n"
    "totals"
)
AFTER = (
    "import pandas as pd\n"
    "sales = pd.DataFrame({'region': ['north', 'south', 'north'], 'amount': [120, 80, 95]})\n"
    "totals = sales.groupby('region')['amount'].sum()\n"
    "totals.sort_values(ascending=False)"
)
OUT = ROOT / "docs" / "cell-diff.png"


def main() -> int:
    with FakeAnthropic() as fake, standalone_lab(1280, 720, timeout_ms=120_000) as lab:
        server = lab.server
        cells = [env_cell(fake.base_url), "%cowork approval ask", BEFORE]
        path = write_notebook(server.root_dir, "sales.ipynb", cells)
        panel = open_chat(lab, path.relative_to(server.root_dir).as_posix())
        hide_setup_cell(lab)
        target = lab.app_eval(
            "(app) => app.shell.currentWidget.content.model.sharedModel.cells[2].getId()"
        )
        edit = {"type": "tool_use", "name": "edit_cell",
                "input": {"cell_id": target, "source": AFTER}}  # fmt: skip
        fake.add({"content": [{"type": "text", "text": "The sum was never called; "
                               "fixing the cell."}, edit]}, "Fixed.")  # fmt: skip
        send(panel, "Why does totals show a method instead of numbers?")
        diff = lab.page.locator(f'[data-loom="cell-diff"][data-cell-id="{target}"]')
        expect(diff).to_be_visible(timeout=120_000)
        lab.page.screenshot(path=str(OUT))
        diff.locator('[data-loom="diff-accept"]').click()
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
