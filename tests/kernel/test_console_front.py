"""Issue 40.5: a front that cannot update displays sees the whole answer.

A console-like client drives a real kernel that knows no notebook (no ``JPY_SESSION_NAME``):
it sends cells as ``jupyter console`` does (``allow_stdin``, no cell id) and shows what a
console shows — streams, and each display's text as it first came; ``update_display_data``
is ignored. One kernel serves the module; the tests run in order.
"""

from __future__ import annotations

import os
import queue
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from jupyter_client.manager import start_new_kernel

from loom_jupyter.jupyter.cell.render import ANSWER_MIME

if TYPE_CHECKING:
    from collections.abc import Iterator

    from jupyter_client.blocking.client import BlockingKernelClient
    from jupyter_client.manager import KernelManager

    from loom_jupyter.testing import FakeAnthropic

pytestmark = pytest.mark.kernel

TIMEOUT = 120.0
ANSWER = " ".join(f"word{i}" for i in range(40))  # streamed in twenty pieces


@dataclass
class Console:
    """A kernel and a client that sends cells the way ``jupyter console`` does."""

    km: KernelManager
    kc: BlockingKernelClient

    def run(self, code: str, *, cell_id: str | None = None) -> list[dict[str, Any]]:
        """Run a cell to its end; every iopub message it caused. ``cell_id``: sent as a
        notebook page sends it (``metadata.cellId``), to compare."""
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": True,
            "stop_on_error": True,
        }
        metadata = {"cellId": cell_id} if cell_id else {}
        request = self.kc.session.msg("execute_request", content, metadata=metadata)
        self.kc.shell_channel.send(request)
        return self._until_idle(request["header"]["msg_id"])

    def _until_idle(self, msg_id: str) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = []
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                msg = self.kc.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            messages.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return messages
        raise TimeoutError(f"the cell {msg_id} did not end")


def shown(messages: list[dict[str, Any]]) -> str:
    """What a console shows: streams and first displays as text, updates ignored."""
    parts = []
    for msg in messages:
        if msg["msg_type"] == "stream":
            parts.append(msg["content"]["text"])
        elif msg["msg_type"] in ("display_data", "execute_result"):
            parts.append(msg["content"]["data"].get("text/plain", "") + "\n")
    return "".join(parts)


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    from loom_jupyter.testing import FakeAnthropic

    with FakeAnthropic() as server:
        yield server


@pytest.fixture(scope="module")
def console(fake: FakeAnthropic, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    folder = tmp_path_factory.mktemp("console")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "LOOM_", "JPY_"))}
    env.update(
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="test-key",
        LOOM_APPROVAL="auto",
        XDG_CONFIG_HOME=str(folder / "config"),
        PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring",
    )
    km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(folder))
    started = Console(km, kc)
    assert any(m["msg_type"] == "status" for m in started.run("%load_ext loom_jupyter"))
    yield started
    kc.stop_channels()
    km.shutdown_kernel(now=False)


def test_a_console_sees_a_streamed_answer_and_its_tool_calls_whole(
    console: Console, fake: FakeAnthropic
) -> None:
    tool = {"type": "tool_use", "name": "run_python", "input": {"code": "print(6 * 7)"}}
    fake.add({"content": [tool]}, ANSWER)
    messages = console.run("%cowork what is six times seven?")
    text = shown(messages)
    assert ANSWER in flat(text)  # every piece, not the first one
    assert "run_python" in text
    assert "✓" in text  # the call's end, which a display update would have carried
    assert not [m for m in messages if m["msg_type"] == "update_display_data"]


def test_a_notebook_page_in_the_same_kernel_still_gets_one_display_updated_in_place(
    console: Console, fake: FakeAnthropic
) -> None:
    fake.add(ANSWER)
    messages = console.run("%cowork and once more", cell_id="a1b2c3")
    answers = [m for m in messages if ANSWER_MIME in m["content"].get("data", {})]
    assert answers[0]["msg_type"] == "display_data"
    assert answers[-1]["msg_type"] == "update_display_data"
    assert answers[-1]["content"]["data"][ANSWER_MIME]["markdown"] == ANSWER


def test_without_a_key_a_console_is_told_what_works_there(console: Console) -> None:
    console.run("import os\n_key = os.environ.pop('ANTHROPIC_API_KEY')")
    try:
        text = flat(shown(console.run("%cowork hello?")))
    finally:
        console.run("os.environ['ANTHROPIC_API_KEY'] = _key")
    assert "%cowork login here" in text
    assert "export ANTHROPIC_API_KEY=... in the shell before starting the kernel" in text
    assert "cell" not in text
    assert "sidebar" not in text


def test_a_restarted_console_names_the_conversation_it_resumes_and_how_to_start_anew(
    console: Console, fake: FakeAnthropic
) -> None:
    console.km.restart_kernel(now=False)
    console.kc.wait_for_ready(timeout=TIMEOUT)
    console.run("%load_ext loom_jupyter")
    fake.add("Still here.")
    text = flat(shown(console.run("%cowork are you still there?")))
    assert "resumed “what is six times seven?” (2 prompts), last active 20" in text
    assert "UTC; %cowork new starts a new one" in text
    assert "Still here." in text
