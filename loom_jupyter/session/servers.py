"""SessionServers: the MCP lifecycle of one session.

loom.yaml's ``mcp_servers`` start on the first turn (or ``%cowork mcp``); the tools of
servers that came up join the tool list between turns only, because the tool list is part
of the cached prefix and stays unchanged while a turn runs. The folder's trust decides
whether a project's servers may start; the session stops them when it closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from loom_jupyter.engine.context import ContextWindow
    from loom_jupyter.mcp.servers import McpServers, ServerStatus
    from loom_jupyter.settings import Settings
    from loom_jupyter.tools.registry import ToolRegistry

__all__ = ["SessionServers"]


class SessionServers:
    """The MCP servers of one session (none when loom.yaml names none)."""

    def __init__(self, tools: ToolRegistry, window: ContextWindow) -> None:
        self.servers: McpServers | None = None  # set by load: loom.yaml names some
        self.tools = tools
        self.window = window
        self.cwd: Path | None = None

    def load(self, settings: Settings, *, cwd: Path, trusted: bool) -> None:
        """The servers loom.yaml names, not started (the ``mcp`` SDK loads only when some are)."""
        self.cwd = cwd
        if settings.mcp_servers:
            from loom_jupyter.mcp.servers import McpServers

            self.servers = McpServers(settings.mcp_servers, cwd=cwd, trusted=trusted)

    async def status(self, *, restart: str | None, attach: bool) -> tuple[ServerStatus, ...]:
        """The servers, started first if they were not; ``restart`` starts that one again;
        with ``attach`` (between turns) their tools join the next request."""
        if self.servers is None:
            return ()
        if restart is not None:
            await self.servers.restart(restart)
        await self.servers.start()
        if attach:
            self.attach()
        return self.servers.status()

    async def start(self) -> list[str]:
        """Start the servers not started yet and add their tools; a notice per failure."""
        if self.servers is None:
            return []
        notices = await self.servers.start()
        self.attach()
        return notices

    def attach(self) -> None:
        """Append the tools of newly running servers (the tool list is part of the cached
        prefix: it stays unchanged while the servers do)."""
        if self.servers is not None and self.servers.attach(self.tools):
            self._tools_changed()

    async def update(self, settings: Settings, *, trusted: bool) -> None:
        """The folder's trust (or what it asks for) changed: the project's servers become
        those of ``settings`` — resolved from the bytes the trust was decided on — and may
        (not) run. Tools of servers that went away leave the tool list."""
        if self.servers is None:
            if settings.mcp_servers and self.cwd is not None:
                self.load(settings, cwd=self.cwd, trusted=trusted)
            return
        gone = await self.servers.update(settings.mcp_servers, trusted=trusted)
        if gone:
            for name in gone:
                self.tools.remove(name)
            self._tools_changed()

    def _tools_changed(self) -> None:
        self.window.set_tools(self.tools.specs())

    async def close(self) -> None:
        """Stop every server."""
        if self.servers is not None:
            await self.servers.close()
