"""The KernelBridge over the live IPython shell.

Every call touches the user namespace or the display, so each is marshalled to
the kernel's main thread through :class:`MainThreadQueue`; the engine loop just
awaits the result. Listing, describing and fingerprinting values run the values' own
code (``repr``, ``shape``...): they go through a
:class:`~loom_jupyter.tools.namespace_reader.NamespaceReader`, which holds the main
thread for at most its time limit, so a value whose ``repr`` hangs ends the call with an
error and leaves the kernel free for the person's next cell.

``insert_cell`` uses ``shell.set_next_input(source, replace=False)``: in
JupyterLab and the classic notebook that creates a new cell below the running
one, holding the proposed code, without needing the sidebar; in a terminal it
pre-fills the next prompt. With ``run=True`` the code is also executed here
at once (like ``run_python``) and its outcome reported to the model.
"""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import ToolError
from loom_jupyter.jupyter.kernel.execute import run_in_namespace
from loom_jupyter.lineage import execution_record
from loom_jupyter.tools.describe import is_user_variable
from loom_jupyter.tools.namespace_reader import NamespaceReader, user_names

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from loom_jupyter.jupyter.kernel.mainthread import MainThreadQueue
    from loom_jupyter.lineage import ExecutionRecord, ExecutionSource
    from loom_jupyter.tools.base import ExecutionResult, VariableInfo
    from loom_jupyter.tools.namespace_reader import DescribeLimits

__all__ = ["LiveKernelBridge"]


class LiveKernelBridge:
    """Runs the agent's code in ``shell.user_ns`` on the main thread."""

    def __init__(
        self,
        shell: Any,
        main: MainThreadQueue,
        *,
        on_result: Callable[[str, ExecutionResult], None] | None = None,
        recorder: Callable[[ExecutionRecord], None] | None = None,
        limits: DescribeLimits | None = None,
    ) -> None:
        self._shell = shell
        self._main = main
        self._reader = NamespaceReader(limits)
        self._on_result = on_result
        self._recorder = recorder  # the agent's executions, archived (issue 21)
        self._counter = itertools.count(1)

    async def run_code(
        self, code: str, *, source: ExecutionSource = "run_python", cell_id: str | None = None
    ) -> ExecutionResult:
        """Run ``code`` in the user namespace; figures and rich outputs are captured."""
        number = next(self._counter)

        def job() -> ExecutionResult:
            started = time.perf_counter()
            result = run_in_namespace(self._shell, code, cell_id=number)
            if self._recorder is not None and source != "rebuild":
                error = (result.error or "").strip().splitlines()
                self._recorder(
                    execution_record(
                        code,
                        source=source,
                        cell_id=cell_id,
                        changed=[effect.name for effect in result.changed],
                        namespace=self._shell.user_ns,
                        duration_s=time.perf_counter() - started,
                        error=error[-1][:160] if error else None,
                        execution_count=result.execution_count,
                    )
                )
            if self._on_result is not None:
                self._on_result(code, result)  # show figures to the person too
            return result

        return await self._main.call(job)

    async def list_variables(self) -> Sequence[VariableInfo]:
        """The user's variables, summarised (within the reader's time limit)."""
        return await self._main.call(lambda: self._reader.variables(dict(self._shell.user_ns)))

    async def describe_variable(self, name: str) -> str:
        """Details of one variable; ToolError when the name is not defined, or when
        describing it takes longer than the reader's time limit."""

        def job() -> str:
            ns = self._shell.user_ns
            if name not in ns or not is_user_variable(name, ns[name]):
                known = ", ".join(user_names(ns)[:30]) or "none"
                raise ToolError(f"no variable named {name!r} in the kernel (defined: {known})")
            return self._reader.describe(name, ns[name])

        return await self._main.call(job)

    async def fingerprints(self, names: Sequence[str]) -> Mapping[str, str | None]:
        """Fingerprints of the names that exist in the user namespace (``None`` for one
        that could not be taken within the reader's time limit)."""
        return await self._main.call(lambda: self._reader.fingerprints(self._shell.user_ns, names))

    async def input_history(self, limit: int) -> Sequence[tuple[int, str]]:
        """The last ``limit`` cells this kernel ran, oldest first."""

        def job() -> list[tuple[int, str]]:
            cells = list(self._shell.user_ns.get("In", []))
            numbered = [(n, src) for n, src in enumerate(cells) if n and src.strip()]
            return numbered[-limit:] if limit > 0 else []

        return await self._main.call(job)

    async def insert_cell(self, source: str, *, run: bool = False) -> str:
        """Propose ``source`` as the next cell; with ``run`` also execute it here now."""
        await self._main.call(lambda: self._shell.set_next_input(source, replace=False))
        where = "a new cell below the current one" if self._in_kernel() else "the next prompt"
        message = f"Proposed the code as {where}."
        if run:
            message += " Ran it in the kernel: " + _outcome(await self.run_code(source))
        return message

    def _in_kernel(self) -> bool:
        return getattr(self._shell, "kernel", None) is not None


def _outcome(result: ExecutionResult, limit: int = 2000) -> str:
    """A compact account of a run, for the model."""
    if result.error:
        text = f"it raised:\n{result.error}"
    else:
        parts = [result.stdout.rstrip(), result.stderr.rstrip(), result.result or ""]
        text = "\n".join(p for p in parts if p) or "no output."
    return text if len(text) <= limit else text[:limit] + " ..."
