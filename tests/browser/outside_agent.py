"""An outside agent beside a browser test: ``loom-jupyter mcp`` under the MCP SDK's client.

Playwright's sync API owns the test's thread, so the agent runs on an asyncio loop of its
own thread; :meth:`OutsideAgent.call` returns a future the test waits on while it drives
the page (an approval waits for a click there). Shared by the browser test and
``docs/make_outside_screenshot.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import concurrent.futures
    from collections.abc import Iterator
    from pathlib import Path

    from mcp import Client
    from mcp.types import CallToolResult

CALL_SECONDS = 240.0


class OutsideAgent:
    """``loom-jupyter mcp`` started as Claude Code starts it, on a loop of its own."""

    def __init__(self, runtime: Path, notebook: str | None, name: str = "claude-code") -> None:
        self._runtime = runtime
        self._notebook = notebook
        self._name = name
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._client: Client | None = None
        self._stack = contextlib.AsyncExitStack()

    def start(self) -> None:
        self._thread.start()
        self._submit(self._open()).result(timeout=CALL_SECONDS)

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._submit(self._stack.aclose()).result(timeout=60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=60)

    def call(self, tool: str, arguments: dict[str, Any]) -> concurrent.futures.Future[Any]:
        """Start a call; its future holds the ``CallToolResult``."""
        assert self._client is not None
        return self._submit(self._client.call_tool(tool, arguments))

    def _submit(self, coroutine: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    async def _open(self) -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.types import Implementation

        env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOM_", "JUPYTER_"))}
        env["JUPYTER_RUNTIME_DIR"] = str(self._runtime)
        chosen = ["--notebook", self._notebook] if self._notebook else []  # else: on screen
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "loom_jupyter.cli", "mcp", *chosen], env=env
        )
        client = Client(
            stdio_client(params),
            mode="legacy",
            client_info=Implementation(name=self._name, version="2.1.0"),
            read_timeout_seconds=CALL_SECONDS,
        )
        self._client = await self._stack.enter_async_context(client)


@contextlib.contextmanager
def outside_agent(runtime: Path, notebook: str | None) -> Iterator[OutsideAgent]:
    agent = OutsideAgent(runtime, notebook)
    agent.start()
    try:
        yield agent
    finally:
        agent.stop()


def text(result: CallToolResult) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)
