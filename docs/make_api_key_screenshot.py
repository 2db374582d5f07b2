"""Make docs/api-key.png: the sidebar's key field on a notebook whose kernel has no key.

    python docs/make_api_key_screenshot.py

A real JupyterLab + Debian chromium with the installed extension, the fake Messages API
behind the kernel (no network, no message sent, no key anywhere). The sidebar shows the
key field (a password box and Save key) and, as the conversation is empty, example
prompts built from the notebook's own variables.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from lab_harness import standalone_lab, write_notebook
from playwright.sync_api import expect
from sidebar_page import hide_setup_cell, open_chat

from loom_jupyter.testing import FakeAnthropic

ROOT = Path(__file__).resolve().parents[1]
CELLS = [
    "import pandas as pd",
    "sales = pd.DataFrame({'month': ['Jan', 'Feb', 'Mar'], 'revenue': [120, 95, 143]})",
    "sales.describe()",
]
OUT = ROOT / "docs" / "api-key.png"


def main() -> int:
    with FakeAnthropic() as fake, standalone_lab(1280, 760, timeout_ms=120_000) as lab:
        server = lab.server
        setup = f"import os\nos.environ['ANTHROPIC_BASE_URL'] = {fake.base_url!r}"
        path = write_notebook(server.root_dir, "sales.ipynb", [setup, *CELLS])
        panel = open_chat(lab, path.relative_to(server.root_dir).as_posix())
        hide_setup_cell(lab)
        expect(panel.locator('[data-loom="api-key"]')).to_be_visible()
        example = panel.locator('[data-loom="example"]', has_text="Plot `sales` by month")
        expect(example).to_be_visible()
        lab.page.mouse.move(0, 0)  # no hover highlight in the picture
        lab.page.screenshot(path=str(OUT))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
