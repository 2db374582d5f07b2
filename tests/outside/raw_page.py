"""A Loom sidebar page, played straight over ZMQ beside ``loom-jupyter mcp``.

It speaks protocol 1.3 on the ``loom`` comm as the labextension does: its ``hello`` says
whether the notebook is on screen, it answers every ``ping`` at once (while ``answering``:
a browser tab that closed without closing its comm answers nothing), and it may answer
approval cards. A thread of its own reads the kernel's iopub, since the bridge's calls run
on the test's event loop meanwhile; every wait is on a condition.
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from jupyter_client.blocking.client import BlockingKernelClient

WAIT_SECONDS = 240.0


class RawPage:
    """One page on one kernel: its comm, what it heard, and a thread that answers pings."""

    def __init__(self, client: BlockingKernelClient, *, on_screen: bool = True) -> None:
        self.client = client
        self.comm = uuid.uuid4().hex
        self.on_screen = on_screen
        self.answering = True  # False: the tab is gone, its comm never closed
        self.decide: str | None = None  # answer approval cards so ("allow"/"deny"), or not
        self.heard: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._running = True
        self._thread = threading.Thread(target=self._pump, daemon=True)

    def open(self) -> RawPage:
        """Open the comm with a page's hello and wait for the welcome."""
        hello = {
            "type": "hello",
            "protocol": 1,
            "minor": 3,
            "notebook_path": "",
            "client": "lab",
            "documents": False,
            "agent": "",
            "on_screen": self.on_screen,
        }
        self._shell("comm_open", {"comm_id": self.comm, "target_name": "loom", "data": hello})
        self._thread.start()
        self.wait(lambda: self.of("welcome"), "the page's welcome")
        return self

    def send(self, data: dict[str, Any]) -> None:
        self._shell("comm_msg", {"comm_id": self.comm, "data": data})

    def close(self) -> None:
        """The page closes its comm (a tab closed the ordinary way)."""
        self._shell("comm_close", {"comm_id": self.comm, "data": {}})

    def stop(self) -> None:
        self._running = False
        self._thread.join(timeout=30)

    def of(self, kind: str) -> list[dict[str, Any]]:
        with self._lock:
            return [data for data in self.heard if data.get("type") == kind]

    def wait(self, found: Callable[[], Any], what: str) -> Any:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            value = found()
            if value:
                return value
            time.sleep(0.02)
        raise TimeoutError(f"waited {WAIT_SECONDS:.0f} s for {what}")

    # -- the page's thread ----------------------------------------------------------------

    def _pump(self) -> None:
        while self._running:
            try:
                msg = self.client.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                continue
            content = msg.get("content") or {}
            if msg["msg_type"] != "comm_msg" or content.get("comm_id") != self.comm:
                continue
            data = content.get("data") or {}
            with self._lock:
                self.heard.append(data)
            self._answer(data)

    def _answer(self, data: dict[str, Any]) -> None:
        if data.get("type") == "ping" and self.answering:
            self.send({"type": "pong", "ping_id": data["ping_id"], "on_screen": self.on_screen})
        elif data.get("type") == "approval" and self.decide is not None and self.answering:
            self.send(
                {"type": "approve", "request_id": data["request_id"], "decision": self.decide}
            )

    def _shell(self, kind: str, content: dict[str, Any]) -> None:
        with self._lock:
            self.client.shell_channel.send(self.client.session.msg(kind, content))
