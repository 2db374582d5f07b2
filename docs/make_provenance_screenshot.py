"""Make docs/provenance.png: hovering a variable named in an answer shows where it came from.

    python docs/make_provenance_screenshot.py

A real JupyterLab + Debian chromium with the installed extension, the fake Messages API
scripting the answer (no network); the cells run in the notebook's kernel, so the tip
names the real cells that made the variable.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from lab_harness import standalone_lab, write_notebook
from playwright.sync_api import expect
from sidebar_page import env_cell, hide_setup_cell, open_chat, send, wait_answer

from loom_jupyter.testing import FakeAnthropic

ROOT = Path(__file__).resolve().parents[1]
CELLS = [
    "import statistics",
    "prices = [12.5, 9.0, 14.25, 11.0]\nunits = [30, 42, 18, 25]",
    "notes = 'draft for Monday'",
    "revenue = [p * u for p, u in zip(prices, units)]\nrevenue.append(99.0)",
    "mean_revenue = statistics.mean(revenue)\nmean_revenue",
]
ANSWER = (
    "`mean_revenue` is the mean of `revenue`, which still holds the test value 99.0 "
    "appended by hand. Drop it and the mean rises to about 394."
)
OUT = ROOT / "docs" / "provenance.png"


def main() -> int:
    with FakeAnthropic() as fake, standalone_lab(1280, 720, timeout_ms=120_000) as lab:
        server = lab.server
        cells = [env_cell(fake.base_url), *CELLS]
        path = write_notebook(server.root_dir, "sales.ipynb", cells)
        panel = open_chat(lab, path.relative_to(server.root_dir).as_posix())
        hide_setup_cell(lab)
        fake.add(ANSWER)
        send(panel, "Why is mean_revenue so low?")
        answer = wait_answer(panel, "rises to about")
        mention = answer.locator('[data-loom="variable-mention"][data-name="mean_revenue"]')
        mention.hover()
        tip = lab.page.locator('[data-loom="provenance-tip"]')
        expect(tip).to_have_attribute("data-state", "shown", timeout=60_000)
        lab.page.screenshot(path=str(OUT))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
