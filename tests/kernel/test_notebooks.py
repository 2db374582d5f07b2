"""The walkthrough notebooks run top to bottom under nbclient against the fake Messages API."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest
from nbclient import NotebookClient

if TYPE_CHECKING:
    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.mark.parametrize("name", ["quickstart.ipynb", "resume.ipynb"])
def test_notebook_runs_every_cell(name: str, fake: FakeAnthropic, tmp_path: Path) -> None:
    path = tmp_path / name
    shutil.copy(NOTEBOOKS / name, path)
    notebook = nbformat.read(path, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        JPY_SESSION_NAME=str(path),  # nbclient does not set it; JupyterLab does
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="test-key",
        LOOM_APPROVAL="auto",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        MPLBACKEND="Agg",
    )
    client = NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute(env=env)  # raises CellExecutionError if any cell fails
    outputs = "\n".join(
        str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    assert "Traceback" not in outputs
    assert "loom:" in outputs  # the banner
    assert "resumed" in outputs.lower()  # reloading (or %cowork resume) resumed a session
    assert (tmp_path / ".loom" / f"{name}.sqlite").exists()
