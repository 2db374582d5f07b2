"""One kernel's websocket through Jupyter Server: its channels, replies, idles and process.

:class:`KernelChannels` opens ``/api/kernels/ID/channels`` with the server's token, learns
which kernel process answers (``kernel_info``), asks for a subshell when the kernel has
them, sends Jupyter messages and waits for their replies and their ``idle``. What is not
its own it hands to a :class:`ChannelListener`: the kernel going away (Jupyter Server's
status word, or another process answering), the iopub messages of comms, a lost connection.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Protocol

from loom_jupyter.outside.servers import BridgeError

if TYPE_CHECKING:
    from loom_jupyter.outside.servers import ServerInfo

__all__ = ["REPLY_SECONDS", "ChannelListener", "KernelChannels", "jupyter_message"]

REPLY_SECONDS = 60.0
"""How long a kernel may take to answer a request of the link's own (a subshell, a comm)."""
GONE_STATES = frozenset({"restarting", "autorestarting", "starting", "dead"})


class ChannelListener(Protocol):
    """What the channels tell the comm on them."""

    def kernel_gone(self, state: str) -> None:
        """The kernel restarted or died (``state``: a status word, or ``restarting``)."""

    def iopub(self, kind: str, content: dict[str, Any]) -> None:
        """An iopub message that is not a status (comms' opens, messages and closes)."""

    def connection_lost(self, error: BridgeError) -> None:
        """The websocket closed; every waiter of the channels' own has been told ``error``."""


