"""The tool seam: what a tool is, what it gets, what it returns.

A tool never raises past :meth:`Tool.run` except with a
:class:`~loom_jupyter.errors.ToolError`; the agent turns any failure into an
``is_error`` tool result so the loop goes on. Tools report their side effects
(files touched, variables changed) as typed values, which is how the session
state is extracted mechanically.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import (
    TYPE_CHECKING,
    Any,
    Generic,
    Literal,
    Protocol,
    TypeAlias,
    TypeVar,
    runtime_checkable,
)

from loom_jupyter.messages import ImageBlock, TextBlock
from loom_jupyter.tools.schema import check_mapping, parse_input

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping, Sequence
    from pathlib import Path

    from loom_jupyter.cells import CellChange, ChangeResult
    from loom_jupyter.lineage import ExecutionSource
    from loom_jupyter.messages import ToolSpec
    from loom_jupyter.readers import ArchiveReader, ExecutionReader, ProjectReader
    from loom_jupyter.settings import ApprovalMode, Settings
    from loom_jupyter.skills import SkillSet

__all__ = [
    "AnyTool",
    "Delegator",
    "Effect",
    "ExecutionResult",
    "FileEffect",
    "KernelBridge",
    "NotebookDocument",
    "RunsCode",
    "Tool",
    "ToolAccess",
    "ToolContext",
    "ToolOutput",
    "TypedTool",
    "VariableEffect",
    "VariableInfo",
    "call_args",
]

ToolAccess = Literal["read", "write"]


@dataclass(frozen=True)
class FileEffect:
    """A tool read, wrote, edited or listed a file (path relative to the notebook dir)."""

    path: str
    action: Literal["read", "write", "edit", "list", "search"]
    kind: Literal["file"] = "file"


@dataclass(frozen=True)
class VariableEffect:
    """A variable of the user namespace was created or changed."""

    name: str
    type_name: str
    shape: str | None = None
    kind: Literal["variable"] = "variable"


Effect: TypeAlias = "FileEffect | VariableEffect"


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: blocks for the model, a one-line summary for people."""

    content: tuple[TextBlock | ImageBlock, ...]
    is_error: bool = False
    summary: str = ""
    effects: tuple[FileEffect | VariableEffect, ...] = ()

    @classmethod
    def text(cls, text: str, *, summary: str = "", is_error: bool = False) -> ToolOutput:
        """An output holding one text block."""
        return cls((TextBlock(text),), is_error=is_error, summary=summary)

    @classmethod
    def error(cls, message: str) -> ToolOutput:
        """An ``is_error`` output explaining what went wrong."""
        return cls((TextBlock(message),), is_error=True, summary=message.splitlines()[0][:100])

    def with_effects(self, *effects: FileEffect | VariableEffect) -> ToolOutput:
        """A copy that also reports ``effects``."""
        return replace(self, effects=(*self.effects, *effects))

    @property
    def text_content(self) -> str:
        """The text blocks joined (images left out)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))


@dataclass(frozen=True)
class ExecutionResult:
    """The outcome of running code in the user's namespace."""

    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    error: str | None = None
    images: tuple[ImageBlock, ...] = ()
    rich: tuple[str, ...] = ()
    changed: tuple[VariableEffect, ...] = ()
    execution_count: int | None = None


@dataclass(frozen=True)
class VariableInfo:
    """One name of the user namespace, summarised."""

    name: str
    type_name: str
    shape: str | None
    summary: str


class KernelBridge(Protocol):
    """Where the agent's code runs: the live kernel, or an in-process namespace."""

    async def run_code(
        self, code: str, *, source: ExecutionSource = "run_python", cell_id: str | None = None
    ) -> ExecutionResult:
        """Run ``code`` in the user namespace, capturing output and rich results.

        ``source`` and ``cell_id`` say what ran it, for its execution record (a
        ``rebuild`` replay is not recorded again: the originals stay the record).
        """
        ...

    async def list_variables(self) -> Sequence[VariableInfo]:
        """The user's variables (no modules, functions or private names)."""
        ...

    async def describe_variable(self, name: str) -> str:
        """A detailed description of one variable; raises ToolError if unknown."""
        ...

    async def input_history(self, limit: int) -> Sequence[tuple[int, str]]:
        """The last ``limit`` cells run in this kernel as (execution count, source)."""
        ...

    async def fingerprints(self, names: Sequence[str]) -> Mapping[str, str | None]:
        """Each of ``names`` that exists: its :func:`~loom_jupyter.lineage.fingerprint`."""
        ...

    async def insert_cell(self, source: str, *, run: bool = False) -> str:
        """Propose a new notebook cell; returns a message for the model."""
        ...


