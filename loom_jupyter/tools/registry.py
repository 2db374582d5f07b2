"""The tools the model can call, by name, and the one safe way to run a call.

:meth:`ToolRegistry.run` never raises for a tool's problem: an unknown name,
input that does not fit the tool's input (checked into its typed value by
:func:`~loom_jupyter.tools.base.call_args`), a denial, a :class:`ToolError` or any
other exception becomes an ``is_error`` :class:`ToolOutput` that tells the
model what went wrong, so the agent loop goes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loom_jupyter.errors import ToolError
from loom_jupyter.tools.base import AnyTool, ToolAccess, ToolContext, ToolOutput, call_args
from loom_jupyter.tools.output import cap_output, redact_output, secret_values
from loom_jupyter.tools.schema import InvalidInput

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from loom_jupyter.messages import ToolSpec, ToolUseBlock
    from loom_jupyter.tools.approval import ApprovalPolicy

__all__ = ["OUTSIDE_TOOLS", "ToolRegistry", "default_registry", "default_tools"]

OUTSIDE_TOOLS = (
    "run_python",
    "inspect_variables",
    "read_notebook",
    "insert_cell",
    "edit_cell",
    "run_cell",
    "conversation_recall",
    "rebuild_variables",
    "variable_provenance",
)
"""The tools an outside agent may call in a kernel (DESIGN §14), in the bridge's order."""


class ToolRegistry:
    """Tools by name, in the order they were added (a stable order for the prompt cache)."""

    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: AnyTool) -> None:
        """Register ``tool``; a second tool with the same name is a ``ValueError``, and so is
        a write tool that does not say what its calls may touch (rails by construction:
        ``guard_rail`` or ``code_rail``, :mod:`loom_jupyter.tools.approval`)."""
        from loom_jupyter.tools.approval import declares_rail

        name = tool.spec.name
        if name in self._tools:
            raise ValueError(f"a tool named {name!r} is already registered")
        if tool.access == "write" and not declares_rail(tool):
            raise TypeError(f"the write tool {name!r} declares no guard rail (guard_rail)")
        self._tools[name] = tool

    def remove(self, name: str) -> None:
        """Forget the tool called ``name`` (a server the folder no longer names)."""
        self._tools.pop(name, None)

    def get(self, name: str) -> AnyTool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def access(self, name: str) -> ToolAccess | None:
        """``read`` or ``write`` for a known tool, else ``None``."""
        tool = self._tools.get(name)
        return None if tool is None else tool.access

    def names(self) -> tuple[str, ...]:
        """Tool names in registration order."""
        return tuple(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """What the model is shown, always in the same order."""
        return tuple(tool.spec for tool in self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[AnyTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def check_call(self, call: ToolUseBlock) -> AnyTool | ToolOutput:
        """The tool for ``call`` if its name is known and its input valid, else the error output."""
        checked = self._checked(call)
        return checked if isinstance(checked, ToolOutput) else checked[0]

    def _checked(self, call: ToolUseBlock) -> tuple[AnyTool, object] | ToolOutput:
        """The tool and the call's input checked for it (its typed value), or the error."""
        tool = self._tools.get(call.name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolOutput.error(f"Unknown tool {call.name!r}. Available tools: {known}.")
        try:
            return tool, call_args(tool, call.input)
        except InvalidInput as bad:
            listed = "; ".join(bad.problems)
            return ToolOutput.error(
                f"Invalid input for {call.name}: {listed}. "
                "Check the tool's input schema and call it again."
            )

    async def run(
        self, call: ToolUseBlock, ctx: ToolContext, *, policy: ApprovalPolicy | None = None
    ) -> ToolOutput:
        """Run ``call``: check it, ask ``policy`` (if given), run it, redact and cap the output."""
        checked = self._checked(call)
        if isinstance(checked, ToolOutput):
            return checked
        tool, args = checked
        if policy is not None:
            decision = await policy.check(tool, call, ctx)
            if not decision.allowed:
                return decision.to_output()
        return self.seal(await _run_guarded(tool, args, call.name, ctx), ctx)

    def seal(self, output: ToolOutput, ctx: ToolContext) -> ToolOutput:
        """``output`` as the model and the archive get it: secrets redacted, then capped."""
        mcp_secrets = (s for server in ctx.settings.mcp_servers for s in server.secrets())
        secrets = sorted({*secret_values(), *mcp_secrets}, key=len, reverse=True)
        output = redact_output(output, secrets)  # first: a cap must not leave half a secret
        return cap_output(output, ctx.settings.tool_output_max_chars)


async def _run_guarded(tool: AnyTool, args: object, name: str, ctx: ToolContext) -> ToolOutput:
    try:
        return await tool.run(args, ctx)
    except ToolError as exc:
        return ToolOutput.error(str(exc) or f"{name} failed ({type(exc).__name__}).")
    except Exception as exc:  # any bug in a tool must reach the model as a result, not end the loop
        return ToolOutput.error(
            f"{name} failed unexpectedly: {type(exc).__name__}: {exc}. "
            "This is a problem in the tool, not in your input; try another way."
        )


def default_tools() -> tuple[AnyTool, ...]:
    """One instance of every built-in tool, in their fixed order."""
    from loom_jupyter.tools.cells import DeleteCell, EditCell, InsertCell, MoveCell, RunCell
    from loom_jupyter.tools.delegate import DelegateTask
    from loom_jupyter.tools.files import EditFile, ListFiles, ReadFile, SearchFiles, WriteFile
    from loom_jupyter.tools.kernel import InspectVariables, RunPython
    from loom_jupyter.tools.load_skill import LoadSkill
    from loom_jupyter.tools.notebook import ReadNotebook
    from loom_jupyter.tools.rebuild import RebuildVariables
    from loom_jupyter.tools.recall import ConversationRecall
    from loom_jupyter.tools.shell import Shell

    return (
        ConversationRecall(),
        InspectVariables(),
        ReadNotebook(),
        ReadFile(),
        ListFiles(),
        SearchFiles(),
        LoadSkill(),
        RunPython(),
        InsertCell(),
        EditCell(),
        RunCell(),
        MoveCell(),
        DeleteCell(),
        WriteFile(),
        EditFile(),
        Shell(),
        DelegateTask(),
        RebuildVariables(),
    )


def default_registry(*, extra: Iterable[AnyTool] = ()) -> ToolRegistry:
    """A registry of every built-in tool, then ``extra`` (e.g. ``delegate_task``)."""
    return ToolRegistry((*default_tools(), *extra))
