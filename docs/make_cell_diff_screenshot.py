"""Make docs/cell-diff.png: an agent's edit shown as a diff in its cell, asking Accept / Reject.

    python docs/make_cell_diff_screenshot.py

A real JupyterLab + Debian chromium with the installed extension, the fake Messages API
scripting the edit (no network), approval mode ``ask``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from lab_harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LabPage,
    start_lab_server,
    stop_lab_server,
    write_notebook,
)
from playwright.sync_api import expect, sync_playwright
from sidebar_page import env_cell, open_chat, send

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
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        server = start_lab_server(Path(tmp) / "lab")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
                )
                context = browser.new_context(viewport={"width": 1280, "height": 720})
                lab = LabPage(page=context.new_page(), server=server)
                cells = [env_cell(fake.base_url), "%cowork approval ask", BEFORE]
                path = write_notebook(server.root_dir, "sales.ipynb", cells)
                panel = open_chat(lab, path.relative_to(server.root_dir).as_posix())
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
                browser.close()
        finally:
            stop_lab_server(server)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
