"""One kernel, through Jupyter Server's kernel websocket, and the ``loom-agent`` comm on it.

:class:`KernelLink` opens ``/api/kernels/ID/channels`` with the server's token, asks the
kernel for a subshell when it has them (so a call is answered while the person's cell
runs, as the sidebar's are), opens the outside agents' own comm target ``loom-agent``
(DESIGN §14; the pages' is ``loom``) with a ``hello`` that names the outside agent, and
loads Loom the sidebar's safe way (``jupyter/autoload.py``) when the kernel answers the comm
with ``comm_close`` (no such target yet). The kernel answers the ``hello`` with ``pages``:
the pages open on the notebook and whether the person is looking at it
(:attr:`KernelLink.attention`; :meth:`KernelLink.look` asks again). Calls go out as
``outside_call`` and come back as ``outside_result``. A kernel that restarts or dies while
a call waits fails that call with a word saying so; the next call opens the comm again.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from loom_jupyter.host.wire.protocol import PROTOCOL_MAJOR, PROTOCOL_MINOR
from loom_jupyter.jupyter.sidebar import AGENT_TARGET
from loom_jupyter.outside.servers import BridgeError

if TYPE_CHECKING:
    from loom_jupyter.outside.servers import ServerInfo

__all__ = ["CALL_SECONDS", "Attention", "KernelGone", "KernelLink"]

CALL_SECONDS = 1800.0
"""How long a call may take (an approval waits for the person) before the bridge gives up."""
REPLY_SECONDS = 60.0
"""How long a kernel may take to answer a request of the link's own (a subshell, a comm)."""
LOAD_SECONDS = 120.0
"""How long loading Loom may take (it waits for a running cell on the main shell)."""
GONE_STATES = frozenset({"restarting", "autorestarting", "starting", "dead"})
CHECK_SECONDS = 2.0
"""While a call waits, the kernel is asked this often (a ``kernel_info`` on its control
channel, answered even while code runs) whether it is still the same process: a restart's
own status messages can be missed while Jupyter Server reconnects to the new kernel."""


class KernelGone(BridgeError):
    """The kernel restarted or died while the link waited."""


@dataclass(frozen=True)
class Attention:
    """What the kernel says of the pages open on its notebook (its ``pages`` message)."""

    pages: int
    """Pages with the Loom sidebar on the notebook that answered just now."""
    on_screen: bool
    """One of them shows the notebook now."""
    focused_ago: float | None
    """Seconds since a page last brought the notebook on screen (None: never)."""

    @classmethod
    def read(cls, data: dict[str, Any]) -> Attention:
        """From a ``pages`` message (a field of the wrong type counts as absent)."""
        pages, ago = data.get("pages"), data.get("focused_ago")
        return cls(
            pages if isinstance(pages, int) and not isinstance(pages, bool) else 0,
            data.get("on_screen") is True,
            float(ago) if isinstance(ago, int | float) and not isinstance(ago, bool) else None,
        )