class KernelChannels:
    """The websocket to one kernel, and what waits for the kernel's answers on it."""

    def __init__(
        self, server: ServerInfo, kernel_id: str, notebook: str, listener: ChannelListener
    ) -> None:
        self._server, self._kernel_id, self._notebook = server, kernel_id, notebook
        self._listener = listener
        self._session = uuid.uuid4().hex
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._replies: dict[str, asyncio.Future[dict[str, Any]]] = {}  # msg id -> reply
        self._idle: dict[str, asyncio.Future[None]] = {}  # msg id -> iopub idle
        self._subshell: str | None = None
        self._process: str | None = None  # the kernel's message session: one per process
        self.closed = False

    @property
    def opened(self) -> bool:
        """The websocket was opened (it may have closed since)."""
        return self._ws is not None

    async def open(self) -> None:
        """Open the websocket, learn the kernel's process, and a subshell when it has them."""
        self._ws = await self._connect()
        self._reader = asyncio.ensure_future(self._read())
        info = await self.request("shell", "kernel_info_request", {})
        self._process = (info.get("header") or {}).get("session") or None
        features = info.get("content", {}).get("supported_features") or []
        if "kernel subshells" in features:
            reply = await self.request("control", "create_subshell_request", {})
            self._subshell = reply.get("content", {}).get("subshell_id")

    async def _connect(self) -> Any:
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        server = self._server
        url = server.ws(f"api/kernels/{self._kernel_id}/channels?session_id={self._session}")
        headers = {"Authorization": f"token {server.token}"} if server.token else {}
        try:
            return await websocket_connect(
                HTTPRequest(url, headers=headers, request_timeout=REPLY_SECONDS),
                max_message_size=256 * 1024 * 1024,
            )
        except Exception as exc:
            raise BridgeError(
                f"Could not connect to the kernel of {self._notebook} through the Jupyter Server "
                f"at {server.url} ({type(exc).__name__}: {exc}). If the kernel is dead, "
                "restart it in JupyterLab (Kernel > Restart Kernel), then call again."
            ) from None

    def close(self, *, kernel_alive: bool) -> None:
        """Close the websocket; a live kernel is told first to end the subshell's thread."""
        if kernel_alive and not self.closed and self._ws is not None and self._subshell:
            self.send("control", "delete_subshell_request", {"subshell_id": self._subshell})
        self.closed = True
        if self._ws is not None:
            self._ws.close()
        if self._reader is not None:
            self._reader.cancel()

    # -- sending --------------------------------------------------------------

    def send(
        self, channel: str, kind: str, content: dict[str, Any], *, subshell: bool = False
    ) -> str:
        """Send one message (on the subshell, if asked and there is one); its id."""
        on = self._subshell if subshell else None
        message = jupyter_message(channel, kind, content, session=self._session, subshell=on)
        if self._ws is None or self.closed:
            raise self.lost()
        self._ws.write_message(json.dumps(message))
        return str(message["header"]["msg_id"])

    async def request(
        self, channel: str, kind: str, content: dict[str, Any], timeout: float = REPLY_SECONDS
    ) -> dict[str, Any]:
        """Send one message and wait for its reply on the same channel."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        msg_id = self.send(channel, kind, content)
        self._replies[msg_id] = future
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise BridgeError(
                f"The kernel of {self._notebook} did not answer {kind} in {timeout:.0f} s; it "
                "may be busy with a long cell or stuck. Look at the notebook, then call again."
            ) from None
        finally:
            self._replies.pop(msg_id, None)

    async def until_idle(self, msg_id: str) -> None:
        """Wait until the kernel has done with ``msg_id`` (its iopub ``idle``)."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle[msg_id] = future
        try:
            await asyncio.wait_for(future, REPLY_SECONDS)
        except TimeoutError:
            raise BridgeError(
                f"The kernel of {self._notebook} did not take the Loom comm in "
                f"{REPLY_SECONDS:.0f} s; it may be busy with a long cell. Call again later."
            ) from None
        finally:
            self._idle.pop(msg_id, None)

    # -- receiving ------------------------------------------------------------

    async def _read(self) -> None:
        try:
            while True:
                raw = await self._ws.read_message()
                if raw is None:
                    break
                if isinstance(raw, str):
                    self._dispatch(json.loads(raw))
        except asyncio.CancelledError:
            raise
        except Exception:  # a broken connection: every waiter is told below
            pass
        self.closed = True
        error = self.lost()
        self.fail(error)
        self._listener.connection_lost(error)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg.get("msg_type") or msg.get("header", {}).get("msg_type")
        parent = (msg.get("parent_header") or {}).get("msg_id")
        content = msg.get("content") or {}
        channel = msg.get("channel")
        if kind == "status" and content.get("execution_state") in GONE_STATES:
            self._listener.kernel_gone(str(content["execution_state"]))  # Jupyter Server's word
            return
        sender = (msg.get("header") or {}).get("session")
        if sender and self._process and sender != self._process:
            self._listener.kernel_gone("restarting")  # another kernel process answers
            return
        if channel in ("shell", "control") and parent in self._replies:
            future = self._replies[parent]
            if not future.done():
                future.set_result(msg)
        elif channel == "iopub" and kind == "status":
            idle = self._idle.get(parent) if parent else None
            if content.get("execution_state") == "idle" and idle is not None and not idle.done():
                idle.set_result(None)
        elif channel == "iopub":
            self._listener.iopub(str(kind), content)

    def fail(self, error: BridgeError) -> None:
        """Every reply and idle still awaited fails with ``error``."""
        futures: list[asyncio.Future[Any]] = [*self._replies.values(), *self._idle.values()]
        for future in futures:
            if not future.done():
                future.set_exception(error)

    def lost(self) -> BridgeError:
        """The error of a closed connection."""
        return BridgeError(
            f"The connection to the kernel of {self._notebook} closed (the kernel was shut "
            "down, or the Jupyter Server stopped). Open the notebook again, then call again."
        )


def jupyter_message(
    channel: str,
    kind: str,
    content: dict[str, Any],
    *,
    session: str,
    username: str = "loom-jupyter-mcp",
    subshell: str | None = None,
) -> dict[str, Any]:
    """A Jupyter message (protocol 5.4) as the kernel websocket takes it, with a new id."""
    header: dict[str, Any] = {
        "msg_id": uuid.uuid4().hex,
        "msg_type": kind,
        "session": session,
        "username": username,
        "date": datetime.now(timezone.utc).isoformat(),
        "version": "5.4",
    }
    if subshell is not None:
        header["subshell_id"] = subshell
    return {
        "header": header,
        "parent_header": {},
        "metadata": {},
        "content": content,
        "buffers": [],
        "channel": channel,
    }
