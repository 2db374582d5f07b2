"""Rails by construction (issue 38.2): every write tool says what its calls may touch, and a
rail that cannot tell refuses the call (fail closed)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from loom_jupyter.cells import CellChange, ChangeResult, DocCell
from loom_jupyter.messages import ToolSpec, ToolUseBlock
from loom_jupyter.settings import Settings
from loom_jupyter.tools.approval import ApprovalPolicy, ApprovalRequest, declares_rail
from loom_jupyter.tools.base import ToolContext, ToolOutput
from loom_jupyter.tools.cells import InsertCell, RunCell
from loom_jupyter.tools.local_kernel import LocalKernel
from loom_jupyter.tools.registry import ToolRegistry, default_tools

if TYPE_CHECKING:
    from pathlib import Path

RAILS = {
    "run_python": "the code's text: a protected name it reaches with a write, a process or "
    "built code",
    "shell": "the command's text: a protected name it names",
    "write_file": "the path it writes",
    "edit_file": "the path it edits",
    "insert_cell": "the new cell's code when it runs it",
    "run_cell": "the cell's code as the notebook holds it when the call is checked",
    "edit_cell": "nothing outside the notebook: a diff in the cell",
    "delete_cell": "nothing outside the notebook: a diff in the cell",
    "move_cell": "nothing outside the notebook",
    "rebuild_variables": "nothing: a step with effects outside the namespace never runs here",
    "mcp": "its server's process, under the server's approval",
}
"""Every write tool and what its rail reads. A new write tool fails the test below until it
declares a rail and is named here."""


def _mcp_tool() -> Any:
    from loom_jupyter.mcp.tool import McpTool

    return McpTool.__new__(McpTool)


def test_every_write_tool_declares_its_rail() -> None:
    writes = {t.spec.name for t in default_tools() if t.access == "write"}
    assert writes | {"mcp"} == set(RAILS)
    for tool in (*default_tools(), _mcp_tool()):
        if tool.access == "write":
            assert declares_rail(tool), tool


@dataclass
class _Unguarded:
    spec: ClassVar[ToolSpec] = ToolSpec("wipe", "writes things", {"type": "object"})
    access: ClassVar[str] = "write"
    input_type: ClassVar[None] = None

    async def run(self, args: object, ctx: ToolContext) -> ToolOutput:
        return ToolOutput.text("wiped")


def test_a_write_tool_without_a_rail_is_never_registered() -> None:
    with pytest.raises(TypeError, match="declares no guard rail"):
        ToolRegistry([_Unguarded()])  # type: ignore[list-item]


@dataclass
class _Broken(_Unguarded):
    def guard_rail(self, args: object, ctx: ToolContext | None) -> str | None:
        raise ValueError("cannot parse the target")


@pytest.mark.attack(
    attack="A write call whose rail raises counts as having no rail and runs unchecked",
    stopped_by="A rail that cannot tell what a call touches refuses it, with the reason "
    "(fail closed), whatever the mode",
    ref="R5",
)
@pytest.mark.parametrize("mode", ["auto", "ask"])
async def test_a_rail_that_raises_refuses_the_call(mode: str, tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> str:
        asked.append(request)
        return "yes"

    policy = ApprovalPolicy(mode, approver=approver)  # type: ignore[arg-type]
    call = ToolUseBlock(id="c1", name="wipe", input={})
    decision = await policy.check(_Broken(), call, _ctx(tmp_path))  # type: ignore[arg-type]

    assert not decision.allowed
    assert "cannot parse the target" in decision.reason
    assert asked == []


@pytest.mark.attack(
    attack="`insert_cell` with `run` executes code that writes loom.yaml, unchecked while "
    "`run_python` with the same code asks",
    stopped_by="A cell the tool runs is read by the same code rail as run_python",
    ref="R5",
)
async def test_a_cell_insert_cell_runs_is_read_like_run_python(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> str:
        asked.append(request)
        return "no"

    code = "open('loom.yaml', 'w').write('approval: auto')"
    call = ToolUseBlock(id="c1", name="insert_cell", input={"source": code, "run": True})
    policy = ApprovalPolicy("auto", approver=approver)  # type: ignore[arg-type]

    decision = await policy.check(InsertCell(), call, _ctx(tmp_path))

    assert not decision.allowed
    assert [r.tool_name for r in asked] == ["insert_cell"]
    quiet = ToolUseBlock(id="c2", name="insert_cell", input={"source": code, "run": False})
    assert (await policy.check(InsertCell(), quiet, _ctx(tmp_path))).allowed  # not run


def _ctx(folder: Path) -> ToolContext:
    return ToolContext(notebook_dir=folder, settings=Settings(), kernel=LocalKernel())


@dataclass
class _Page:
    """A notebook page holding one cell (the document a front answers for)."""

    source: str
    available: bool = True

    async def apply(self, change: CellChange) -> ChangeResult:
        return ChangeResult(True, cells=(DocCell("c1", "code", self.source),))

    def last_read(self, cell_id: str) -> str | None:
        return self.source


@pytest.mark.attack(
    attack="`run_cell` runs a cell whose code writes loom.yaml; no rail reads it, while "
    "`run_python` with the same code asks",
    stopped_by="run_cell's rail reads the cell's code as the notebook holds it, like "
    "run_python's; no page to read it from refuses the call",
    ref="R5",
)
async def test_run_cell_reads_the_cells_code(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> str:
        asked.append(request)
        return "no"

    policy = ApprovalPolicy("auto", approver=approver)  # type: ignore[arg-type]
    call = ToolUseBlock(id="r1", name="run_cell", input={"cell_id": "c1"})
    writes = _Page("import os; os.system('cp payload .git/hooks/post-checkout')")

    refused = await policy.check(RunCell(), call, replace(_ctx(tmp_path), document=writes))
    plain = await policy.check(RunCell(), call, replace(_ctx(tmp_path), document=_Page("1 + 1")))
    unread = await policy.check(RunCell(), call, _ctx(tmp_path))  # no page holds it

    assert not refused.allowed
    assert [r.tool_name for r in asked] == ["run_cell"]
    assert plain.allowed
    assert not unread.allowed
    assert "could not tell" in unread.reason
