"""One kernel, through Jupyter Server's kernel websocket, and the ``loom-agent`` comm on it.

:class:`KernelLink` opens ``/api/kernels/ID/channels`` with the server's token
(:class:`~loom_jupyter.outside.kernel_channels.KernelChannels`, on a kernel subshell when the
kernel has them, so a call is answered while the person's cell runs, as the sidebar's are),
opens the outside agents' own comm target ``loom-agent`` (DESIGN §14; the pages' is
``loom``) with a ``hello`` that names the outside agent, and loads Loom the sidebar's safe
way (``jupyter/autoload.py``) when the kernel answers the comm with ``comm_close`` (no such
target yet). The kernel answers the ``hello`` with ``pages``: the pages open on the notebook
and whether the person is looking at it (:attr:`KernelLink.attention`; :meth:`KernelLink.look`
asks again). Calls go out as ``outside_call`` and come back as ``outside_result``. A kernel
that restarts or dies while a call waits fails that call with a word saying so; the next call
opens the comm again.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loom_jupyter.host.wire.protocol import PROTOCOL_MAJOR, PROTOCOL_MINOR
from loom_jupyter.jupyter.sidebar import AGENT_TARGET
from loom_jupyter.outside.kernel_channels import REPLY_SECONDS, KernelChannels
from loom_jupyter.outside.servers import BridgeError

if TYPE_CHECKING:
    from loom_jupyter.outside.servers import ServerInfo

__all__ = ["CALL_SECONDS", "Attention", "KernelGone", "KernelLink"]

CALL_SECONDS = 1800.0
"""How long a call may take (an approval waits for the person) before the bridge gives up."""
LOAD_SECONDS = 120.0
"""How long loading Loom may take (it waits for a running cell on the main shell)."""
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
        self.kernel_id = kernel_id
        self.notebook = notebook
        self.client = client
        self._channels = KernelChannels(server, kernel_id, notebook, self)
        self._results: dict[str, asyncio.Future[dict[str, Any]]] = {}  # request id -> result
        self._comm: str | None = None
        self._comm_closed: asyncio.Future[None] | None = None
        self._hello_answer: asyncio.Future[dict[str, Any]] | None = None  # `pages` or a notice
        self.attention: Attention | None = None  # the kernel's last `pages` (None: not said)
        self.gone: str | None = None  # why the kernel went away (a restart, death)

    # -- lifecycle ----------------------------------------------------------------------

    async def connect(self, *, load: bool = True) -> None:
        """Open the websocket, a subshell when the kernel has them, and the comm; with
        ``load=False`` a kernel without Loom is left as it is (the link is not usable)."""
        await self._channels.open()
        if load:
            await self._open_comm()
        else:
            await self._try_comm()

    async def close(self) -> None:
        """Close the comm, the subshell and the websocket."""
        alive = self.gone is None
        if alive and not self.closed and self._channels.opened and self._comm is not None:
            self._channels.send("shell", "comm_close", {"comm_id": self._comm, "data": {}})
        self._channels.close(kernel_alive=alive)

    @property
    def closed(self) -> bool:
        """The websocket was closed (by :meth:`close`, or from the other end)."""
        return self._channels.closed

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
            self._channels.send("control", "kernel_info_request", {})  # checked on arrival

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
        msg_id = self._channels.send("shell", "comm_open", content, subshell=True)
        await self._channels.until_idle(msg_id)  # a comm_close comes on iopub before this idle
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
        reply = await self._channels.request(
            "shell", "execute_request", content, timeout=LOAD_SECONDS
        )
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
        content = {"comm_id": self._comm, "data": data}
        self._channels.send("shell", "comm_msg", content, subshell=True)

    # -- what the channels tell (ChannelListener) -----------------------------------------

    def iopub(self, kind: str, content: dict[str, Any]) -> None:
        """The comm's messages and its close."""
        if content.get("comm_id") != self._comm:
            return
        if kind == "comm_close":
            if self._comm_closed is not None:  # refused as it opened: no such target
                if not self._comm_closed.done():
                    self._comm_closed.set_result(None)
            elif self.gone is None:  # Loom was unloaded: the next call opens the comm again
                self._gone("unloaded")
        elif kind == "comm_msg":
            self._received(content.get("data") or {})

    def kernel_gone(self, state: str) -> None:
        """A restart or death while the comm is open fails what waits."""
        if self._comm is not None and self.gone is None:
            self._gone(state)

    def connection_lost(self, error: BridgeError) -> None:
        """The websocket closed: the hello and the calls waiting fail."""
        self._fail(error)

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
        error = KernelGone(why)
        self._fail(error)
        self._channels.fail(error)

    def _fail(self, error: BridgeError) -> None:
        if self._hello_answer is not None and not self._hello_answer.done():
            self._hello_answer.set_exception(error)
        for future in list(self._results.values()):
            if not future.done():
                future.set_exception(error)
