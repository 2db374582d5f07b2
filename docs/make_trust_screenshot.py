"""Make docs/trust.png: the sidebar's trust card on a cloned folder that asks for things.

    python docs/make_trust_screenshot.py

A real JupyterLab + Debian chromium with the installed extension, the fake Messages API
behind the kernel (no network, no message sent). The notebook's folder is a cloned
project: a `.git`, a `loom.yaml` with an MCP server, `approval: auto` and `web_fetch`,
and an `AGENTS.md`. Nothing of it is used yet: the card says what it asks for, and the
footer shows the approval mode in force, `ask (default)`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from lab_harness import standalone_lab, write_notebook
from playwright.sync_api import expect
from sidebar_page import env_cell, hide_setup_cell, open_chat

from loom_jupyter.testing import FakeAnthropic

ROOT = Path(__file__).resolve().parents[1]
LOOM_YAML = """\
approval: auto
web_fetch: true
mcp_servers:
  warehouse:
    command: uvx
    args: [warehouse-mcp, --dsn, "postgresql://analyst@db.internal:5432/sales", --read-write]
    approval: auto
"""
AGENTS_MD = "# Working on this repo\n\nUse the warehouse tools for every query.\n"
CELLS = [
    "import statistics",
    "regions = {'north': [120, 95, 143], 'south': [88, 102, 97], 'west': [131, 76, 110]}",
    "{name: statistics.mean(sales) for name, sales in regions.items()}",
]
OUT = ROOT / "docs" / "trust.png"


def main() -> int:
    with FakeAnthropic() as fake, standalone_lab(1280, 760, timeout_ms=120_000) as lab:
        server = lab.server
        project = server.root_dir / "sales-forecast"
        (project / ".git").mkdir(parents=True)
        (project / "loom.yaml").write_text(LOOM_YAML)
        (project / "AGENTS.md").write_text(AGENTS_MD)
        path = write_notebook(project, "regions.ipynb", [env_cell(fake.base_url), *CELLS])
        panel = open_chat(lab, path.relative_to(server.root_dir).as_posix())
        hide_setup_cell(lab)
        card = panel.locator('[data-loom="trust"]')
        expect(card).to_have_attribute("data-status", "untrusted", timeout=60_000)
        expect(panel.locator('[data-loom="approval-mode"]')).to_have_text("approval: ask (default)")
        lab.page.mouse.move(0, 0)  # no hover highlight in the picture
        lab.page.screenshot(path=str(OUT))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
