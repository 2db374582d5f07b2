"""MCP: the tools of the servers in loom.yaml's ``mcp_servers``, as ``mcp__NAME__TOOL``.

The client is the official ``mcp`` SDK (2.x), imported only when a server starts.
``connection.py`` holds one server (its runner task, calls raced against it, its
stderr); ``tool.py`` makes a server's tool one of loom's tools (approval per server,
results as text and image blocks); ``servers.py`` is a session's set of servers
(started together on first use, tools appended to the registry, restarted once after
a crash, stopped with the session); ``view.py`` renders them for ``%cowork mcp``.
This layer sits just above ``tools/`` and imports nothing of Jupyter.
"""

from __future__ import annotations

__all__: list[str] = []
