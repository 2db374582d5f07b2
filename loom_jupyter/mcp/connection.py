"""One MCP server: its process or URL, its client session, its state.

The official ``mcp`` SDK (2.x) is imported here only, and only when a server starts:
``%load_ext`` and a session without ``mcp_servers`` never load it. The SDK's client
lives in anyio task groups that must be left by the task that entered them, so each
server has one runner task (:meth:`ServerConnection._run`) that enters the client,
lists the tools and then waits to be stopped; calls come from the agent's tasks and
are raced against that runner, so a server that dies mid-call (its runner ends, or
the SDK reports the connection closed) is seen at once instead of hanging the turn.

A stdio server runs in the notebook's folder with the SDK's small default
environment (``PATH``, ``HOME``...) plus its ``env`` from loom.yaml; what it writes
to stderr goes to a temporary file whose tail explains a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from loom_jupyter.errors import ToolError
from loom_jupyter.tools.output import redact

if TYPE_CHECKING:
    from contextlib import AsyncExitStack
    from pathlib import Path
    from typing import TextIO

    from mcp import Client
    from mcp_types import CallToolResult

    from loom_jupyter.settings import McpServerConfig

__all__ = ["RemoteTool", "ServerConnection", "ServerGone", "ServerState"]

ServerState = Literal[
    "not started",
    "needs trust",
    "not allowed",  # the organisation's managed policy does not list it (DESIGN §16)
    "starting",
    "running",
    "failed",
    "dead",
    "stopped",
]

MAX_EVENT_BYTES = 64 * 1024 * 1024
"""The largest single message accepted from an HTTP server (the SDK's default is 1 MB,
too small for a big tool result; the result is capped for the model afterwards)."""
_MAX_LIST_PAGES = 50  # tools/list pages read from one server
# To start and list the tools. A server's `timeout` is a tool call's: a start (imports,
# npx or uvx fetching the server) is another matter, on a busy machine too.
_START_SECONDS = 60.0
_STOP_SECONDS = 10.0  # the SDK bounds a stdio shutdown (stdin close, TERM, KILL) by ~6 s
_CALL_GRACE_SECONDS = 5.0  # past the SDK's own per-call timeout, before we give up on it
_STDERR_TAIL = 1_500
_FIRST = asyncio.FIRST_COMPLETED


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]


class ServerGone(Exception):
    """The server's process or connection ended (a crash, not a tool's error)."""


class ServerConnection:
    """One configured server; never raises from :meth:`start` (the state says why)."""

    def __init__(self, config: McpServerConfig, *, cwd: Path) -> None:
        self.config = config
        self.cwd = cwd
        self.state: ServerState = "not started"
        self.error = ""  # why it failed or died (redacted)
        self.tools: tuple[RemoteTool, ...] = ()
        self.restarts = 0
        self.generation = 0  # bumped by every start: a call knows which connection it used
        self._client: Client | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._ended = ""  # how the runner ended, when it did
        self._stderr: TextIO | None = None

    @property
    def alive(self) -> bool:
        """Whether calls can be sent now."""
        runner = self._runner
        return self.state == "running" and runner is not None and not runner.done()

    def describe_target(self) -> str:
        """``python server.py`` or the URL, for tables and approval prompts."""
        config = self.config
        if config.command is not None:
            return " ".join((config.command, *config.args))
        return config.url or ""

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect and list the tools within 60 s (a call's ``timeout`` does not bound the
        start); on failure the state is ``failed`` and :attr:`error` says why."""
        await self.stop()
        self.state, self.error, self._ended = "starting", "", ""
        self.generation += 1
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self._runner = loop.create_task(
            self._run(ready, self._stop), name=f"loom-mcp-{self.config.name}"
        )
        limit = _START_SECONDS
        try:
            await asyncio.wait({ready, self._runner}, timeout=limit, return_when=_FIRST)
        except asyncio.CancelledError:
            await self.stop()
            raise
        if ready.done() and not ready.cancelled() and ready.exception() is None:
            self.state = "running"
            return
        if ready.done() and not ready.cancelled():
            reason = _describe(ready.exception())
        elif self._runner.done():
            reason = self._ended or "the server ended before it answered"
        else:
            reason = f"no answer within {limit:g} s"
        await self.stop()
        self.state, self.error = "failed", self._with_stderr(f"could not start: {reason}")

    async def stop(self) -> None:
        """Stop the server (the SDK closes stdin, then terminates the process tree)."""
        runner, stop = self._runner, self._stop
        self._runner, self._stop, self._client = None, None, None
        if runner is not None and stop is not None and not runner.done():
            stop.set()
            done, _ = await asyncio.wait({runner}, timeout=_STOP_SECONDS)
            if not done:
                runner.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait({runner}, timeout=_STOP_SECONDS)
        if self.state in ("running", "starting"):
            self.state = "stopped"

    async def close(self) -> None:
        """Stop for good (the kernel's coworker is closing)."""
        await self.stop()
        self.state = "stopped"
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _run(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        from contextlib import AsyncExitStack

        try:
            async with AsyncExitStack() as stack:
                client = await self._connect(stack)
                self.tools = await _list_tools(client)
                self._client = client
                ready.set_result(None)
                await stop.wait()
        except BaseException as exc:  # anyio's groups, a cancellation: each ends the runner
            self._ended = _describe(exc)
            if not ready.done():
                ready.set_exception(ServerGone(self._ended))
        finally:
            self._client = None

    async def _connect(self, stack: AsyncExitStack) -> Client:
        from mcp import Client

        config = self.config
        if config.command is not None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            if self._stderr is None:
                self._stderr = tempfile.TemporaryFile(  # noqa: SIM115 - closed by close()
                    "w+", encoding="utf-8", errors="replace", prefix="loom-mcp-"
                )
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env), cwd=self.cwd
            )
            transport: Any = stdio_client(params, errlog=self._stderr)
        else:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            assert config.url is not None
            http = await stack.enter_async_context(
                create_mcp_http_client(headers=dict(config.headers))
            )
            transport = streamable_http_client(
                config.url, http_client=http, max_sse_event_size=MAX_EVENT_BYTES
            )
        client = Client(transport, read_timeout_seconds=config.timeout)
        return await stack.enter_async_context(client)

    # -- calls ----------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call ``tool``; :class:`ServerGone` when the server died, :class:`ToolError` for a
        timeout or an error the server answered with."""
        client, runner = self._client, self._runner
        if client is None or runner is None or runner.done():
            raise ServerGone(self._ended or "the server is not running")
        timeout = self.config.timeout
        call = asyncio.ensure_future(
            client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        )
        try:
            await asyncio.wait(
                {call, runner}, timeout=timeout + _CALL_GRACE_SECONDS, return_when=_FIRST
            )
        finally:
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call
        if call.cancelled() or not call.done():
            if runner.done():
                raise ServerGone(self._ended or "the server's connection ended")
            raise ToolError(self._timed_out(tool))
        error = call.exception()
        if error is None:
            return call.result()
        if runner.done() or _connection_lost(error):
            raise ServerGone(self._ended or _describe(error))
        if getattr(error, "code", None) == _REQUEST_TIMEOUT:
            raise ToolError(self._timed_out(tool))
        raise ToolError(
            self.redact(
                f"The MCP server {self.config.name} answered {tool} with an error: "
                f"{_describe(error)}"
            )
        )

    def _timed_out(self, tool: str) -> str:
        return (
            f"{tool} on the MCP server {self.config.name} gave no result within its "
            f"{self.config.timeout:g} s timeout (`timeout` of this server in loom.yaml); the "
            f"call was cancelled and the server keeps running."
        )

    # -- reports --------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` without this server's ``env``/``headers`` values."""
        return redact(text, sorted(self.config.secrets(), key=len, reverse=True))

    def stderr_tail(self) -> str:
        """The end of what the stdio server wrote to stderr (redacted)."""
        log = self._stderr
        if log is None:
            return ""
        try:
            log.flush()
            size = log.seek(0, 2)
            log.seek(max(0, size - _STDERR_TAIL))
            tail = log.read().strip()
            log.seek(0, 2)
        except (OSError, ValueError):
            return ""
        return self.redact(tail)

    def _with_stderr(self, text: str) -> str:
        tail = self.stderr_tail()
        return self.redact(f"{text}\nIts stderr ended with:\n{tail}" if tail else text)


