"""Loom for outside agents (DESIGN §14): ``loom-jupyter mcp``, a stdio MCP server.

An outside agent (Claude Code, any MCP client) calls Loom's tools in the live kernel of a
notebook open on a running Jupyter Server. The server speaks to that kernel only through
Jupyter Server's authenticated kernel API (REST ``/api/sessions``, the websocket
``/api/kernels/ID/channels``) and the ``loom`` comm: no port or listener of its own. Each
call runs through the kernel's host (``host/services/outside.py``) as the agent's own call
would: approvals, trust, the floor, the archive, the sidebar.

- ``servers``      which Jupyter Server (the runtime folder, or ``--server-url``) and
                   which of its notebooks
- ``jupyter_api``  its REST API, with the token; errors that say what to do
- ``kernel_channels``  one kernel's websocket: its channels, replies, idles and process
- ``kernel_link``  the ``loom-agent`` comm on it (Loom loaded when needed)
- ``tools``        the tools as MCP lists them: Loom's names, inputs and descriptions
- ``server``       the MCP server (the official ``mcp`` SDK) and ``loom-jupyter mcp``
"""
