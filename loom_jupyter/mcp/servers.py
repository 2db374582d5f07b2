"""A session's MCP servers (loom.yaml ``mcp_servers``): started together on first use,
their tools added to the session's registry, restarted once after a crash, stopped
with the session.

"First use" is the first turn (the model must see the tools in its first request) or
``%cowork mcp``; ``%load_ext`` starts nothing. A server from the notebook's folder
(``origin: project``) starts only while the folder is trusted (DESIGN §12): until then
it is listed as ``needs trust``. A server whose name the organisation's managed policy does
not list (``mcp_servers_allowed``, DESIGN §16) never starts, whoever names it: it is listed
as ``not allowed``, the policy file named. Tools are appended after the built-in
ones, server by server in loom.yaml's order, each server's in the order it lists them,
and stay put while the servers do not change: the tool list is part of the cached
prompt prefix.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loom_jupyter.errors import LoomError, PolicyRefusedError
from loom_jupyter.mcp.connection import ServerConnection, ServerState
from loom_jupyter.mcp.tool import McpTool, tool_name
from loom_jupyter.policy import managed_policy

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from loom_jupyter.settings import ApprovalMode, McpServerConfig
    from loom_jupyter.tools.registry import ToolRegistry

__all__ = ["McpServers", "ServerStatus"]


@dataclass(frozen=True)
class ServerStatus:
    """One server as ``%cowork mcp`` lists it."""

    name: str
    transport: str  # stdio | http
    target: str  # the command line or the URL
    state: ServerState
    approval: ApprovalMode
    tools: tuple[str, ...]  # as the model sees them (mcp__NAME__TOOL)
    restarts: int
    error: str


class McpServers:
    """The configured servers of one session."""

    def __init__(
        self, configs: Iterable[McpServerConfig], *, cwd: Path, trusted: bool = True
    ) -> None:
        self._cwd = cwd
        self._connections = {c.name: ServerConnection(c, cwd=cwd) for c in configs}
        self._tools: dict[str, tuple[McpTool, ...]] = {}  # attached, by server
        self._lock = asyncio.Lock()
        self.trusted = True
        if not trusted:
            for connection in self._project():
                connection.state = "needs trust"
            self.trusted = False
        self._hold_forbidden()

    @property
    def configs(self) -> tuple[McpServerConfig, ...]:
        """The servers as configured, in order."""
        return tuple(c.config for c in self._connections.values())

    async def update(self, configs: Iterable[McpServerConfig], *, trusted: bool) -> tuple[str, ...]:
        """The folder's trust or its ``loom.yaml`` changed: the project's servers become
        exactly ``configs``' (built from the bytes the trust was decided on), a server
        whose configuration changed is stopped and replaced, never started as it was
        read before; then they may start (trusted) or are stopped. The names of the tools
        that went away (to take out of the tool list)."""
        async with self._lock:
            self.trusted = trusted
            wanted = {c.name: c for c in configs if c.origin == "project"}
            gone: list[str] = []
            for name, connection in list(self._connections.items()):
                if connection.config.origin == "project" and wanted.get(name) != connection.config:
                    await connection.close()
                    del self._connections[name]
                    gone += [t.spec.name for t in self._tools.pop(name, ())]
            for name, config in wanted.items():
                self._connections.setdefault(name, ServerConnection(config, cwd=self._cwd))
            for connection in self._project():
                if trusted and connection.state == "needs trust":
                    connection.state = "not started"
                elif not trusted:
                    await connection.stop()
                    connection.state, connection.error = "needs trust", ""
            self._hold_forbidden()
            return tuple(gone)

    def __len__(self) -> int:
        return len(self._connections)

    def secrets(self) -> tuple[str, ...]:
        """Every server's ``env`` and ``headers`` values."""
        return tuple(s for c in self._connections.values() for s in c.config.secrets())

    async def start(self) -> list[str]:
        """Start the servers not started yet, together; a line for each that failed."""
        async with self._lock:
            self._hold_forbidden()  # the policy as it is now
            pending = [c for c in self._connections.values() if c.state == "not started"]
            await asyncio.gather(*(c.start() for c in pending))
        return [f"MCP server {c.config.name} {c.error}" for c in pending if c.state == "failed"]

    def attach(self, registry: ToolRegistry) -> bool:
        """Add the tools of running servers not added yet; whether ``registry`` grew."""
        taken = set(registry.names())
        grew = False
        for name, connection in self._connections.items():
            if name in self._tools or connection.state != "running":
                continue
            tools = []
            for remote in connection.tools:
                model_name = tool_name(name, remote.name, taken)
                taken.add(model_name)
                tools.append(McpTool(connection, remote, model_name, self._crashed))
            self._tools[name] = tuple(tools)
            for tool in tools:
                registry.add(tool)
            grew = grew or bool(tools)
        return grew

    async def restart(self, name: str) -> None:
        """Start ``name`` again (``%cowork mcp --restart NAME``), whatever its state."""
        connection = self._connections.get(name)
        if connection is None:
            known = ", ".join(self._connections) or "none"
            raise LoomError(f"No MCP server named {name!r} in loom.yaml (configured: {known}).")
        if connection.state == "needs trust":
            raise LoomError(
                f"The MCP server {name} comes from this folder's loom.yaml, which you have not "
                "trusted: %cowork trust shows what it runs and trusts the folder."
            )
        policy = managed_policy()
        if not policy.allows_server(name):
            raise PolicyRefusedError(f"The MCP server {name} is {policy.server_refusal(name)}.")
        async with self._lock:
            connection.restarts = 0
            await connection.start()

    def status(self) -> tuple[ServerStatus, ...]:
        """Each server's state and tools."""
        rows = []
        for name, c in self._connections.items():
            attached = self._tools.get(name)
            tools = (
                tuple(t.spec.name for t in attached)
                if attached is not None
                else tuple(tool_name(name, r.name, set()) for r in c.tools)
            )
            rows.append(
                ServerStatus(
                    name=name,
                    transport=c.config.transport,
                    target=c.redact(c.describe_target()),
                    state=c.state,
                    approval=c.config.approval,
                    tools=tools,
                    restarts=c.restarts,
                    error=c.error,
                )
            )
        return tuple(rows)

    def _hold_forbidden(self) -> None:
        """Servers the managed policy does not list are ``not allowed`` (never started);
        one it lists again may start. A broken policy file raises (fail closed)."""
        policy = managed_policy()
        for name, connection in self._connections.items():
            if not policy.allows_server(name):
                if connection.state in ("not started", "failed", "dead", "stopped"):
                    connection.state = "not allowed"  # a running one stops with the session
                connection.error = policy.server_refusal(name)
            elif connection.state == "not allowed":
                connection.state, connection.error = "not started", ""

    def _project(self) -> list[ServerConnection]:
        return [c for c in self._connections.values() if c.config.origin == "project"]

    async def close(self) -> None:
        """Stop every server (the kernel's coworker is closing)."""
        await asyncio.gather(*(c.close() for c in self._connections.values()))

    async def _crashed(
        self, connection: ServerConnection, tool: str, generation: int, reason: str
    ) -> str:
        """A call found its server dead: restart it once, and say so to the model."""
        name = connection.config.name
        async with self._lock:
            if connection.generation != generation:  # another call restarted it already
                return (
                    f"The MCP server {name} stopped during this {tool} call and was restarted "
                    f"since; the call did not complete. Call it again only if repeating it is safe."
                )
            tail = connection.stderr_tail()
            why = connection.redact(f"{reason}{f'; its stderr ended with: {tail}' if tail else ''}")
            await connection.stop()
            if connection.restarts >= 1:
                connection.state, connection.error = "dead", f"stopped twice; last: {why}"
                return (
                    f"The MCP server {name} stopped again during {tool} ({why}). It was "
                    f"restarted once already, so it stays stopped; its tools are unavailable. "
                    f"Tell the person; they can start it with `%cowork mcp --restart {name}`."
                )
            connection.restarts += 1
            await connection.start()
        if connection.state == "running":
            return (
                f"The MCP server {name} stopped during {tool} ({why}); the call did not "
                f"complete. The server was restarted and runs again: call the tool again only "
                f"if repeating it is safe."
            )
        return (
            f"The MCP server {name} stopped during {tool} ({why}), and restarting it failed: "
            f"{connection.error}. Its tools are unavailable; tell the person."
        )
