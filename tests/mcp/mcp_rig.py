"""Real MCP servers (``servers/toolbox.py``, written with the SDK's ``MCPServer``) for the
client's tests: started as stdio processes or on 127.0.0.1 over streamable HTTP.

This folder has no ``__init__.py`` on purpose: as a package it would be importable as
``mcp`` (``tests/`` is on ``sys.path``) and hide the SDK. Its modules are imported by
their own names (``from mcp_rig import ...``); the fixture lives in ``conftest.py``."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loom_jupyter.settings import McpServerConfig, Settings, _mcp_servers
from loom_jupyter.tools.base import ToolContext
from loom_jupyter.tools.local_kernel import LocalKernel

if TYPE_CHECKING:
    from collections.abc import Callable

TOOLBOX = Path(__file__).resolve().parent / "servers" / "toolbox.py"
START_DEADLINE = 90.0  # generous: a loaded 2-core machine; tests wait on conditions


def stdio_server(name: str = "box", *, mode: str = "stdio", **options: Any) -> McpServerConfig:
    """The toolbox as a stdio server named ``name``."""
    entry = {"command": sys.executable, "args": [str(TOOLBOX), mode], **options}
    (config,) = _mcp_servers({name: entry}, "test")
    return config


def http_config(name: str, url: str, **options: Any) -> McpServerConfig:
    (config,) = _mcp_servers({name: {"url": url, **options}}, "test")
    return config


def context(tmp_path: Path, *servers: McpServerConfig, **settings: Any) -> ToolContext:
    return ToolContext(
        notebook_dir=tmp_path,
        settings=Settings(mcp_servers=servers, **settings),
        kernel=LocalKernel(),
    )


async def wait_for(condition: Callable[[], bool], what: str, deadline: float = 60.0) -> None:
    """Poll ``condition`` until it holds (no fixed sleeps: the machine may be slow)."""
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie child of ours is gone for our purposes.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (OSError, IndexError):
        return True
    return state == "Z"
