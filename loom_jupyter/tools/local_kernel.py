"""An in-process KernelBridge over a plain dict, for tests and the command line.

Code runs like an IPython cell: the body is executed and a trailing expression
is evaluated for the result. stdout/stderr are captured, open matplotlib
figures become PNG image blocks, and rebound variables are reported. The code
runs on the calling thread (the event loop's), as a kernel cell would; listing and
describing values runs off it, within a time limit (``tools/namespace_reader.py``).
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import inspect
import io
import linecache
import traceback
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loom_jupyter.errors import ToolError
from loom_jupyter.tools.base import ExecutionResult, VariableInfo
from loom_jupyter.tools.describe import changed_variables, is_user_variable, snapshot
from loom_jupyter.tools.figures import capture_figures, headless_plotting
from loom_jupyter.tools.namespace_reader import DescribeLimits, NamespaceReader, user_names

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import CodeType

    from loom_jupyter.lineage import ExecutionSource

__all__ = ["LocalKernel", "ProposedCell"]

_RESULT_CHARS = 20_000
_CELL_PREFIX = "<cell-"
_TOP_LEVEL_AWAIT = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


@dataclass(frozen=True)
class ProposedCell:
    """A cell the agent proposed with ``insert_cell``."""

    source: str
    run: bool


class LocalKernel:
    """A :class:`~loom_jupyter.tools.base.KernelBridge` over ``namespace`` (new if omitted)."""

    def __init__(
        self, namespace: dict[str, Any] | None = None, *, limits: DescribeLimits | None = None
    ) -> None:
        fresh = {"__name__": "__main__", "__builtins__": builtins}
        self.namespace: dict[str, Any] = namespace if namespace is not None else fresh
        self.reader = NamespaceReader(limits)
        """Describes values within its time limit, off the event loop."""
        self.history: list[tuple[int, str]] = []
        self.proposed_cells: list[ProposedCell] = []
        self.execution_count = 0

    async def run_code(
        self, code: str, *, source: ExecutionSource = "run_python", cell_id: str | None = None
    ) -> ExecutionResult:
        """Run ``code`` in the namespace and capture everything it produced (not recorded)."""
        self.execution_count += 1
        count = self.execution_count
        self.history.append((count, code))
        before = snapshot(self.namespace)
        out, err = io.StringIO(), io.StringIO()
        result: str | None = None
        error: str | None = None
        with redirect_stdout(out), redirect_stderr(err), headless_plotting():
            try:
                result = await self._execute(code, f"{_CELL_PREFIX}{count}>")
            except (Exception, SystemExit) as exc:  # the cell's error is a result, like in Jupyter
                error = _user_traceback(exc)
            images = capture_figures()
        return ExecutionResult(
            stdout=out.getvalue(),
            stderr=err.getvalue(),
            result=result,
            error=error,
            images=images,
            changed=changed_variables(before, self.namespace),
            execution_count=count,
        )

    async def _execute(self, code: str, filename: str) -> str | None:
        """Execute the body, evaluate a trailing expression; its repr is the result.

        Top-level ``await`` works, as in IPython.
        """
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        tree = ast.parse(code, filename, "exec")
        last: ast.Expression | None = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body[-1].value)
            tree.body.pop()
        await self._run(compile(tree, filename, "exec", flags=_TOP_LEVEL_AWAIT))
        if last is None:
            return None
        value = await self._run(compile(last, filename, "eval", flags=_TOP_LEVEL_AWAIT))
        if value is None:
            return None
        self.namespace["_"] = value
        text = repr(value)
        return text if len(text) <= _RESULT_CHARS else text[:_RESULT_CHARS] + " ..."

    async def _run(self, compiled: CodeType) -> Any:
        """Evaluate ``compiled``; code with top-level ``await`` yields a coroutine to await."""
        outcome = eval(compiled, self.namespace)
        if compiled.co_flags & inspect.CO_COROUTINE:
            return await outcome
        return outcome

    async def list_variables(self) -> Sequence[VariableInfo]:
        """The person's variables, sorted by name."""
        return await asyncio.to_thread(self.reader.variables, dict(self.namespace))

    async def describe_variable(self, name: str) -> str:
        """Details of one variable; a ToolError naming the known ones if it does not exist,
        or when describing it takes longer than the reader's time limit."""
        if name not in self.namespace or not is_user_variable(name, self.namespace[name]):
            known = ", ".join(user_names(self.namespace)[:30]) or "none"
            raise ToolError(f"No variable named {name!r} in the namespace. Variables: {known}.")
        return await asyncio.to_thread(self.reader.describe, name, self.namespace[name])

    async def input_history(self, limit: int) -> Sequence[tuple[int, str]]:
        """The last ``limit`` pieces of code run here, oldest first."""
        return self.history[-limit:] if limit > 0 else []

    async def fingerprints(self, names: Sequence[str]) -> Mapping[str, str | None]:
        """Fingerprints of the names that exist here."""
        return await asyncio.to_thread(self.reader.fingerprints, dict(self.namespace), names)

    async def insert_cell(self, source: str, *, run: bool = False) -> str:
        """Record the proposed cell (there is no notebook here); run it too if asked."""
        self.proposed_cells.append(ProposedCell(source, run))
        number = len(self.proposed_cells)
        if not run:
            return f"Proposed cell #{number} recorded (no notebook here to show it in)."
        outcome = await self.run_code(source)
        status = "raised an error" if outcome.error else "ran without error"
        return f"Proposed cell #{number} recorded and run: it {status}."


def _user_traceback(exc: BaseException) -> str:
    """The traceback from the cell's first frame on (our own frames are noise to the model)."""
    tb = exc.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith(_CELL_PREFIX):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb)).rstrip()
