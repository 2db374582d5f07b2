"""Loom's Jupyter Server extension, in a real server process with a real kernel websocket.

The installed ``jupyter_server_config.d/loom_jupyter.json`` enables it; it swaps in a
kernel websocket connection whose socket has ``TCP_NODELAY`` set (Nagle's algorithm
delayed each kernel answer by a client's delayed ACK, ~40 ms). The server runs in a
child process that reads the server side of its own websocket.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.kernel

PROBE = textwrap.dedent(
    """
    import asyncio, gc, json, socket, sys
    from jupyter_server.serverapp import ServerApp
    from tornado.httpclient import AsyncHTTPClient, HTTPRequest
    from tornado.websocket import websocket_connect

    async def main():
        app = ServerApp()
        probe_socket = sys.argv[1] == "socket"
        app.initialize(argv=sys.argv[2:])
        cls = app.web_app.settings["kernel_websocket_connection_class"]
        found = {"connection_class": f"{cls.__module__}.{cls.__qualname__}", "nodelay": None}
        if probe_socket:
            base = f"127.0.0.1:{app.port}"
            made = await AsyncHTTPClient().fetch(HTTPRequest(
                f"http://{base}/api/kernels?token=t", method="POST", body="{}"))
            kernel = json.loads(made.body)["id"]
            ws = await websocket_connect(f"ws://{base}/api/kernels/{kernel}/channels?token=t")
            conn = next(o for o in gc.get_objects() if isinstance(o, cls))
            sock = conn.websocket_handler.ws_connection.stream.socket
            found["nodelay"] = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
            ws.close()
            await app.kernel_manager.shutdown_kernel(kernel, now=True)
        print(json.dumps(found))

    asyncio.run(main())
    """
)


def probe(root: Path, *extra: str, socket: bool = False) -> dict[str, object]:
    """Start a server in a child process with ``extra`` arguments; what it found."""
    argv = [
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port=0",
        "--IdentityProvider.token=t",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.open_browser=False",
        *extra,
    ]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "socket" if socket else "class", *argv],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=root,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_installed_server_sets_nodelay_on_kernel_websockets(tmp_path: Path) -> None:
    found = probe(tmp_path, socket=True)
    assert found == {
        "connection_class": "loom_jupyter.jupyter.server.PromptKernelWebsocket",
        "nodelay": True,
    }


def test_a_configured_connection_class_is_left_alone(tmp_path: Path) -> None:
    own = "jupyter_server.gateway.connections.GatewayWebSocketConnection"
    found = probe(tmp_path, f"--ServerApp.kernel_websocket_connection_class={own}")
    assert found["connection_class"] == own


def test_switched_off_it_leaves_jupyter_servers_own(tmp_path: Path) -> None:
    found = probe(tmp_path, "--ServerApp.jpserver_extensions=loom_jupyter=False")
    expected = "jupyter_server.services.kernels.connection.channels.ZMQChannelsWebsocketConnection"
    assert found["connection_class"] == expected
