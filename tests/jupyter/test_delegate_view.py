"""How a delegation snapshot looks: the escaped live table, text, progress lines, sidebar value."""

from __future__ import annotations

from loom_jupyter.host.services.panel_data import PanelData
from loom_jupyter.jupyter.delegation.view import (
    progress_line,
    task_table_html,
    task_table_text,
    to_sidebar,
)
from loom_jupyter.jupyter.panel.render import panel_text
from loom_jupyter.jupyter.panel.widget import Panel
from loom_jupyter.orchestrator import SubtaskView, TaskSnapshot, TaskUpdate

SNAPSHOT = TaskSnapshot(
    task_id="3f2a" * 8,
    goal="Profile <b>every</b> file",
    status="running",
    subtasks=(
        SubtaskView(
            id="load<script>",
            description="read <img src=x onerror=alert(1)>",
            status="passed",
            attempt=1,
            elapsed_s=2.04,
            tokens=1234,
            last_tool="run_python",
        ),
        SubtaskView(
            id="plot",
            description="plot it",
            status="running",
            attempt=2,
            elapsed_s=0.5,
            tokens=0,
            last_tool=None,
            reason="",
        ),
    ),
    tokens=1234,
    cost_usd=0.01,
)


def test_the_table_escapes_everything_the_model_wrote() -> None:
    html = task_table_html(SNAPSHOT)
    assert "<script>" not in html
    assert "<img" not in html
    assert "<b>every" not in html
    assert "load&lt;script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "run_python" in html
    assert "1,234" in html


def test_text_table_and_progress_lines() -> None:
    text = task_table_text(SNAPSHOT)
    assert text.splitlines()[0].startswith(f"task {SNAPSHOT.task_id} [running]")
    assert "plot" in text
    assert "1,234 tokens, $0.01" in text
    assert (
        progress_line(TaskUpdate(SNAPSHOT, "started", "plot", "attempt 2")) == "▶ plot (attempt 2)"
    )
    assert progress_line(TaskUpdate(SNAPSHOT, "usage", "plot")) is None
    done = progress_line(TaskUpdate(SNAPSHOT, "task_done"))
    assert done == "Delegation running (1,234 tokens, $0.01)"


def test_the_sidebar_value_has_the_pinned_shape() -> None:
    view = to_sidebar(SNAPSHOT)
    assert view.type == "task"
    assert view.task_id == SNAPSHOT.task_id
    assert [(s.id, s.status, s.attempt, s.tokens, s.last_tool) for s in view.subtasks] == [
        ("load<script>", "passed", 1, 1234, "run_python"),
        ("plot", "running", 2, 0, None),
    ]
    assert SNAPSHOT.to_json()["subtasks"][0]["elapsed_s"] == 2.0


def test_the_panel_shows_the_task_table() -> None:
    class Shell:
        kernel = None

    panel = Panel(Shell(), PanelData())
    panel.show_task(SNAPSHOT)
    assert "load<script>" in panel.data.task_text
    assert "load&lt;script&gt;" in panel.data.task_html
    assert "[running]" in panel_text(panel.data)
