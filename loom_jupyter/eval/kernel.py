"""One task's real kernel, driven through ``jupyter_client`` as a notebook page would.

A cell runs until the kernel is idle again, the task's deadline passes, the kernel dies
or the run is stopped (Ctrl-C); each is a :class:`TaskCell` status, never an exception.
While a cell runs, an approval question on stdin is answered "no" (nobody is there to
answer it) and remembered, and the notebook page (:mod:`loom_jupyter.eval.page`), when
the task has one, answers the kernel's notebook requests over a subshell.
"""

from __future__ import annotations

import contextlib
import queue
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import threading
    from pathlib import Path

    from jupyter_client.blocking.client import BlockingKernelClient
    from jupyter_client.manager import KernelManager

    from loom_jupyter.eval.page import NotebookPage

__all__ = ["CellStatus", "EvalKernel", "TaskCell"]

CellStatus = Literal["ok", "error", "timeout", "dead", "stopped"]
_POLL_S = 0.05


@dataclass(frozen=True)
class TaskCell:
    """How a cell ended: its status, the error it raised, what it printed, and the
    approval questions the harness said no to."""

    status: CellStatus
    error: str = ""
    output: str = ""
    refused: tuple[str, ...] = ()


@dataclass
class _Seen:
    error: str = ""
    output: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def run(self, status: CellStatus, error: str = "") -> TaskCell:
        text = "".join(self.output)
        return TaskCell(status, error or self.error, text, tuple(self.refused))


class EvalKernel:
    """A python3 kernel started in ``folder`` with ``env``; every wait ends by ``deadline``
    (a ``time.monotonic()`` value) or when ``stop`` is set."""

    def __init__(
        self,
        folder: Path,
        env: dict[str, str],
        *,
        deadline: float,
        stop: threading.Event,
        page: NotebookPage | None = None,
        log: Path | None = None,
    ) -> None:
        self.folder, self.env, self.deadline, self.stop, self.page = (
            folder,
            env,
            deadline,
            stop,
            page,
        )
        self.log = log  # the kernel's own stdout and stderr go here, not to the terminal
        self._km: KernelManager | None = None
        self._kc: BlockingKernelClient | None = None
        self._subshell: str | None = None

    def start(self) -> TaskCell:
        """Start the kernel and wait until it answers (``timeout``/``dead`` if it does not)."""
        from jupyter_client.manager import KernelManager

        self._km = KernelManager(kernel_name="python3")
        if self.log is None:
            self._km.start_kernel(env=self.env, cwd=str(self.folder))
        else:
            with self.log.open("ab") as out:  # the kernel keeps its own copy of the handle
                self._km.start_kernel(env=self.env, cwd=str(self.folder), stdout=out, stderr=out)
        self._kc = self._km.client()
        self._kc.start_channels()
        while True:  # in slices: Ctrl-C and the deadline are heard while it starts
            if self.stop.is_set():
                return TaskCell("stopped", "stopped (Ctrl-C)")
            if self._left() <= 0:
                return TaskCell("timeout", "the kernel did not start in time")
            try:
                self._kc.wait_for_ready(timeout=max(min(self._left(), 1.0), 0.1))
            except (RuntimeError, TimeoutError):
                if not self._km.is_alive():
                    return TaskCell("dead", "the kernel died while starting")
                continue
            return TaskCell("ok")

    def open_page(self) -> None:
        """Open the page's ``loom`` comm on a kernel subshell (after Loom is loaded)."""
        if self.page is None:
            return
        kc = self._client()
        request = kc.session.msg("create_subshell_request", {})
        kc.control_channel.send(request)
        with contextlib.suppress(queue.Empty, KeyError):
            reply = kc.get_control_msg(timeout=max(min(self._left(), 30.0), 0.1))
            self._subshell = str(reply["content"]["subshell_id"])
        content = {"comm_id": self.page.comm_id, "target_name": "loom", "data": self.page.hello()}
        self._shell_send("comm_open", content, subshell=False)  # the kernel is idle now
        self._await_welcome()

    def _await_welcome(self) -> None:
        """Wait until the kernel greets the page (then the cell tools reach it)."""
        kc = self._client()
        while not self.stop.is_set() and self._left() > 0 and self.alive():
            try:
                msg = kc.get_iopub_msg(timeout=_POLL_S)
            except queue.Empty:
                continue
            if self._serve_page(msg):
                return

    def run(self, code: str) -> TaskCell:
        """Run ``code`` as a cell until the kernel is idle again (or the deadline, death, stop)."""
        kc = self._client()
        msg_id = kc.execute(code, allow_stdin=True)
        seen = _Seen()
        while True:
            if self.stop.is_set():
                return seen.run("stopped", "stopped (Ctrl-C)")
            if self._left() <= 0:
                return seen.run("timeout")
            self._answer_stdin(seen)
            try:
                msg = kc.get_iopub_msg(timeout=_POLL_S)
            except queue.Empty:
                if not self.alive():
                    return seen.run("dead", "the kernel died")
                continue
            if self._serve_page(msg) or msg["parent_header"].get("msg_id") != msg_id:
                continue
            if _idle(msg):
                return seen.run("error" if seen.error else "ok")
            _note(msg, seen)

    def alive(self) -> bool:
        return self._km is not None and bool(self._km.is_alive())

    def shutdown(self, *, now: bool = False) -> None:
        """Stop the kernel: politely (Loom lets go of its session) unless ``now``."""
        if self._kc is not None:
            self._kc.stop_channels()
        if self._km is not None:
            with contextlib.suppress(Exception):  # already dead, or half started
                self._km.shutdown_kernel(now=now or not self._km.is_alive())
        self._km = self._kc = None
        self._subshell = None

    def _left(self) -> float:
        return self.deadline - time.monotonic()

    def _client(self) -> BlockingKernelClient:
        assert self._kc is not None, "start the kernel first"
        return self._kc

    def _answer_stdin(self, seen: _Seen) -> None:
        kc = self._client()
        try:
            request = kc.get_stdin_msg(timeout=0.005)
        except queue.Empty:
            return
        seen.refused.append(str(request["content"].get("prompt", "")))
        kc.input("n")  # nobody is there to approve: the task says what it needed

    def _serve_page(self, msg: dict[str, Any]) -> bool:
        """Answer a message the kernel sent the page; whether ``msg`` was one."""
        page = self.page
        content = msg.get("content") or {}
        if page is None or msg["msg_type"] != "comm_msg" or content.get("comm_id") != page.comm_id:
            return False
        reply = page.answer(content.get("data") or {})
        if reply is not None:
            self._shell_send("comm_msg", {"comm_id": page.comm_id, "data": reply})
        return True

    def _shell_send(self, kind: str, content: dict[str, Any], *, subshell: bool = True) -> None:
        kc = self._client()
        msg = kc.session.msg(kind, content)
        if subshell and self._subshell is not None:
            msg["header"]["subshell_id"] = self._subshell
        kc.shell_channel.send(msg)


def _idle(msg: dict[str, Any]) -> bool:
    return bool(msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle")


def _note(msg: dict[str, Any], seen: _Seen) -> None:
    kind, content = msg["msg_type"], msg["content"]
    if kind == "error":
        seen.error = f"{content.get('ename', 'Error')}: {content.get('evalue', '')}"
    elif kind == "stream":
        seen.output.append(str(content.get("text", "")))
    elif kind in ("display_data", "execute_result"):
        seen.output.append(str((content.get("data") or {}).get("text/plain", "")) + "\n")