class NotebookDocument(Protocol):
    """The live notebook, through the front that holds it (DESIGN §9): never the file."""

    @property
    def available(self) -> bool:
        """Whether a front holds the notebook now."""
        ...

    async def apply(self, change: CellChange) -> ChangeResult:
        """Read the notebook or change it; a refused change changed nothing."""
        ...

    def last_read(self, cell_id: str) -> str | None:
        """The cell's source as the agent last read (or wrote) it; None if never."""
        ...


class Delegator(Protocol):
    """The orchestrator, as ``delegate_task`` sees it (the tools layer sits below it)."""

    async def delegate_for_tool(self, goal: str, context: str, *, wait: bool) -> ToolOutput:
        """Plan (asking for approval as the session's mode says), run, verify; the digest."""
        ...


@dataclass(frozen=True, kw_only=True)
class ToolContext:
    """Everything a tool may use, handed to it on every call."""

    notebook_dir: Path
    settings: Settings
    kernel: KernelBridge
    notebook_path: Path | None = None
    archive: ArchiveReader | None = None
    session_id: str | None = None
    session_summary: Callable[[], Awaitable[str]] | None = None
    project: ProjectReader | None = None  # every notebook archive of the project, read-only
    delegator: Delegator | None = None  # the orchestrator, when the session has one
    asked_at: int | None = None  # the user turn being answered: recall leaves it out
    document: NotebookDocument | None = None  # the live notebook, when a front holds it
    call_id: str | None = None  # the tool call being run (a cell's provenance names it)
    approval_mode: ApprovalMode = "ask"  # the session's mode now (%cowork approval changes it)
    executions: ExecutionReader | None = None  # the archived executions (rebuild_variables)
    skills: SkillSet | None = None  # the skills found (load_skill; read_file in their folders)
    extra: Mapping[str, Any] = field(default_factory=dict)


In = TypeVar("In")
In_contra = TypeVar("In_contra", contravariant=True)


class Tool(Protocol[In_contra]):
    """One tool the model can call; ``In`` is the type its input is checked into."""

    @property
    def spec(self) -> ToolSpec:
        """Name, description and JSON schema shown to the model."""
        ...

    @property
    def access(self) -> ToolAccess:
        """``read`` tools run without asking; ``write`` tools follow the approval policy."""
        ...

    async def run(self, args: In_contra, ctx: ToolContext) -> ToolOutput:
        """Run with the checked input; raise ToolError for failures the model should see."""
        ...


AnyTool: TypeAlias = "Tool[Any]"
"""A tool of any input type, as the registry and the approval policy hold it (each call's
input is checked by the tool's own :meth:`TypedTool.parse`, see :func:`call_args`)."""


class TypedTool(Generic[In]):
    """A tool whose input is one frozen dataclass (a :class:`~loom_jupyter.tools.schema.ToolInput`):
    its ``spec`` shows :func:`~loom_jupyter.tools.schema.input_schema` of ``input_type``, and
    :meth:`parse` checks the model's input into it, so ``run`` reads attributes, not keys."""

    input_type: type[In]

    def parse(self, raw: object) -> In:
        """The model's input as ``input_type``; raises
        :class:`~loom_jupyter.tools.schema.InvalidInput` saying what is wrong."""
        return parse_input(self.input_type, raw)


@runtime_checkable
class RunsCode(Protocol[In_contra]):
    """A tool whose call runs code or a command (``run_python``, ``shell``, a cell...): what
    it touches cannot be read from its input, so the protected files are checked after it
    (:mod:`loom_jupyter.engine.gate`, issue 38.3)."""

    def runs_code(self, args: In_contra) -> bool:
        """Whether a call with ``args`` runs code (``insert_cell`` only with ``run``)."""
        ...


def call_args(tool: AnyTool, raw: object) -> object:
    """A call's input checked for ``tool``: its typed value, or for a tool with an outside
    schema (an MCP server's) the mapping checked against that schema. Raises
    :class:`~loom_jupyter.tools.schema.InvalidInput` saying what is wrong."""
    if isinstance(tool, TypedTool):
        return tool.parse(raw)
    return check_mapping(raw, tool.spec.input_schema)
