"""The live panel: an ipywidgets view of the session, with a text fallback.

The widgets' ``value`` traits are updated from the main thread as events are
rendered; widget updates from the kernel reach the browser while a cell is
still running, so the panel moves during a streaming turn. Where widgets cannot
render (terminal IPython), :meth:`Panel.show` prints :func:`panel_text`.
"""

from __future__ import annotations

import dataclasses
import html
from typing import TYPE_CHECKING, Any

from loom_jupyter.jupyter.panel.render import panel_html, panel_text

if TYPE_CHECKING:
    from loom_jupyter.engine.events import Event
    from loom_jupyter.host.services.panel_data import PanelData
    from loom_jupyter.orchestrator import TaskSnapshot

__all__ = ["Panel"]


class Panel:
    """One panel per kernel; every ``%cowork status`` shows a view of it."""

    def __init__(self, shell: Any, data: PanelData) -> None:
        self._shell = shell
        self.data = data
        self._widgets: tuple[Any, Any, Any] | None = None

    def apply(self, event: Event) -> None:
        """Fold an engine event in and refresh the widgets (main thread)."""
        self.data = self.data.apply(event)
        self._refresh()

    def show_task(self, snapshot: TaskSnapshot) -> None:
        """Show a delegation's live table (the three most recent tasks; main thread)."""
        from loom_jupyter.jupyter.delegation.view import task_table_html, task_table_text

        self._tasks = {**getattr(self, "_tasks", {}), snapshot.task_id: snapshot}
        recent = list(self._tasks.values())[-3:]
        html_ = "".join(task_table_html(s) for s in recent)
        text = "\n".join(task_table_text(s) for s in recent)
        self.data = dataclasses.replace(self.data, task_html=html_, task_text=text)
        self._refresh()

    def reset(self, data: PanelData) -> None:
        """Replace the snapshot (after resume, new, fork)."""
        self.data = data
        self._refresh()

    def show(self) -> None:
        """Display the panel (widgets in a kernel, text elsewhere)."""
        if getattr(self._shell, "kernel", None) is None:
            print(panel_text(self.data))
            return
        from IPython.display import display

        display(self._box())

    def _box(self) -> Any:
        import ipywidgets as widgets  # the installed one, never the folder's (importguard)

        if self._widgets is None:
            head = widgets.HTML()
            state = widgets.HTML()
            box = widgets.VBox(
                [head, widgets.Accordion(children=[state], titles=("Session state",))],
                layout=widgets.Layout(border="1px solid #ccc", padding="4px 8px"),
            )
            self._widgets = (head, state, box)
            self._refresh()
        return self._widgets[2]

    def _refresh(self) -> None:
        if self._widgets is None:
            return
        head, state, _ = self._widgets
        head.value = panel_html(self.data)
        yaml = self.data.state_yaml.strip() or "(empty)"
        state.value = f"<pre style='margin:0'>{html.escape(yaml)}</pre>"
