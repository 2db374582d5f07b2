"""Real ipykernels driven through jupyter_client, talking to one fake Messages API per module."""

from __future__ import annotations

import contextlib
import os
import queue
import sqlite3
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_client.manager import KernelManager, start_new_kernel

from loom_jupyter.jupyter.cell.render import ANSWER_MIME
from loom_jupyter.testing import FakeAnthropic
from loom_jupyter.testing.kernel_zygote import cold_kernels

from .sidebar_wire import Wire, start_wire

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from jupyter_client.blocking.client import BlockingKernelClient

TIMEOUT = 60.0


@dataclass
class Reply:
    """Everything a cell produced on iopub, in order."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    status: str = ""
    payload: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)

    @property
    def stdout(self) -> str:
        return "".join(m["content"]["text"] for m in self.of("stream"))

    def of(self, *kinds: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["msg_type"] in kinds]

    def markdown(self) -> list[str]:
        """The answer's markdown, each time it was shown (Loom's own MIME type)."""
        kinds = ("display_data", "update_display_data")
        return [
            m["content"]["data"][ANSWER_MIME]["markdown"]
            for m in self.of(*kinds)
            if ANSWER_MIME in m["content"]["data"]
        ]

    def text(self) -> str:
        """Stream text plus the plain-text form of every display."""
        parts = []
        for m in self.messages:
            if m["msg_type"] == "stream":
                parts.append(m["content"]["text"])
            elif m["msg_type"] in ("display_data", "update_display_data", "execute_result"):
                parts.append(m["content"]["data"].get("text/plain", ""))
            elif m["msg_type"] == "error":
                parts.append("\n".join(m["content"]["traceback"]))
        return "\n".join(parts)


@dataclass
class Kernel:
    """A started kernel and its client."""

    km: KernelManager
    kc: BlockingKernelClient

    def run(
        self,
        code: str,
        *,
        answers: list[str] | None = None,
        on_message: Callable[[dict[str, Any]], None] | None = None,
    ) -> Reply:
        """Execute ``code``; collect its iopub messages until idle, answering input() prompts."""
        msg_id = self.kc.execute(code, allow_stdin=answers is not None)
        reply = Reply()
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if answers is not None:
                self._answer(reply, answers)
            try:
                msg = self.kc.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                content = self._shell_reply(msg_id)
                reply.status, reply.payload = content["status"], content.get("payload", [])
                return reply
            reply.messages.append(msg)
            if on_message is not None:
                on_message(msg)
        raise TimeoutError(f"cell did not finish: {code!r}")

    def _shell_reply(self, msg_id: str) -> dict[str, Any]:
        while True:
            shell = self.kc.get_shell_msg(timeout=TIMEOUT)
            if shell["parent_header"].get("msg_id") == msg_id:
                return dict(shell["content"])

    def _answer(self, reply: Reply, answers: list[str]) -> None:
        try:
            request = self.kc.get_stdin_msg(timeout=0.01)
        except queue.Empty:
            return
        reply.prompts.append(request["content"]["prompt"])
        self.kc.input(answers.pop(0))

    def value(self, expression: str) -> str:
        """The repr of an expression evaluated in the kernel."""
        reply = self.run(expression)
        results = reply.of("execute_result")
        assert results, reply.text()
        return str(results[0]["content"]["data"]["text/plain"])

    def shutdown(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    """One fake Messages API for the module; tests add their script entries."""
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    """A notebook path in a fresh folder (the file itself need not exist)."""
    return tmp_path / "nb.ipynb"


@pytest.fixture
def start_kernel(
    fake: FakeAnthropic, notebook: Path, tmp_path: Path
) -> Iterator[Callable[..., Kernel]]:
    """Start kernels on ``notebook`` (shut down at the end of the test)."""
    started: list[Kernel] = []

    def start(
        *, api_key: str | None = "test-key", approval: str | None = "auto", cold: bool = False
    ) -> Kernel:
        """``cold``: a kernel that has imported nothing beforehand (the suite's others fork
        with the anthropic SDK imported, tests/conftest.py), for a test of what it imports."""
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))
        }
        env.update(
            JPY_SESSION_NAME=str(notebook),
            ANTHROPIC_BASE_URL=fake.base_url,
            XDG_CONFIG_HOME=str(tmp_path / "config"),
        )
        if api_key:
            env["ANTHROPIC_API_KEY"] = api_key
        if approval:
            env["LOOM_APPROVAL"] = approval
        with cold_kernels() if cold else contextlib.nullcontext():
            km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(notebook.parent))
        kernel = Kernel(km, kc)
        started.append(kernel)
        return kernel

    yield start
    for kernel in started:
        if kernel.km.is_alive():
            kernel.shutdown()


def archive_rows(notebook: Path, sql: str) -> list[tuple[Any, ...]]:
    """Read the notebook's archive with plain sqlite3 (read-only)."""
    path = notebook.parent / ".loom" / f"{notebook.name}.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute(sql).fetchall()


@pytest.fixture(scope="module")
def wire_notebook(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The notebook a module's sidebar kernel serves, in a folder of its own."""
    return tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2]) / "nb.ipynb"


@pytest.fixture(scope="module")
def wire(fake: FakeAnthropic, wire_notebook: Path) -> Iterator[Wire]:
    """One kernel with Loom loaded (approval ``auto``), shared by a module's sidebar tests."""
    started = start_wire(fake, wire_notebook, wire_notebook.parent / "config", approval="auto")
    yield started
    started.shutdown()