_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001


def _connection_lost(error: BaseException) -> bool:
    if getattr(error, "code", None) == _CONNECTION_CLOSED:
        return True
    names = {cls.__name__ for cls in type(error).__mro__}
    lost = {"ClosedResourceError", "BrokenResourceError", "EndOfStream", "TransportError"}
    return isinstance(error, OSError) or bool(names & lost)


def _describe(error: BaseException | None) -> str:
    """A one-line reason, looking inside exception groups (anyio's task groups raise them)."""
    if error is None:
        return "unknown error"
    inner = getattr(error, "exceptions", None)
    if inner:
        return "; ".join(_describe(e) for e in inner[:3])
    if isinstance(error, asyncio.CancelledError):
        return "stopped"
    if isinstance(error, ServerGone):
        return str(error)
    message = str(getattr(error, "message", "") or error).strip()
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


async def _list_tools(client: Client) -> tuple[RemoteTool, ...]:
    found: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(_MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            schema = dict(tool.input_schema or {})
            schema.setdefault("type", "object")
            description = tool.description or tool.title or ""
            found.append(RemoteTool(tool.name, description, _plain_json(schema)))
        cursor = page.next_cursor
        if not cursor:
            break
    return tuple(found)


def _plain_json(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as plain JSON values (a stable prefix byte for byte)."""
    loaded: dict[str, Any] = json.loads(json.dumps(schema, default=str))
    return loaded
