"""Keep the agent's namespace-changing code away from the person's running cell.

With kernel subshells the sidebar is answered while a cell runs, so a sidebar
turn can reach ``run_python`` at that moment. :class:`CellGuard` follows the
main shell's cells with ``pre_run_cell``/``post_run_cell`` (not
``pre_execute``, which also fires for comm messages on subshell threads);
:class:`GuardedBridge` makes ``run_python`` and ``insert_cell`` wait for the
cell to end, and lets the reading calls run at once. A blocking ``%cowork``
cell is different: it pumps the main-thread queue itself, so nothing waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from loom_jupyter.jupyter.kernel.bridge import LiveKernelBridge
    from loom_jupyter.jupyter.kernel.mainthread import MainThreadQueue
    from loom_jupyter.lineage import ExecutionSource
    from loom_jupyter.tools.base import ExecutionResult, VariableInfo

__all__ = ["BridgeHooks", "CellGuard", "GuardedBridge"]


class CellGuard:
    """Whether a user cell is running on the main shell, and a way to wait for its end."""

    def __init__(self, shell: Any) -> None:
        self._idle = threading.Event()
        self._idle.set()
        self._shell = shell
        shell.events.register("pre_run_cell", self._started)
        shell.events.register("post_run_cell", self._ended)

    def close(self) -> None:
        """Stop following cells (extension unloaded)."""
        for name, callback in (("pre_run_cell", self._started), ("post_run_cell", self._ended)):
            with contextlib.suppress(ValueError):
                self._shell.events.unregister(name, callback)
        self._idle.set()

    @property
    def cell_running(self) -> bool:
        """True between a cell's ``pre_run_cell`` and ``post_run_cell``."""
        return not self._idle.is_set()

    async def wait_idle(self) -> None:
        """Return once no cell runs (from the engine loop; does not block it)."""
        while not self._idle.is_set():
            await asyncio.to_thread(self._idle.wait, 1.0)

    def _started(self, *_: Any) -> None:
        self._idle.clear()

    def _ended(self, *_: Any) -> None:
        self._idle.set()


class BridgeHooks(Protocol):
    """What the bridge needs from the sidebar hub."""

    def sidebar_turn(self) -> bool:
        """Whether the running turn was started from the sidebar."""
        ...

    def waiting_for_cell(self, waiting: bool) -> None:
        """Tell the fronts that code waits for the person's cell (or no longer does)."""
        ...

    def propose_cell(self, source: str) -> None:
        """Ask the sidebar to insert a code cell."""
        ...


class _Inline:
    """A stand-in for the main-thread queue that runs reading work at once, on a worker
    thread: describing a value may take up to the reader's time limit, and the engine
    loop must not wait for it."""

    async def call(self, fn: Callable[[], Any]) -> Any:
        return await asyncio.to_thread(fn)


class GuardedBridge:
    """A :class:`~loom_jupyter.tools.base.KernelBridge` that respects the running cell."""

    def __init__(
        self,
        live: LiveKernelBridge,
        shell: Any,
        main: MainThreadQueue,
        guard: CellGuard,
        hooks: BridgeHooks,
    ) -> None:
        self._live = live
        from loom_jupyter.jupyter.kernel.bridge import LiveKernelBridge  # built off %load_ext

        self._reader = LiveKernelBridge(shell, cast("MainThreadQueue", _Inline()))
        self._main = main
        self._guard = guard
        self._hooks = hooks

    def _blocked(self) -> bool:
        """A person's cell holds the main thread and nobody pumps our queue."""
        return self._guard.cell_running and not self._main.pumping

    async def _wait_for_cell(self) -> None:
        if not self._blocked():
            return
        self._hooks.waiting_for_cell(True)
        try:
            await self._guard.wait_idle()
        finally:
            self._hooks.waiting_for_cell(False)

    async def run_code(
        self, code: str, *, source: ExecutionSource = "run_python", cell_id: str | None = None
    ) -> ExecutionResult:
        """Run ``code`` in the user namespace once no cell of the person's runs."""
        await self._wait_for_cell()
        return await self._live.run_code(code, source=source, cell_id=cell_id)

    async def list_variables(self) -> Sequence[VariableInfo]:
        """The user's variables (read at once while a cell runs)."""
        bridge = self._reader if self._blocked() else self._live
        return await bridge.list_variables()

    async def describe_variable(self, name: str) -> str:
        """One variable's details (read at once while a cell runs)."""
        bridge = self._reader if self._blocked() else self._live
        return await bridge.describe_variable(name)

    async def input_history(self, limit: int) -> Sequence[tuple[int, str]]:
        """The cells this kernel ran (read at once while a cell runs)."""
        bridge = self._reader if self._blocked() else self._live
        return await bridge.input_history(limit)

    async def fingerprints(self, names: Sequence[str]) -> Mapping[str, str | None]:
        """Fingerprints of the names that exist (read at once while a cell runs)."""
        bridge = self._reader if self._blocked() else self._live
        return await bridge.fingerprints(names)

    async def insert_cell(self, source: str, *, run: bool = False) -> str:
        """From a cell turn: the next cell; from the sidebar: a cell the sidebar inserts."""
        if not self._hooks.sidebar_turn():
            await self._wait_for_cell()
            return await self._live.insert_cell(source, run=run)
        self._hooks.propose_cell(source)
        message = "Proposed the code as a new cell below the active one."
        if not run:
            return message
        result = await self.run_code(source)
        outcome = result.error or (result.stdout + (result.result or "")).strip() or "no output."
        return f"{message} Ran it in the kernel: {outcome[:2000]}"