class KernelLink:
    """The ``loom-agent`` comm on one kernel, for one outside agent."""

    def __init__(self, server: ServerInfo, kernel_id: str, notebook: str, client: str) -> None:
        self.server = server
        self.kernel_id = kernel_id
        self.notebook = notebook
        self.client = client
        self.session = uuid.uuid4().hex
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._replies: dict[str, asyncio.Future[dict[str, Any]]] = {}  # msg id -> reply
        self._idle: dict[str, asyncio.Future[None]] = {}  # msg id -> iopub idle
        self._results: dict[str, asyncio.Future[dict[str, Any]]] = {}  # request id -> result
        self._comm: str | None = None
        self._comm_closed: asyncio.Future[None] | None = None
        self._hello_answer: asyncio.Future[dict[str, Any]] | None = None  # `pages` or a notice
        self._subshell: str | None = None
        self.attention: Attention | None = None  # the kernel's last `pages` (None: not said)
        self._process: str | None = None  # the kernel's message session: one per process
        self.closed = False
        self.gone: str | None = None  # why the kernel went away (a restart, death)

    # -- lifecycle ----------------------------------------------------------------------

    async def connect(self, *, load: bool = True) -> None:
        """Open the websocket, a subshell when the kernel has them, and the comm; with
        ``load=False`` a kernel without Loom is left as it is (the link is not usable)."""
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        url = self.server.ws(f"api/kernels/{self.kernel_id}/channels?session_id={self.session}")
        headers = {"Authorization": f"token {self.server.token}"} if self.server.token else {}
        try:
            self._ws = await websocket_connect(
                HTTPRequest(url, headers=headers, request_timeout=REPLY_SECONDS),
                max_message_size=256 * 1024 * 1024,
            )
        except Exception as exc:
            raise BridgeError(
                f"Could not connect to the kernel of {self.notebook} through the Jupyter Server "
                f"at {self.server.url} ({type(exc).__name__}: {exc}). If the kernel is dead, "
                "restart it in JupyterLab (Kernel > Restart Kernel), then call again."
            ) from None
        self._reader = asyncio.ensure_future(self._read())
        info = await self._request("shell", "kernel_info_request", {})
        self._process = (info.get("header") or {}).get("session") or None
        features = info.get("content", {}).get("supported_features") or []
        if "kernel subshells" in features:
            reply = await self._request("control", "create_subshell_request", {})
            self._subshell = reply.get("content", {}).get("subshell_id")
        if load:
            await self._open_comm()
        else:
            await self._try_comm()

    async def close(self) -> None:
        """Close the comm, the subshell and the websocket."""
        if not self.closed and self.gone is None and self._ws is not None:
            if self._comm is not None:
                self._send("shell", "comm_close", {"comm_id": self._comm, "data": {}})
            if self._subshell is not None:  # its thread in the kernel ends with it
                self._send("control", "delete_subshell_request", {"subshell_id": self._subshell})
        self.closed = True
        if self._ws is not None:
            self._ws.close()
        if self._reader is not None:
            self._reader.cancel()

    @property
    def usable(self) -> bool:
        """Open, and the comm not lost to a restart."""
        return not self.closed and self.gone is None and self._comm is not None

    # -- calls --------------------------------------------------------------------------

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One tool call through the kernel's host; its ``outside_result``."""
        if not self.usable:
            raise BridgeError("the link to the kernel is closed")
        request_id = uuid.uuid4().hex
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._results[request_id] = future
        message = {
            "type": "outside_call",
            "request_id": request_id,
            "client": self.client,
            "tool": tool,
            "input": arguments,
        }
        try:
            self._comm_send(message)
            return await self._answer(future)
        except TimeoutError:
            raise BridgeError(
                f"{tool} got no answer from the kernel of {self.notebook} in "
                f"{CALL_SECONDS:.0f} s (an approval may still be waiting in the Loom sidebar). "
                "Look at the notebook, then call again."
            ) from None
        finally:
            self._results.pop(request_id, None)

    async def _answer(self, future: asyncio.Future[dict[str, Any]]) -> dict[str, Any]:
        """The call's result; meanwhile the kernel is checked every :data:`CHECK_SECONDS`
        (a reply from another kernel process fails the call as a restart)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CALL_SECONDS
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError
            done, _ = await asyncio.wait({future}, timeout=min(CHECK_SECONDS, left))
            if done:
                return future.result()
            self._send("control", "kernel_info_request", {})  # its reply is checked on arrival

    # -- the comm -------------------------------------------------------------------------

    async def _open_comm(self) -> None:
        if await self._try_comm():
            return
        await self._load_loom()
        if not await self._try_comm():
            raise BridgeError(
                f"Loom loaded in the kernel of {self.notebook} but its comm did not open; "
                "restart the kernel in JupyterLab, then call again."
            )

    async def _try_comm(self) -> bool:
        """Open the comm and hear the kernel's answer to its ``hello``; False when the kernel
        closed it at once (no ``loom-agent`` target: Loom is not loaded)."""
        comm = uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        self._comm, self._comm_closed = comm, loop.create_future()
        self._hello_answer = loop.create_future()
        content = {"comm_id": comm, "target_name": AGENT_TARGET, "data": self._hello()}
        msg_id = self._send("shell", "comm_open", content, subshell=True)
        await self._until_idle(msg_id)  # a comm_close comes on iopub before this idle
        closed, self._comm_closed = self._comm_closed, None  # a later close: Loom unloaded
        if closed.done():
            self._comm = None
            return False
        await self._heard(self._hello_answer)
        return True

    async def look(self) -> Attention | None:
        """Ask the kernel again which pages are open and whether one shows the notebook."""
        if not self.usable:
            return None
        self._hello_answer = asyncio.get_running_loop().create_future()
        self._comm_send(self._hello())
        await self._heard(self._hello_answer)
        return self.attention

    def _hello(self) -> dict[str, Any]:
        return {
            "type": "hello",
            "protocol": PROTOCOL_MAJOR,
            "minor": PROTOCOL_MINOR,
            "notebook_path": "",
            "client": "mcp",
            "agent": self.client,
            "documents": False,
        }

    async def _heard(self, answer: asyncio.Future[dict[str, Any]]) -> None:
        """Wait for the ``hello``'s answer: ``pages``, or the notice of a kernel that cannot
        serve yet (its notebook not placed: every call will hear why)."""
        try:
            await asyncio.wait_for(asyncio.shield(answer), REPLY_SECONDS)
        except TimeoutError:
            raise BridgeError(
                f"The kernel of {self.notebook} did not answer Loom's hello in "
                f"{REPLY_SECONDS:.0f} s; it may be busy with a long cell. Call again later."
            ) from None

    async def _load_loom(self) -> None:
        """Load Loom into the kernel the sidebar's way: from where it is installed."""
        from loom_jupyter.jupyter.autoload import load_code

        content = {
            "code": load_code(),
            "silent": True,
            "store_history": False,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": False,
        }
        reply = await self._request("shell", "execute_request", content, timeout=LOAD_SECONDS)
        body = reply.get("content", {})
        if body.get("status") != "ok":
            raise BridgeError(
                f"Loom could not be loaded into the kernel of {self.notebook}: "
                f"{body.get('ename', 'error')}: {body.get('evalue', '')}. Install loom_jupyter "
                "into the kernel's Python (pip install loom_jupyter), or run %load_ext "
                "loom_jupyter in a cell, then call again."
            )

    def _comm_send(self, data: dict[str, Any]) -> None:
        assert self._comm is not None
        self._send("shell", "comm_msg", {"comm_id": self._comm, "data": data}, subshell=True)

    # -- the websocket ----------------------------------------------------------------------

    def _send(
        self, channel: str, kind: str, content: dict[str, Any], *, subshell: bool = False
    ) -> str:
        msg_id = uuid.uuid4().hex
        header: dict[str, Any] = {
            "msg_id": msg_id,
            "msg_type": kind,
            "session": self.session,
            "username": "loom-jupyter-mcp",
            "date": datetime.now(timezone.utc).isoformat(),
            "version": "5.4",
        }
        if subshell and self._subshell is not None:
            header["subshell_id"] = self._subshell
        message = {
            "header": header,
            "parent_header": {},
            "metadata": {},
            "content": content,
            "buffers": [],
            "channel": channel,
        }
        if self._ws is None or self.closed:
            raise self._lost()
        self._ws.write_message(json.dumps(message))
        return msg_id

    async def _request(
        self, channel: str, kind: str, content: dict[str, Any], timeout: float = REPLY_SECONDS
    ) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        msg_id = self._send(channel, kind, content)
        self._replies[msg_id] = future
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise BridgeError(
                f"The kernel of {self.notebook} did not answer {kind} in {timeout:.0f} s; it may "
                "be busy with a long cell or stuck. Look at the notebook, then call again."
            ) from None
        finally:
            self._replies.pop(msg_id, None)

    async def _until_idle(self, msg_id: str) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._idle[msg_id] = future
        try:
            await asyncio.wait_for(future, REPLY_SECONDS)
        except TimeoutError:
            raise BridgeError(
                f"The kernel of {self.notebook} did not take the Loom comm in "
                f"{REPLY_SECONDS:.0f} s; it may be busy with a long cell. Call again later."
            ) from None
        finally:
            self._idle.pop(msg_id, None)

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
        self._fail(self._lost())

    def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg.get("msg_type") or msg.get("header", {}).get("msg_type")
        parent = (msg.get("parent_header") or {}).get("msg_id")
        content = msg.get("content") or {}
        channel = msg.get("channel")
        if kind == "status" and content.get("execution_state") in GONE_STATES:
            if self._comm is not None and self.gone is None:  # Jupyter Server's own word
                self._gone(str(content["execution_state"]))
            return
        sender = (msg.get("header") or {}).get("session")
        if sender and self._process and sender != self._process:
            if self._comm is not None and self.gone is None:
                self._gone("restarting")  # another kernel process answers: it was restarted
            return
        if channel in ("shell", "control") and parent in self._replies:
            future = self._replies[parent]
            if not future.done():
                future.set_result(msg)
            return
        if channel != "iopub":
            return
        if kind == "status":
            state = content.get("execution_state")
            if state == "idle" and parent in self._idle and not self._idle[parent].done():
                self._idle[parent].set_result(None)
        elif kind == "comm_close" and content.get("comm_id") == self._comm:
            if self._comm_closed is not None:  # refused as it opened: no such target
                if not self._comm_closed.done():
                    self._comm_closed.set_result(None)
            elif self.gone is None:  # Loom was unloaded: the next call opens the comm again
                self._gone("unloaded")
        elif kind == "comm_msg" and content.get("comm_id") == self._comm:
            self._received(content.get("data") or {})

    def _received(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind == "outside_result":
            future = self._results.get(str(data.get("request_id")))
            if future is not None and not future.done():
                future.set_result(data)
        elif kind == "pages":
            self.attention = Attention.read(data)
            self._answered(data)
        elif kind == "notice" and data.get("level") == "error":
            self._answered(data)
            for future in self._results.values():  # the kernel refused what this link sent
                if not future.done():
                    future.set_exception(
                        BridgeError(f"The kernel refused the call: {data.get('message')}")
                    )

    def _answered(self, data: dict[str, Any]) -> None:
        if self._hello_answer is not None and not self._hello_answer.done():
            self._hello_answer.set_result(data)

    def _gone(self, state: str) -> None:
        self.gone = state
        if state == "dead":
            why = (
                f"The kernel of {self.notebook} died while the call ran. Restart it in "
                "JupyterLab (Kernel > Restart Kernel); variables are gone, and rebuild_variables "
                "can make them again from the archive."
            )
        elif state == "unloaded":
            why = (
                f"Loom was unloaded from the kernel of {self.notebook} while the call ran; "
                "call again (it is loaded again)."
            )
        else:
            why = (
                f"The kernel of {self.notebook} restarted while the call ran: what it was doing "
                "stopped and the notebook's variables are gone. Call again (rebuild_variables "
                "makes variables again from the archive)."
            )
        self._fail(KernelGone(why))

    def _lost(self) -> BridgeError:
        return BridgeError(
            f"The connection to the kernel of {self.notebook} closed (the kernel was shut down, "
            "or the Jupyter Server stopped). Open the notebook again, then call again."
        )

    def _fail(self, error: BridgeError) -> None:
        if self._hello_answer is not None and not self._hello_answer.done():
            self._hello_answer.set_exception(error)
        for waiting in (self._results, self._replies):
            for future in list(waiting.values()):
                if not future.done():
                    future.set_exception(error)
        for idle in list(self._idle.values()):
            if not idle.done():
                idle.set_exception(error)
