"""Make docs/remote-image.png: a remote image in a sidebar answer, held back as a placeholder.

    python docs/make_remote_image_screenshot.py

A real JupyterLab + Debian chromium with the installed extension, the fake Messages API
behind the kernel (no network). The answer carries a markdown image on another host, the
way an injected instruction would ask for one (its URL holds data): the sidebar shows
`[data-loom="remote-image"]` naming the host and the alt text, with a button that loads it.
Nothing is fetched (the host does not even exist).
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
    "regions = {'north': [120, 95, 143], 'south': [88, 102, 97], 'west': [131, 76, 110]}",
    "{name: statistics.mean(sales) for name, sales in regions.items()}",
]
ANSWER = (
    "The **north** region leads with a mean of 119.3; **south** trails at 95.7.\n\n"
    "![Sales by region](https://charts.example-cdn.net/render.png?d=north-119.3-south-95.7)\n\n"
    "| region | mean |\n|---|---|\n| north | 119.3 |\n| west | 105.7 |\n| south | 95.7 |"
)
OUT = ROOT / "docs" / "remote-image.png"


def main() -> int:
    with FakeAnthropic() as fake, standalone_lab(1280, 760, timeout_ms=120_000) as lab:
        fake.add(ANSWER)
        server = lab.server
        path = write_notebook(server.root_dir, "regions.ipynb", [env_cell(fake.base_url), *CELLS])
        panel = open_chat(lab, path.relative_to(server.root_dir).as_posix())
        hide_setup_cell(lab)
        send(panel, "Which region sells best? Show me a chart.")
        answer = wait_answer(panel, "south")
        expect(answer.locator('[data-loom="remote-image"]')).to_contain_text(
            "charts.example-cdn.net"
        )
        lab.page.mouse.move(0, 0)  # no hover highlight in the picture
        lab.page.screenshot(path=str(OUT))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
