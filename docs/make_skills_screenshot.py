"""Make docs/skills.png: the sidebar's `/skills` after the model loaded a skill.

    python docs/make_skills_screenshot.py

A real JupyterLab + Debian chromium with the installed extension, the fake Messages API
behind the kernel (no network). The person has the README's `plot-style` skill (in the
server's `XDG_CONFIG_HOME/loom/skills`); the notebook's project has a `warehouse-sql`
skill in `.claude/skills`, not yet trusted. The model loads `plot-style` (its tool card
says which and from where), then `/skills` lists both: the project's `needs trust`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "browser"))

from lab_harness import LabPage, standalone_lab, write_notebook
from playwright.sync_api import expect
from sidebar_page import env_cell, hide_setup_cell, open_chat, send, wait_answer

from loom_jupyter.testing import FakeAnthropic

ROOT = Path(__file__).resolve().parents[1]
PLOT_STYLE = """\
---
name: plot-style
description: Our team's matplotlib look for report and slide charts - palette, fonts, sizes, labels.
---
# Plot style

- Start with `fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")`.
- Colours come from `palette.json` next to this file (read it with read_file):
  revenue is `primary`, cost is `secondary`, forecasts are dashed `muted`.
- Title says the finding ("Revenue grew 12% in Q3"), not the chart type.
- Label both axes with units; thousands as `1.2k`; no top or right spine.
"""
PALETTE = '{"primary": "#1b5e20", "secondary": "#b71c1c", "muted": "#9e9e9e"}\n'
WAREHOUSE = """\
---
name: warehouse-sql
description: How to query the analytics warehouse - schemas, the read-only role, date filters.
---
Always filter on the partition column `day`.
"""
CELLS = [
    "import pandas as pd",
    "sales = pd.DataFrame({'month': [1, 2, 3], 'revenue': [120, 95, 143]})",
]
LOAD = {"type": "tool_use", "name": "load_skill", "input": {"name": "plot-style"}}
OUT = ROOT / "docs" / "skills.png"


def widen_sidebar(lab: LabPage, width: int) -> None:
    """Drag the handle between the notebook and the right panel until the panel is
    ``width`` pixels wide (a person's drag: the table's columns need the room)."""
    handle = lab.page.locator("#jp-main-split-panel > .lm-SplitPanel-handle:visible").last
    box = handle.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    viewport = lab.page.viewport_size
    assert viewport is not None
    lab.page.mouse.move(x, y)
    lab.page.mouse.down()
    lab.page.mouse.move(viewport["width"] - width, y, steps=5)
    lab.page.mouse.up()


def main() -> int:
    with FakeAnthropic() as fake, standalone_lab(1400, 900, timeout_ms=120_000) as lab:
        server = lab.server
        person = server.config_home / "loom" / "skills" / "plot-style"
        person.mkdir(parents=True)
        (person / "SKILL.md").write_text(PLOT_STYLE)
        (person / "palette.json").write_text(PALETTE)
        project = server.root_dir / "sales-report"
        (project / ".git").mkdir(parents=True)
        (project / ".claude" / "skills" / "warehouse-sql").mkdir(parents=True)
        (project / ".claude" / "skills" / "warehouse-sql" / "SKILL.md").write_text(WAREHOUSE)
        path = write_notebook(project, "revenue.ipynb", [env_cell(fake.base_url), *CELLS])
        fake.add(
            {"content": [{"type": "text", "text": "I'll use the team's plot style."}, LOAD]},
            "Loaded `plot-style`: an 8x4.5 figure, revenue in the primary green, a title "
            "that states the finding.",
        )
        panel = open_chat(lab, path.relative_to(server.root_dir).as_posix())
        hide_setup_cell(lab)
        panel.locator('[data-loom="trust-close"]').click()  # decided later: not in the picture
        lab.app_eval("(app) => app.commands.execute('application:toggle-left-area')")
        widen_sidebar(lab, 620)
        send(panel, "Plot revenue by month in our style")
        wait_answer(panel, "Loaded")
        card = panel.locator('[data-loom="tool-card"][data-tool="load_skill"]')
        expect(card).to_have_attribute("data-state", "done")
        send(panel, "/skills")
        result = panel.locator('[data-loom="command-result"][data-command="skills"]')
        expect(result.locator("tbody tr")).to_have_count(2)
        result.scroll_into_view_if_needed()
        lab.page.mouse.move(0, 0)  # no hover highlight in the picture
        lab.page.screenshot(path=str(OUT))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
