"""A sidebar's view of a real kernel: comm messages, subshells and cells over one set of channels.

One reader collects every iopub and shell message, so a test can wait on comm
events and on a cell's ``execute_reply`` in one loop and compare their order.
"""

from __future__ import annotations

import os
import queue
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from jupyter_client.manager import start_new_kernel

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from jupyter_client.blocking.client import BlockingKernelClient
    from jupyter_client.manager import KernelManager

    from loom_jupyter.testing import FakeAnthropic

T = TypeVar("T")
TIMEOUT = 120.0


@dataclass
class Wire:
    """A kernel, its client, and every message it sent, in arrival order."""

    km: KernelManager
    kc: BlockingKernelClient
    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (channel, msg)

    # -- reading -----------------------------------------------------------------

    def pump(self) -> None:
        """Move what arrived on iopub and shell into the log."""
        for channel, get in (("iopub", self.kc.get_iopub_msg), ("shell", self.kc.get_shell_msg)):
            while True:
                try:
                    self.log.append((channel, get(timeout=0.02)))
                except queue.Empty:
                    break

    def wait(self, found: Callable[[], T | None], what: str, timeout: float = TIMEOUT) -> T:
        """Pump until ``found()`` returns something truthy."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            value = found()
            if value:
                return value
        raise TimeoutError(f"waited {timeout:.0f}s for {what}")

    def comm_events(self, comm_id: str) -> list[dict[str, Any]]:
        """The data of every comm message the kernel sent on ``comm_id``."""
        return [
            msg["content"]["data"]
            for channel, msg in self.log
            if channel == "iopub"
            and msg["msg_type"] == "comm_msg"
            and msg["content"]["comm_id"] == comm_id
        ]

    def events(self, comm_id: str, kind: str) -> list[dict[str, Any]]:
        """The comm messages of one ``type`` the kernel sent on ``comm_id``."""
        return [e for e in self.comm_events(comm_id) if e["type"] == kind]

    def position(self, test: Callable[[str, dict[str, Any]], bool], start: int = 0) -> int:
        """The log index of the first message from ``start`` on passing ``test`` (-1: none)."""
        found = (i for i, (ch, msg) in enumerate(self.log) if i >= start and test(ch, msg))
        return next(found, -1)

    # -- cells ---------------------------------------------------------------------

    def execute(self, code: str) -> str:
        """Start a cell; returns its msg id (wait with :meth:`reply_of`)."""
        return str(self.kc.execute(code))

    def reply_of(self, msg_id: str) -> dict[str, Any]:
        """Wait for the cell's execute_reply content."""
        return self.wait(lambda: self._reply(msg_id), f"execute_reply of {msg_id}")

    def _reply(self, msg_id: str) -> dict[str, Any] | None:
        for channel, msg in self.log:
            if channel == "shell" and msg["parent_header"].get("msg_id") == msg_id:
                return dict(msg["content"])
        return None

    def run(self, code: str) -> dict[str, Any]:
        """Run a cell to its end."""
        return self.reply_of(self.execute(code))

    def typed(
        self, code: str, answer: Callable[[str], str] | Sequence[str] = ()
    ) -> tuple[str, list[str]]:
        """Run a cell to its end (iopub idle) with stdin, answering each prompt it asks —
        from ``answer(prompt)``, or the next of ``answer``'s words; its printed text (streams
        and plain-text displays) and the prompts it asked, in order."""
        words = list(answer) if not callable(answer) else []
        reply: Callable[[str], str] = answer if callable(answer) else lambda _: words.pop(0)
        msg_id = str(self.kc.execute(code, allow_stdin=True))
        prompts: list[str] = []

        def done() -> bool:
            try:
                request = self.kc.get_stdin_msg(timeout=0.02)
            except queue.Empty:
                return self._idle(msg_id)
            prompts.append(request["content"]["prompt"])
            self.kc.input(reply(prompts[-1]))
            return False

        self.wait(done, f"the end of {code!r}")
        assert self.reply_of(msg_id)["status"] == "ok", code
        return self._printed(msg_id), prompts

    def _idle(self, msg_id: str) -> bool:
        return any(
            channel == "iopub"
            and msg["msg_type"] == "status"
            and msg["content"]["execution_state"] == "idle"
            and msg["parent_header"].get("msg_id") == msg_id
            for channel, msg in self.log
        )

    def _printed(self, msg_id: str) -> str:
        return "".join(
            msg["content"].get("text", "") + msg["content"].get("data", {}).get("text/plain", "")
            for channel, msg in self.log
            if channel == "iopub"
            and msg["msg_type"] in ("stream", "display_data", "execute_result")
            and msg["parent_header"].get("msg_id") == msg_id
        )

    def value(self, expression: str) -> str:
        """The repr of an expression in the kernel."""
        msg_id = self.execute(expression)
        assert self.reply_of(msg_id)["status"] == "ok"
        result = self.wait(lambda: self._result(msg_id), f"the value of {expression!r}")
        return str(result["content"]["data"]["text/plain"])

    def _result(self, msg_id: str) -> dict[str, Any] | None:
        for channel, msg in self.log:
            if (
                channel == "iopub"
                and msg["msg_type"] == "execute_result"
                and msg["parent_header"].get("msg_id") == msg_id
            ):
                return msg
        return None

    # -- subshells and comms ------------------------------------------------------

    def subshell(self) -> str:
        """A new kernel subshell's id (JEP 91, on the control channel)."""
        request = self.kc.session.msg("create_subshell_request", {})
        self.kc.control_channel.send(request)
        reply = self.kc.get_control_msg(timeout=TIMEOUT)
        return str(reply["content"]["subshell_id"])

    def open_comm(
        self, hello: dict[str, Any], subshell: str | None = None, target: str = "loom"
    ) -> str:
        """Open a comm on ``target`` (a page's ``loom`` unless told) with ``hello``; its id."""
        comm_id = uuid.uuid4().hex
        content = {"comm_id": comm_id, "target_name": target, "data": hello}
        self._shell_send("comm_open", content, subshell)
        return comm_id

    def send(self, comm_id: str, data: dict[str, Any], subshell: str | None = None) -> None:
        """A comm message from the sidebar."""
        self._shell_send("comm_msg", {"comm_id": comm_id, "data": data}, subshell)

    def close_comm(self, comm_id: str) -> None:
        """The front closes its comm."""
        self._shell_send("comm_close", {"comm_id": comm_id, "data": {}}, None)

    def _shell_send(self, kind: str, content: dict[str, Any], subshell: str | None) -> None:
        msg = self.kc.session.msg(kind, content)
        if subshell is not None:
            msg["header"]["subshell_id"] = subshell
        self.kc.shell_channel.send(msg)

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)


def hello(**fields: Any) -> dict[str, Any]:
    """A hello message (first open)."""
    return {
        "type": "hello",
        "protocol": 1,
        "notebook_path": "",
        "since_seq": None,
        "kernel_session": None,
        "client": "lab",
        **fields,
    }


def start_wire(fake: FakeAnthropic, notebook: Path, config: Path, approval: str) -> Wire:
    """A kernel on ``notebook`` with the extension loaded, talking to ``fake``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        JPY_SESSION_NAME=str(notebook),
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="test-key",
        LOOM_APPROVAL=approval,
        XDG_CONFIG_HOME=str(config),
    )
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(notebook.parent))
    wire = Wire(km, kc)
    assert wire.run("%load_ext loom_jupyter")["status"] == "ok"
    return wire
