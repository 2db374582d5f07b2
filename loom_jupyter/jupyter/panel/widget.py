"""The live panel: a display of the session, updated in place, that reads well when saved.

Every ``%cowork status`` shows the kernel's one panel under one ``display_id``; as events
are rendered (main thread) the display is updated (``update_display_data``), which reaches
the browser while a cell is still running, so the panel moves during a streaming turn.

It is plain HTML with a text twin, never an ipywidget: a saved notebook keeps the last HTML
it showed, so a reopened notebook, nbviewer and GitHub show the panel as it was, where a
widget whose model went with its kernel reads "Error displaying widget: model not found"
(JupyterLab picks a widget view over the HTML beside it in the same bundle). A console,
which shows a display only as it first came, and terminal IPython get :func:`panel_text`.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import TYPE_CHECKING, Any

from loom_jupyter.jupyter.panel.render import panel_bundle, panel_text

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
        self._display_id: str | None = None  # None until a view is shown
        self._shown: dict[str, str] = {}  # the bundle the views show now
        self._tasks: dict[str, TaskSnapshot] = {}

    def apply(self, event: Event) -> None:
        """Fold an engine event in and refresh the views (main thread)."""
        self.data = self.data.apply(event)
        self._refresh()

    def show_task(self, snapshot: TaskSnapshot) -> None:
        """Show a delegation's live table (the three most recent tasks; main thread)."""
        from loom_jupyter.jupyter.delegation.view import task_table_html, task_table_text

        self._tasks[snapshot.task_id] = snapshot
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
        """Display a view of the panel (a display in a kernel, text in a terminal)."""
        if getattr(self._shell, "kernel", None) is None:
            print(panel_text(self.data))
            return
        from IPython.display import display

        self._display_id = self._display_id or uuid.uuid4().hex
        self._shown = panel_bundle(self.data)
        display(self._shown, raw=True, display_id=self._display_id)

    def _refresh(self) -> None:
        """Update every view when what it shows changed (most events change nothing)."""
        if self._display_id is None:
            return
        bundle = panel_bundle(self.data)
        if bundle == self._shown:
            return
        from IPython.display import update_display

        self._shown = bundle
        update_display(bundle, raw=True, display_id=self._display_id)
