"""Which front asked for the running cell: a notebook page, a console, or a terminal.

A notebook front (JupyterLab, Notebook 7, VS Code, nbclient) updates a display in place
(``update_display_data``), so an answer streams into one display. A console (``jupyter
console``, qtconsole) shows each display once, as it first came, and ignores updates: a
streamed answer there must be a ``stream``, or it shows cut to its first piece.

The kernel tells them apart by the request that runs the cell: a notebook page names its
cell (``metadata.cellId``: JupyterLab, Notebook 7 and their code consoles), a batch runner
(nbclient, papermill, ``jupyter execute``) sends ``allow_stdin: false`` and keeps every
update, and a kernel that knows its notebook (``JPY_SESSION_NAME``, VS Code, the sidebar)
was started for a notebook page. A request with none of these comes from a console.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["FrontKind", "front_kind"]

FrontKind = Literal["notebook", "console", "terminal"]
"""``notebook``: displays update in place; ``console``: a kernel's front that shows only
streams and first displays; ``terminal``: plain IPython, no kernel."""


def front_kind(shell: Any, *, placed: bool) -> FrontKind:
    """The front of the cell running now (main thread). ``placed``: the kernel knows its
    notebook."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return "terminal"
    parent = _request(kernel)
    if (parent.get("metadata") or {}).get("cellId"):
        return "notebook"
    if (parent.get("content") or {}).get("allow_stdin") is False or placed:
        return "notebook"
    return "console"


def _request(kernel: Any) -> dict[str, Any]:
    """The shell request being handled (``{}`` when ipykernel cannot say)."""
    try:
        parent = kernel.get_parent("shell")
    except (AttributeError, TypeError, LookupError):
        return {}
    return parent if isinstance(parent, dict) else {}
