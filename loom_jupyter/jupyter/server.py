"""Loom's Jupyter Server extension: kernel websockets that send each message at once.

Jupyter Server leaves Nagle's algorithm on for the kernel websocket. A kernel answer
usually travels as a burst of small frames (``status: busy``, the reply or comm
message, ``status: idle``); with Nagle on, every frame after the first waits for the
browser to acknowledge the one before, and browsers delay that acknowledgement by up
to 40 ms. So a sidebar round trip that the kernel answers in 2 ms reached the page
after ~45 ms (``benchmarks/comm_path_bench.py``). This extension switches
``TCP_NODELAY`` on for each kernel websocket, which is what an interactive channel
wants; nothing else about the connection changes.

It is enabled by ``etc/jupyter/jupyter_server_config.d/loom_jupyter.json`` (installed
with the package) and steps aside when the server was configured with a connection
class of its own (a gateway, another extension).
"""

from __future__ import annotations

from typing import Any

from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

SETTING = "kernel_websocket_connection_class"


class PromptKernelWebsocket(ZMQChannelsWebsocketConnection):
    """Jupyter Server's own kernel websocket connection, with ``TCP_NODELAY`` set."""

    def connect(self) -> Any:
        """Switch Nagle's algorithm off, then connect as Jupyter Server does."""
        self.websocket_handler.set_nodelay(True)
        return super().connect()


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Use :class:`PromptKernelWebsocket` unless another connection class was configured."""
    settings = serverapp.web_app.settings
    if settings.get(SETTING) is not ZMQChannelsWebsocketConnection:
        serverapp.log.info("loom: kernel websocket left as configured (%s)", settings.get(SETTING))
        return
    settings[SETTING] = PromptKernelWebsocket
    serverapp.log.info("loom: kernel websockets send each message at once (TCP_NODELAY)")
