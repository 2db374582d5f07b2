"""%cowork in a real ipykernel (jupyter_client), against the fake Messages API."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from .conftest import archive_rows

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from loom_jupyter.testing import FakeAnthropic

    from .conftest import Kernel

pytestmark = pytest.mark.kernel


def _display_id(message: dict[str, Any]) -> str:
    return str(message["content"].get("transient", {}).get("display_id", ""))


def _request_text(fake: FakeAnthropic, index: int = -1) -> str:
    return json.dumps(fake.message_requests[index].body["messages"])


def test_load_prints_a_banner_and_the_answer_streams(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, notebook: Path
) -> None:
    kernel = start_kernel(cold=True)  # it tells what %load_ext imports
    loaded = kernel.run("%load_ext loom_jupyter")
    assert loaded.status == "ok"
    assert "nb.ipynb — new session" in loaded.stdout
    assert "%cowork sessions" in loaded.stdout
    assert kernel.value("'anthropic' in __import__('sys').modules") == "False"

    status = kernel.run("%cowork status")
    (panel,) = status.of("display_data")
    assert "Session state" in panel["content"]["data"]["text/html"]  # HTML, never a widget
    assert "Session: (none yet)" in panel["content"]["data"]["text/plain"]
    panel_id = panel["content"]["transient"]["display_id"]

    answer = " ".join(f"word{i}" for i in range(40))
    fake.add({"content": [answer], "delay": 0.1})
    turn = kernel.run("%cowork tell me something")
    assert turn.status == "ok"
    markdown = turn.markdown()
    assert len(markdown) >= 3  # one display, then several in-place updates
    assert markdown[-1] == answer
    assert turn.of("update_display_data")
    moved = [m for m in turn.of("update_display_data") if _display_id(m) == panel_id]
    assert "Prompts: 1" in moved[-1]["content"]["data"]["text/plain"]  # live, while it ran
    rows = archive_rows(
        notebook, "SELECT role, content, status FROM conversation_turns ORDER BY turn_number"
    )
    # The cell the person ran before (the `anthropic` check) comes first, as a system note.
    assert rows[0][0] == "system"
    assert "'anthropic' in __import__('sys').modules" in rows[0][1]
    assert rows[1:] == [
        ("user", "tell me something", "complete"),
        ("assistant", answer, "complete"),
    ]


def _tool_use(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"content": [{"type": "tool_use", "name": name, "input": tool_input}]}


def _tool_results(fake: FakeAnthropic) -> list[dict[str, Any]]:
    messages = fake.message_requests[-1].body["messages"]
    return [
        block
        for message in messages
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


PLOT = "import matplotlib.pyplot as plt\nplt.plot([3, 1, 2])"


def test_run_python_changes_the_user_namespace(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    kernel = start_kernel()
    kernel.run("%load_ext loom_jupyter")
    fake.add(_tool_use("run_python", code=f"x = 41 + 1\nprint('x =', x)\n{PLOT}"), "x is 42.")
    turn = kernel.run("%cowork please set x and plot something")
    assert turn.status == "ok"
    assert "run_python" in turn.text()
    assert any("image/png" in m["content"]["data"] for m in turn.of("display_data"))
    assert kernel.value("x") == "42"
    result = json.dumps(_tool_results(fake)[-1])
    assert "x = 42" in result
    assert '"type": "image"' in result  # the figure went back to the model

    fake.add(_tool_use("insert_cell", source="x * 10"), "I proposed a cell.")
    proposed = kernel.run("%cowork propose a cell")
    assert {"source": "set_next_input", "text": "x * 10", "replace": False} in proposed.payload, (
        proposed.text()
    )


def test_interrupt_archives_the_partial_answer_and_the_next_turn_works(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic, notebook: Path
) -> None:
    kernel = start_kernel()
    kernel.run("%load_ext loom_jupyter")
    fake.add({"content": [" ".join(["slowly"] * 300)], "delay": 0.2})
    interrupted = False

    def interrupt_once(msg: dict[str, Any]) -> None:
        nonlocal interrupted
        if not interrupted and msg["msg_type"] in ("display_data", "update_display_data"):
            interrupted = True
            kernel.km.interrupt_kernel()

    turn = kernel.run("%cowork write a long essay", on_message=interrupt_once)
    assert interrupted
    assert turn.status == "ok"
    assert "Interrupted" in turn.text()
    statuses = archive_rows(
        notebook, "SELECT role, status FROM conversation_turns ORDER BY turn_number"
    )
    assert ("assistant", "interrupted") in statuses

    fake.add("Back again.")
    again = kernel.run("%cowork are you there?")
    assert again.status == "ok"
    assert again.markdown(), again.text()
    assert again.markdown()[-1] == "Back again."


def test_a_new_kernel_resumes_the_session_with_its_turns(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    first = start_kernel()
    first.run("%load_ext loom_jupyter")
    fake.add("Noted: PINEAPPLE.")
    first.run("%cowork remember the word PINEAPPLE")
    first.shutdown()  # a clean shutdown releases the lease at once

    second = start_kernel()
    banner = second.run("%load_ext loom_jupyter").stdout
    assert "resumed “remember the word PINEAPPLE” (1 prompt)" in banner
    assert "another" not in banner.lower()
    fake.add("It was PINEAPPLE.")
    second.run("%cowork which word?")
    request = _request_text(fake)
    assert "remember the word PINEAPPLE" in request
    assert "Noted: PINEAPPLE." in request

    second.km.restart_kernel(now=False)  # a restart releases the lease too (atexit)
    second.kc.wait_for_ready(timeout=60)
    again = second.run("%load_ext loom_jupyter").stdout
    assert "resumed “remember the word PINEAPPLE” (2 prompts)" in again
    assert "another live kernel" not in again


def test_a_second_live_kernel_gets_the_lease_message(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    first = start_kernel()
    first.run("%load_ext loom_jupyter")
    fake.add("Hello.")
    first.run("%cowork hello")
    second = start_kernel()
    banner = " ".join(second.run("%load_ext loom_jupyter").stdout.split())  # unwrapped
    assert "This kernel starts a new session instead" in banner
    assert "%cowork resume 1" in banner
    fake.add("Hi from the second kernel.")
    assert second.run("%cowork hi").markdown()[-1] == "Hi from the second kernel."
    table = second.run("%cowork sessions").text()
    assert "1 *  hi " in table
    assert "2    hello " in table


def test_missing_key_gives_a_clear_message_and_the_kernel_keeps_working(
    start_kernel: Callable[..., Kernel],
) -> None:
    kernel = start_kernel(api_key=None)
    assert kernel.run("%load_ext loom_jupyter").status == "ok"
    turn = kernel.run("%cowork hello")
    assert turn.status == "ok"
    assert "ANTHROPIC_API_KEY" in turn.stdout
    assert kernel.value("1 + 1") == "2"


def test_without_stdin_a_write_tool_is_denied_and_the_turn_goes_on(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    kernel = start_kernel(approval=None)  # policy "ask"
    kernel.run("%load_ext loom_jupyter")
    fake.add(
        {"content": [{"type": "tool_use", "name": "run_python", "input": {"code": "y = 1"}}]},
        "Understood, I will not run it.",
    )
    turn = kernel.run("%cowork set y")  # like nbclient: no stdin
    assert turn.status == "ok"
    text = turn.text()
    assert "LOOM_APPROVAL=auto" in text
    assert "%cowork approval auto" in text
    assert turn.markdown()[-1] == "Understood, I will not run it."
    assert "NameError" in kernel.run("y").text()


def test_approval_asks_through_input_and_always_is_remembered(
    start_kernel: Callable[..., Kernel], fake: FakeAnthropic
) -> None:
    kernel = start_kernel(approval=None)  # policy "ask"
    kernel.run("%load_ext loom_jupyter")
    fake.add(_tool_use("run_python", code="a = 1"), _tool_use("run_python", code="b = 2"), "Done.")
    turn = kernel.run("%cowork set a then b", answers=["n", "a"])
    assert turn.status == "ok"
    assert len(turn.prompts) == 2
    assert "[y]es / [n]o / [a]lways" in turn.prompts[0]
    questions = [
        m for m in turn.of("display_data") if "a = 1" in m["content"]["data"]["text/plain"]
    ]
    assert questions  # the question (with the code) is shown above the prompt...
    question_id = questions[0]["content"]["transient"]["display_id"]
    cleared = [
        m
        for m in turn.of("update_display_data")
        if m["content"]["transient"]["display_id"] == question_id
    ]
    assert cleared
    assert cleared[-1]["content"]["data"]["text/plain"] == ""  # ...and cleared after
    assert "NameError" in kernel.run("a").text()  # denied
    assert kernel.value("b") == "2"  # allowed ("always")
    fake.add(_tool_use("run_python", code="c = 3"), "Again.")
    again = kernel.run("%cowork set c", answers=[])
    assert again.prompts == []  # "always" holds for the rest of the session
    assert kernel.value("c") == "3"
