"""Tools over the user's kernel: ``run_python`` and ``inspect_variables``.

They talk to the kernel only through :class:`~loom_jupyter.tools.base.KernelBridge`
(``ctx.kernel``): the live IPython namespace in Jupyter, a
:class:`~loom_jupyter.tools.local_kernel.LocalKernel` elsewhere.
``read_notebook`` lives in :mod:`loom_jupyter.tools.notebook`, the cell tools in
:mod:`loom_jupyter.tools.cells`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, ClassVar

from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.approval import ApprovalRequest
from loom_jupyter.tools.base import (
    ExecutionResult,
    ToolAccess,
    ToolContext,
    ToolOutput,
    TypedTool,
)
from loom_jupyter.tools.describe import variables_table
from loom_jupyter.tools.guard import code_rail
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema

if TYPE_CHECKING:
    from loom_jupyter.messages import ImageBlock, TextBlock

__all__ = [
    "InspectVariables",
    "InspectVariablesInput",
    "RunPython",
    "RunPythonInput",
    "execution_output",
    "format_execution",
]

_MAX_IMAGES = 4  # figures attached per run; more would crowd the context


def format_execution(result: ExecutionResult) -> str:
    """The text the model reads for one run: output sections, then the error last."""
    parts: list[str] = []
    if result.stdout:
        parts.append(f"[stdout]\n{result.stdout.rstrip()}")
    if result.stderr:
        parts.append(f"[stderr]\n{result.stderr.rstrip()}")
    parts += [f"[display]\n{rich.rstrip()}" for rich in result.rich]
    if result.result is not None:
        parts.append(f"[result]\n{result.result}")
    if result.images:
        shown = min(len(result.images), _MAX_IMAGES)
        parts.append(f"[{len(result.images)} figure(s); {shown} attached as images]")
    if result.changed:
        names = ", ".join(
            f"{v.name} ({v.type_name}{' ' + v.shape if v.shape else ''})" for v in result.changed
        )
        parts.append(f"[variables created or changed] {names}")
    if result.error:
        parts.append(f"[error]\n{result.error}")
    head = f"In [{result.execution_count}]" if result.execution_count is not None else "Ran"
    body = "\n".join(parts) if parts else "(no output)"
    return f"{head}:\n{body}"


def _error_line(error: str) -> str:
    lines = [line for line in error.strip().splitlines() if line.strip()]
    return lines[-1][:100] if lines else "error"


@dataclass(frozen=True, kw_only=True)
class RunPythonInput(ToolInput):
    """``run_python``'s input."""

    code: Annotated[str, Limit(min_length=1)]
    """Python source to run."""


class RunPython(TypedTool[RunPythonInput]):
    """``run_python``: run code in the person's namespace (pinned name and input)."""

    input_type = RunPythonInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="run_python",
        description=(
            "Run Python code in the notebook's live namespace (the person's variables are there; "
            "what you define stays). Returns stdout, stderr, the value of a final expression, "
            "matplotlib figures as images, and the traceback if it raised. Keep runs short."
        ),
        input_schema=input_schema(RunPythonInput),
    )

    def approval_request(self, args: RunPythonInput, ctx: ToolContext | None) -> ApprovalRequest:
        """Shows the code."""
        code = args.code
        lines = code.count("\n") + 1
        return ApprovalRequest("run_python", f"run Python code ({lines} lines)", code)

    def runs_code(self, args: RunPythonInput) -> bool:
        """Always: the protected files are checked after it."""
        return True

    def guard_rail(self, args: RunPythonInput, ctx: ToolContext | None) -> str | None:
        """A guard rail code that writes, runs processes or builds code names, if any."""
        return code_rail(args.code)

    async def run(self, args: RunPythonInput, ctx: ToolContext) -> ToolOutput:
        """Run the code; an exception in it is an ``is_error`` result with its traceback."""
        return execution_output(await ctx.kernel.run_code(args.code))


def execution_output(result: ExecutionResult, summary: str = "") -> ToolOutput:
    """A run as a tool result: its text, its first figures, the variables it changed; an
    exception in the code makes it ``is_error``."""
    images = result.images[:_MAX_IMAGES]
    content: tuple[TextBlock | ImageBlock, ...] = (
        ToolOutput.text(format_execution(result)).content + images
    )
    return ToolOutput(
        content, is_error=result.error is not None, summary=summary or _run_summary(result)
    ).with_effects(*result.changed)


@dataclass(frozen=True, kw_only=True)
class InspectVariablesInput(ToolInput):
    """``inspect_variables``' input: no ``name`` lists the namespace."""

    name: Annotated[str, Limit(min_length=1)] | None = None


class InspectVariables(TypedTool[InspectVariablesInput]):
    """``inspect_variables``: list the namespace, or describe one variable."""

    input_type = InspectVariablesInput
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="inspect_variables",
        description=(
            "Without `name`: a table of the person's variables (name, type, shape, preview). "
            "With `name`: details of that variable (for a DataFrame its dtypes, head and "
            "describe(); for an array its stats) and its provenance: the execution that last "
            "set it and the ones it depends on. Reads only; runs no code of yours."
        ),
        input_schema=input_schema(InspectVariablesInput),
    )

    async def run(self, args: InspectVariablesInput, ctx: ToolContext) -> ToolOutput:
        """The table, or the description of ``name``."""
        name = args.name
        if name is None:
            infos = list(await ctx.kernel.list_variables())
            return ToolOutput.text(variables_table(infos), summary=f"{len(infos)} variables")
        text = await ctx.kernel.describe_variable(name)
        if ctx.executions is not None:
            from loom_jupyter.lineage import trace
            from loom_jupyter.tools.rebuild import provenance_text

            text += "\n\n" + provenance_text(trace(await ctx.executions.executions(), name))
        return ToolOutput.text(text, summary=f"inspected {name}")


def _run_summary(result: ExecutionResult) -> str:
    """One line for the tool card: the error, or what the run produced."""
    if result.error:
        return f"error: {_error_line(result.error)}"
    parts = ["ran Python code"]
    if result.images:
        parts.append(f"{len(result.images)} figure(s)")
    if result.changed:
        names = ", ".join(v.name for v in result.changed[:3])
        more = f" +{len(result.changed) - 3}" if len(result.changed) > 3 else ""
        parts.append(f"set {names}{more}")
    return " · ".join(parts)
