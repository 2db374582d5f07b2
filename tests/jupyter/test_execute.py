"""The agent's code runs in a real IPython shell's namespace, with output captured."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from typing import TYPE_CHECKING

import pytest

from loom_jupyter.errors import ToolError
from loom_jupyter.host.runtime.loop_thread import LoopThread
from loom_jupyter.jupyter.kernel.bridge import LiveKernelBridge
from loom_jupyter.jupyter.kernel.execute import run_in_namespace
from loom_jupyter.jupyter.kernel.mainthread import MainThreadQueue
from loom_jupyter.lineage import fingerprint

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from loom_jupyter.lineage import ExecutionRecord


def test_code_defines_variables_the_user_keeps(shell: InteractiveShell) -> None:
    result = run_in_namespace(shell, "x = 41 + 1\nprint('hello')\nx * 2", cell_id=1)
    assert shell.user_ns["x"] == 42
    assert result.stdout == "hello\n"
    assert result.result == "84"
    assert [(e.name, e.type_name) for e in result.changed] == [("x", "int")]
    assert result.error is None


def test_errors_come_back_as_text_with_the_source_line(shell: InteractiveShell) -> None:
    result = run_in_namespace(shell, "a = 1\nb = a / 0", cell_id=2)
    assert result.error is not None
    assert "ZeroDivisionError" in result.error
    assert "b = a / 0" in result.error
    assert "execute.py" not in result.error
    assert shell.user_ns["a"] == 1


def test_magics_and_display_outputs_are_captured(shell: InteractiveShell) -> None:
    code = (
        "%config Completer.use_jedi = False\n"
        "from IPython.display import display, Markdown\n"
        "display(Markdown('**hi**'))"
    )
    result = run_in_namespace(shell, code, cell_id=3)
    assert result.error is None
    assert result.rich == ("**hi**",)


def test_matplotlib_figures_come_back_as_png(shell: InteractiveShell) -> None:
    code = (
        "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nplt.plot([1])"
    )
    result = run_in_namespace(shell, code, cell_id=4)
    assert result.error is None
    assert len(result.images) == 1
    assert base64.b64decode(result.images[0].data).startswith(b"\x89PNG")
    assert shell.user_ns["plt"].get_fignums() == []  # closed: the inline backend will not repeat it


def test_bridge_marshals_to_the_main_thread(shell: InteractiveShell) -> None:
    loop_thread = LoopThread()
    main = MainThreadQueue()
    bridge = LiveKernelBridge(shell, main)
    seen: list[str] = []

    async def agent() -> tuple[object, ...]:
        await _pumped(main)  # jobs go to the pump, not to a fallback thread
        ran = await bridge.run_code("import threading\nwhere = threading.current_thread().name")
        seen.append(threading.current_thread().name)
        names = [v.name for v in await bridge.list_variables()]
        detail = await bridge.describe_variable("where")
        with pytest.raises(ToolError, match="no variable named 'nope'"):
            await bridge.describe_variable("nope")
        return ran, names, detail

    try:
        future = loop_thread.submit(agent())
        main.pump_until(future)
        ran, names, detail = future.result()
    finally:
        loop_thread.stop()
    assert shell.user_ns["where"] == "MainThread"
    assert seen == ["loom-loop"]
    assert "where" in names
    assert "MainThread" in str(detail)
    assert ran.error is None  # type: ignore[attr-defined]


def test_the_bridge_records_what_ran_it_but_not_a_replay(shell: InteractiveShell) -> None:
    loop_thread = LoopThread()
    main = MainThreadQueue()
    records: list[ExecutionRecord] = []
    bridge = LiveKernelBridge(shell, main, recorder=records.append)

    async def agent() -> None:
        await _pumped(main)  # jobs go to the pump, not to a fallback thread
        await bridge.run_code("made = [1, 2]")
        await bridge.run_code("cell_made = 3", source="run_cell", cell_id="c-7")
        await bridge.run_code("made = [1, 2]", source="rebuild")  # a replay: not again

    try:
        future = loop_thread.submit(agent())
        main.pump_until(future)
        future.result()
    finally:
        loop_thread.stop()
    assert [(r.source, r.code, r.cell_id) for r in records] == [
        ("run_python", "made = [1, 2]", None),
        ("run_cell", "cell_made = 3", "c-7"),
    ]
    assert records[0].fingerprints["made"] == fingerprint([1, 2])
    assert shell.user_ns["made"] == [1, 2]


def test_a_keyboard_interrupt_in_user_code_reaches_the_pump(shell: InteractiveShell) -> None:
    loop_thread = LoopThread()
    main = MainThreadQueue()

    def job() -> None:
        raise KeyboardInterrupt

    async def agent() -> str:
        await _pumped(main)  # jobs go to the pump, not to a fallback thread
        try:
            await main.call(job)
        except ToolError as exc:
            return str(exc)
        return "no error"

    try:
        future = loop_thread.submit(agent())
        with pytest.raises(KeyboardInterrupt):
            main.pump_until(future)
        main.pump_until(future)
        assert "interrupted" in future.result()
    finally:
        loop_thread.stop()


def test_code_queued_before_an_interrupt_never_starts_after_it() -> None:
    """The interrupt can land while more code waits in the queue behind the job it hit:
    that code, and code queued until the interrupted work ends, is answered "interrupted"
    and never runs; a display update still runs; the next turn's code runs again."""
    loop_thread = LoopThread()
    main = MainThreadQueue()
    ran: list[str] = []
    behind = threading.Event()  # the code and the display are queued behind the first job

    def interrupted() -> None:
        assert behind.wait(timeout=30)
        raise KeyboardInterrupt

    async def agent() -> list[str]:
        await _pumped(main)  # jobs go to the pump, not to a fallback thread
        first = asyncio.ensure_future(main.call(interrupted))
        second = asyncio.ensure_future(main.call(lambda: ran.append("queued code")))
        await asyncio.sleep(0)  # both calls have queued their jobs
        main.post(lambda: ran.append("display"))
        behind.set()
        answers = []
        for waiting in (first, second):
            try:
                await waiting
            except ToolError as exc:
                answers.append(str(exc))
        return answers

    try:
        future = loop_thread.submit(agent())
        with pytest.raises(KeyboardInterrupt):
            main.pump_until(future)
        main.interrupt_waiting()  # what the magic does when KeyboardInterrupt reaches the pump
        main.pump_until(future)
        assert future.result() == ["interrupted by the user (kernel interrupt)"] * 2
        late = loop_thread.submit(main.call(lambda: ran.append("late code")))
        main.pump_until(late)  # queued after the interrupt, before the turn ended: refused
        with pytest.raises(ToolError, match="interrupted"):
            late.result()
        main.resume_waiting()  # the interrupted turn ended
        again = loop_thread.submit(main.call(lambda: ran.append("next turn's code")))
        main.pump_until(again)
    finally:
        loop_thread.stop()
    assert ran == ["display", "next turn's code"]


async def _pumped(main: MainThreadQueue) -> None:
    """Wait until the test's main thread pumps ``main``: a job queued before that would be
    drained by a fallback thread (no kernel loop here), which is not what these tests see."""
    await asyncio.to_thread(_until_pumping, main)


def _until_pumping(main: MainThreadQueue) -> None:
    while not main.pumping:
        time.sleep(0.005)
