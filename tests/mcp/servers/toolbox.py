"""A real MCP server for the tests, written with the official SDK (``MCPServer``).

``python toolbox.py stdio`` serves over stdin/stdout; ``python toolbox.py http PORTFILE``
binds 127.0.0.1 on a free port, writes the port to PORTFILE once it listens, and
serves streamable HTTP at ``/mcp``. ``python toolbox.py broken`` exits at once (a
server that cannot start).

Tools: ``echo``, ``add``, ``big`` (a text of N bytes), ``picture`` (a PNG),
``slow`` (sleeps), ``die`` (the process exits mid-call), ``env_value`` (reads the
environment, to show that secrets from loom.yaml are redacted), ``pid``, ``fails`` (a tool
error).
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import sys
from pathlib import Path

from mcp.server.mcpserver import Image, MCPServer

# A 1x1 red PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
)

server = MCPServer("toolbox")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def big(size: int) -> str:
    """A text of exactly ``size`` characters."""
    line = "0123456789abcdefghijklmnopqrstuvwxyz" * 2 + "\n"
    return (line * (size // len(line) + 1))[:size]


@server.tool()
def picture() -> Image:
    """A small PNG."""
    return Image(data=PNG, format="png")


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep for ``seconds``, then answer."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def die() -> str:
    """The server process exits in the middle of the call."""
    sys.stdout.flush()
    os._exit(3)


@server.tool()
def env_value(name: str) -> str:
    """The value of an environment variable of the server process."""
    return os.environ.get(name, "<unset>")


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def fails() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


def serve_http(port_file: str) -> None:
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)

    async def main() -> None:
        async def announce() -> None:
            while not web.started:  # noqa: ASYNC110 - uvicorn has no event for it
                await anyio.sleep(0.02)
            tmp = Path(port_file + ".tmp")
            tmp.write_text(str(port))  # noqa: ASYNC240 - a few bytes, once
            tmp.replace(port_file)  # noqa: ASYNC240

        async with anyio.create_task_group() as group:
            group.start_soon(announce)
            await web.serve(sockets=[sock])

    anyio.run(main)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "broken":
        print("toolbox: refusing to start", file=sys.stderr)
        sys.exit(2)
    if mode == "http":
        serve_http(sys.argv[2])
    else:
        server.run("stdio")
