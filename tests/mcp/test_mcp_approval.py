"""Per-server approval: ``ask`` follows the session, ``auto`` runs, ``read-only`` refuses;
a read-only session refuses every MCP tool."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from mcp_rig import stdio_server

from loom_jupyter.mcp.connection import RemoteTool, ServerConnection
from loom_jupyter.mcp.tool import McpTool
from loom_jupyter.messages import ToolUseBlock
from loom_jupyter.tools.approval import ApprovalPolicy, ApprovalRequest

if TYPE_CHECKING:
    from pathlib import Path


def tool(tmp_path: Path, approval: str) -> McpTool:
    connection = ServerConnection(stdio_server("srv", approval=approval), cwd=tmp_path)
    remote = RemoteTool("echo", "Echo.", {"type": "object", "properties": {}})

    async def never(*_: object) -> str:
        raise AssertionError("not called")

    return McpTool(connection, remote, "mcp__srv__echo", never)


@pytest.mark.parametrize(
    ("session", "server", "allowed", "asked"),
    [
        ("ask", "ask", True, True),
        ("ask", "auto", True, False),
        ("ask", "read-only", False, False),
        ("auto", "ask", True, False),
        ("auto", "read-only", False, False),
        ("read-only", "auto", False, False),
        ("read-only", "ask", False, False),
    ],
)
async def test_the_server_approval_and_the_session_mode(
    tmp_path: Path, session: str, server: str, allowed: bool, asked: bool
) -> None:
    requests: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> str:
        requests.append(request)
        return "yes"

    policy = ApprovalPolicy(session, approver=approver)  # type: ignore[arg-type]
    mcp_tool = tool(tmp_path, server)
    assert policy.will_ask(mcp_tool) == asked
    decision = await policy.check(mcp_tool, ToolUseBlock("c1", "mcp__srv__echo", {"text": "hi"}))
    assert decision.allowed == allowed
    assert bool(requests) == asked
    if asked:
        assert requests[0].summary.startswith("call echo on the MCP server srv (stdio: ")
        assert '"text": "hi"' in requests[0].detail
    if not allowed:
        assert "read-only" in decision.reason
