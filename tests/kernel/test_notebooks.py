"""The walkthrough notebooks run top to bottom under nbclient against the fake Messages API;
saved, every output reads without a live kernel (issue 40.4); as shipped, they carry the
kernel metadata JupyterLab writes, so opening one changes nothing (issue 40.6)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from nbclient import NotebookClient

if TYPE_CHECKING:
    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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

    nbformat.write(notebook, path)  # saved, then read back as any reader of the file would
    saved = json.loads(path.read_text())
    displays = [out for out in _outputs(saved) if "data" in out]
    assert displays
    assert [out for out in displays if WIDGET_VIEW in out["data"]] == []  # nothing needs a kernel
    assert all(_text(out["data"].get("text/plain", "")).strip() for out in displays)
    assert not [out for out in displays if "object>" in _text(out["data"].get("text/plain", ""))]
    if name == "quickstart.ipynb":  # its %cowork status: the panel as it last was, HTML and text
        (panel,) = [
            out
            for out in displays
            if 'data-loom="panel"' in _text(out["data"].get("text/html", ""))
        ]
        assert "Session state" in _text(panel["data"]["text/html"])
        assert "Session: " in _text(panel["data"]["text/plain"])


def _outputs(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        out for cell in notebook["cells"] if cell["cell_type"] == "code" for out in cell["outputs"]
    ]


def _text(value: str | list[str]) -> str:
    return value if isinstance(value, str) else "".join(value)


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_a_shipped_notebook_carries_the_metadata_jupyterlab_would_write(path: Path) -> None:
    from ipykernel.ipkernel import IPythonKernel
    from jupyter_client.kernelspec import KernelSpecManager

    metadata = json.loads(path.read_text())["metadata"]
    spec = KernelSpecManager().get_kernel_spec("python3")
    assert metadata["kernelspec"] == {
        "display_name": spec.display_name,
        "language": spec.language,
        "name": "python3",
    }
    info = dict(IPythonKernel.language_info)
    shipped = dict(metadata["language_info"])
    assert shipped.pop("version").startswith("3.")  # the one field a Python upgrade changes
    assert shipped == {key: value for key, value in info.items() if key != "version"}
