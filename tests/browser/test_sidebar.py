"""The Loom right sidebar in a real JupyterLab: it follows the active notebook."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lab_harness import LabPage, write_notebook
from playwright.sync_api import expect

NAME = '[data-testid="loom-Header-notebook"]'


def served_path(path: Path, lab: LabPage) -> str:
    """A file's path as the server (and the URL) names it."""
    return path.relative_to(lab.server.root_dir).as_posix()


@pytest.mark.browser
def test_sidebar_shows_the_notebook_name_and_its_chat(lab: LabPage, notebook_dir: Path) -> None:
    notebook = write_notebook(notebook_dir, "analysis.ipynb", ["x = 1"])
    lab.open(served_path(notebook, lab))

    sidebar = lab.open_sidebar()

    expect(sidebar).to_have_attribute("data-loom", "sidebar")
    expect(sidebar.locator('[data-testid="loom-Header-label"]')).to_have_text("Loom")
    expect(sidebar.locator(NAME)).to_have_text("analysis.ipynb")
    for role in ("status", "input", "send", "stop", "sessions"):
        expect(sidebar.locator(f'[data-loom="{role}"]')).to_have_count(1)


@pytest.mark.browser
def test_sidebar_follows_switches_renames_and_closing(lab: LabPage, notebook_dir: Path) -> None:
    first = served_path(write_notebook(notebook_dir, "first.ipynb"), lab)
    second = served_path(write_notebook(notebook_dir, "second.ipynb"), lab)
    lab.open(first)
    sidebar = lab.open_sidebar()
    expect(sidebar.locator(NAME)).to_have_text("first.ipynb")

    lab.open_more(second)
    expect(sidebar.locator(NAME)).to_have_text("second.ipynb")

    lab.activate_tab(first)
    expect(sidebar.locator(NAME)).to_have_text("first.ipynb")

    renamed = first.replace("first.ipynb", "renamed.ipynb")
    lab.rename(first, renamed)
    expect(sidebar.locator(NAME)).to_have_text("renamed.ipynb")
    assert (notebook_dir / "renamed.ipynb").is_file()

    lab.close_all()
    expect(sidebar.locator(NAME)).to_have_text("No notebook open")
    expect(sidebar.locator('[data-loom="input"]')).to_have_count(0)


def test_labextension_list_reports_loom_enabled() -> None:
    jupyter = Path(sys.executable).with_name("jupyter")
    listing = subprocess.run(
        [jupyter, "labextension", "list"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", listing.stdout + listing.stderr)
    assert re.search(r"loom-jupyter v\S+ enabled\s+OK", output), output
