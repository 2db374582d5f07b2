"""A real ipykernel driven through jupyter_client, for the reliability suite."""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jupyter_client.manager import start_new_kernel

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from jupyter_client.blocking.client import BlockingKernelClient
    from jupyter_client.manager import KernelManager

TIMEOUT = 120.0


@dataclass
class Reply:
    """Every iopub message one cell produced, in order, and the stdin prompts it showed."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    status: str = ""

    def of(self, *kinds: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["msg_type"] in kinds]

    def displays(self) -> list[dict[str, str]]:
        """The data bundles of every display and display update."""
        return [m["content"]["data"] for m in self.of("display_data", "update_display_data")]

    def text(self) -> str:
        """Streams, the plain text of displays and results, and tracebacks."""
        parts = []
        for m in self.messages:
            content = m["content"]
            if m["msg_type"] == "stream":
                parts.append(content["text"])
            elif m["msg_type"] in ("display_data", "update_display_data", "execute_result"):
                parts.append(content["data"].get("text/plain", ""))
            elif m["msg_type"] == "error":
                parts.append(f"{content['ename']}: {content['evalue']}")
        return "\n".join(parts)


@dataclass
class Kernel:
    """A started kernel and its client."""

    km: KernelManager
    kc: BlockingKernelClient

    @classmethod
    def start(cls, env: dict[str, str], cwd: Path, **popen: Any) -> Kernel:
        km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(cwd), **popen)
        return cls(km, kc)

    def run(
        self,
        code: str,
        *,
        interrupt_at_prompt: bool = False,
        interrupt_when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> Reply:
        """Execute ``code`` until idle.

        With ``interrupt_at_prompt`` the kernel is interrupted when the cell asks
        on stdin; with ``interrupt_when``, at the first iopub message it accepts.
        """
        msg_id = self.kc.execute(code, allow_stdin=interrupt_at_prompt)
        reply = Reply()
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if interrupt_at_prompt and not reply.prompts:
                self._interrupt_at_prompt(reply)
            try:
                msg = self.kc.get_iopub_msg(timeout=0.05)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                reply.status = self._status(msg_id)
                return reply
            reply.messages.append(msg)
            if interrupt_when is not None and interrupt_when(msg):
                interrupt_when = None
                self.km.interrupt_kernel()
        raise TimeoutError(f"cell did not finish: {code[:80]!r}")

    def _interrupt_at_prompt(self, reply: Reply) -> None:
        try:
            request = self.kc.get_stdin_msg(timeout=0.01)
        except queue.Empty:
            return
        reply.prompts.append(request["content"]["prompt"])
        self.km.interrupt_kernel()

    def _status(self, msg_id: str) -> str:
        while True:
            shell = self.kc.get_shell_msg(timeout=TIMEOUT)
            if shell["parent_header"].get("msg_id") == msg_id:
                return str(shell["content"]["status"])

    def value(self, expression: str) -> str:
        """The repr of an expression evaluated in the kernel."""
        results = self.run(expression).of("execute_result")
        assert results, expression
        return str(results[0]["content"]["data"]["text/plain"])

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)
