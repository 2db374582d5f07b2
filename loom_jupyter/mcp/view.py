"""``%cowork mcp`` as a table: server, transport, state, tools (no Jupyter here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.mcp.servers import ServerStatus

__all__ = ["CAPTION", "HEADERS", "NO_SERVERS", "status_rows"]

HEADERS = ("server", "transport", "state", "approval", "tools")
CAPTION = (
    "Tools reach the model as mcp__SERVER__TOOL. Start a server again with "
    "%cowork mcp --restart NAME; configure them under mcp_servers in loom.yaml."
)
NO_SERVERS = (
    "No MCP servers configured: add mcp_servers to loom.yaml beside the notebook (or "
    "~/.config/loom/loom.yaml), then restart the kernel. See the README."
)
_MAX_ERROR = 300


def status_rows(statuses: Sequence[ServerStatus]) -> list[tuple[str, str, str, str, str]]:
    """One row per server; a failure's reason follows its state."""
    rows: list[tuple[str, str, str, str, str]] = []
    for s in statuses:
        state = s.state + (
            f" (restarted {s.restarts}x)" if s.restarts and s.state == "running" else ""
        )
        if s.state == "needs trust":
            state += ": the folder is not trusted (%cowork trust)"
        if s.error and s.state in ("failed", "dead", "not allowed"):
            error = " ".join(s.error.split())  # one line in a table
            error = error if len(error) <= _MAX_ERROR else error[:_MAX_ERROR] + " [...]"
            state += f": {error}"
        tools = ", ".join(t.removeprefix(f"mcp__{s.name}__") for t in s.tools) or "-"
        rows.append((s.name, f"{s.transport}: {s.target}", state, s.approval, tools))
    return rows
