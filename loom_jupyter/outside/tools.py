"""The tools ``loom-jupyter mcp`` offers: Loom's own names and inputs (DESIGN §14).

Their input schemas are those of Loom's tools (the agent's own), read from the tool classes;
``variable_provenance`` (``{"name": str}``) and ``list_notebooks`` are the bridge's. Each
description says what the tool does in the attached notebook, and for the tools that
change things, that the notebook's approval mode decides (the Loom sidebar asks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loom_jupyter.tools.registry import OUTSIDE_TOOLS

__all__ = ["BRIDGE_TOOLS", "OutsideTool", "outside_tools"]

BRIDGE_TOOLS = ("list_notebooks", *OUTSIDE_TOOLS)
"""Every tool the bridge lists: its own ``list_notebooks``, then the kernel's."""

_IN_NOTEBOOK = {
    "run_python": "Runs Python in the live kernel of the Jupyter notebook Loom is attached to "
    "(the person's variables are there, and what you define stays there for them).",
    "inspect_variables": "Lists or describes the variables of the attached notebook's live kernel.",
    "read_notebook": "Reads the attached notebook's cells as the person sees them in "
    "JupyterLab (unsaved edits included while its page is open).",
    "insert_cell": "Inserts a cell into the attached notebook's open page.",
    "edit_cell": "Changes one cell of the attached notebook's open page; the person sees the "
    "change as a diff in the cell.",
    "run_cell": "Runs one cell of the attached notebook in its kernel; the outputs appear in "
    "the cell.",
    "conversation_recall": "Searches the attached notebook's Loom archive: every conversation "
    "with Loom and every call an outside agent made in this notebook.",
    "rebuild_variables": "Makes variables of the attached notebook again (after a kernel "
    "restart) by re-running the archived executions that made them.",
}
_WRITES = (
    " Under the notebook's approval mode `ask` the person approves this call in the Loom "
    "sidebar (with no sidebar open it is refused); every call is archived with the notebook "
    "and shown in its Loom sidebar."
)
_READS = " Every call is archived with the notebook and shown in its Loom sidebar."

LIST_NOTEBOOKS = (
    "Lists the notebooks open on the Jupyter Server (path, kernel, its state, last activity, "
    "whether a page shows it) and which one the other tools work in, and why: unless "
    "loom-jupyter mcp was started with --notebook, the notebook the person has on screen in "
    "JupyterLab (else the one on screen last, else the one whose kernel was active last), "
    "chosen at the first call and again at each list_notebooks. Give `attach` (a path from "
    "this list) to work in another notebook from now on."
)
VARIABLE_PROVENANCE = (
    "Says where a variable of the attached notebook came from, from Loom's archive of every "
    "execution (the person's cells, Loom's and your run_python): the execution that last set "
    "or changed it (its code, cell or call, and time) and the earlier executions it depends "
    "on." + _READS
)


@dataclass(frozen=True)
class OutsideTool:
    """One tool as MCP lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool


def outside_tools() -> tuple[OutsideTool, ...]:
    """Every tool, in :data:`BRIDGE_TOOLS` order."""
    from loom_jupyter.tools.registry import default_tools

    loom = {tool.spec.name: tool for tool in default_tools()}
    found: dict[str, OutsideTool] = {
        "list_notebooks": OutsideTool(
            "list_notebooks",
            LIST_NOTEBOOKS,
            {
                "type": "object",
                "properties": {
                    "attach": {
                        "type": "string",
                        "description": "A notebook's path as listed: the other tools work in "
                        "it from now on.",
                    }
                },
                "additionalProperties": False,
            },
            True,
        ),
        "variable_provenance": OutsideTool(
            "variable_provenance",
            VARIABLE_PROVENANCE,
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "description": "e.g. df"}
                },
                "required": ["name"],
                "additionalProperties": False,
            },
            True,
        ),
    }
    for name, lead in _IN_NOTEBOOK.items():
        tool = loom[name]
        reads = tool.access == "read"
        description = f"{lead}{_READS if reads else _WRITES}\n\n{tool.spec.description}"
        found[name] = OutsideTool(name, description, dict(tool.spec.input_schema), reads)
    return tuple(found[name] for name in BRIDGE_TOOLS)
