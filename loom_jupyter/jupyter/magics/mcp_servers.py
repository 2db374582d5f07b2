"""``%cowork mcp``: the MCP servers of loom.yaml, their state and tools, as a table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.jupyter.cell.output import show_table, show_text

if TYPE_CHECKING:
    import argparse

    from loom_jupyter.jupyter.coworker.runtime import KernelCowork

__all__ = ["mcp"]


def mcp(cw: KernelCowork, args: argparse.Namespace) -> None:
    """``%cowork mcp [--restart NAME]``: starts the servers not started yet, then lists them."""
    from loom_jupyter.mcp.view import CAPTION, HEADERS, NO_SERVERS, status_rows

    statuses = cw.run(cw.session.mcp_status(restart=args.restart))
    if not statuses:
        show_text(NO_SERVERS)
        return
    show_table(HEADERS, status_rows(statuses), caption=CAPTION)
