"""notebooks/delegate.ipynb runs top to bottom under nbclient, against a scripted fake API."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "delegate.ipynb"
REGIONS = ("north", "south")


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [b.get("text", "") for b in content]


def _region(body: dict[str, Any]) -> str | None:
    for text in _texts(body["messages"][0]):
        for region in REGIONS:
            if text.startswith(f"Compute the total of the {region} region"):
                return region
    return None


def responder(body: dict[str, Any]) -> Any:
    """A planner, two sub-agents and a judge; anything else is echoed."""
    choice = (body.get("tool_choice") or {}).get("name")
    if choice == "submit_plan":
        subtasks = [
            {
                "id": region,
                "description": f"Compute the total of the {region} region into total_{region}",
                "depends_on": [],
                "acceptance": f"total_{region} holds the sum",
                "check": f"total_{region} == sum(sales['{region}'])",
            }
            for region in REGIONS
        ]
        return {
            "content": [
                {"type": "tool_use", "name": "submit_plan", "input": {"subtasks": subtasks}}
            ]
        }
    if choice == "submit_verdict":
        verdict = {"verdict": "pass", "feedback": "the total is computed from sales"}
        return {"content": [{"type": "tool_use", "name": "submit_verdict", "input": verdict}]}
    region = _region(body)
    if region is None:
        return None
    if len(body["messages"]) == 1:
        code = {"code": f"total_{region} = sum(sales['{region}'])"}
        return {"content": [{"type": "tool_use", "name": "run_python", "input": code}]}
    return f"total_{region} is set."


def test_the_delegate_walkthrough_runs(tmp_path: Path) -> None:
    path = tmp_path / "delegate.ipynb"
    shutil.copy(NOTEBOOK, path)
    notebook = nbformat.read(path, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    with FakeAnthropic(responder=responder) as fake:
        env.update(
            JPY_SESSION_NAME=str(path),
            ANTHROPIC_BASE_URL=fake.base_url,
            ANTHROPIC_API_KEY="test-key",
            LOOM_APPROVAL="auto",
            XDG_CONFIG_HOME=str(tmp_path / "config"),
        )
        client = NotebookClient(
            notebook,
            timeout=120,
            kernel_name="python3",
            resources={"metadata": {"path": str(tmp_path)}},
        )
        client.execute(env=env)
    outputs = "\n".join(
        str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
    assert "Traceback" not in outputs
    assert "— passed (2/2 subtasks passed)" in outputs
    assert "{'north': 295, 'south': 165}" in outputs
    assert "[passed]" in outputs  # %delegate status
    live = [
        out["data"]
        for cell in notebook.cells
        for out in cell.get("outputs", [])
        if "data-loom-task" in str(out.get("data", {}).get("text/html", ""))
    ]
    assert live  # the live table, saved as it last was: HTML and the same table as text
    assert all(str(data["text/plain"]).startswith("task ") for data in live)
    archive = tmp_path / ".loom" / "delegate.ipynb.sqlite"
    with sqlite3.connect(f"file:{archive}?mode=ro", uri=True) as db:
        assert db.execute("SELECT status FROM tasks").fetchall() == [("passed",)]
        assert db.execute(
            "SELECT count(*) FROM cowork_sessions WHERE parent_session_id IS NOT NULL"
        ).fetchone() == (2,)
