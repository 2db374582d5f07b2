"""The notebook tools that change cells: ``edit_cell``, ``delete_cell``, ``move_cell``,
``run_cell`` and ``insert_cell`` at a position (names and inputs pinned in DESIGN §9).

Every change goes to the live notebook through ``ctx.document`` (the front that holds
it applies it to the notebook model, undoable with the notebook's own undo); the
``.ipynb`` file is never written. Without a front the tools say why and change nothing
(``insert_cell`` with no position still proposes the next cell, as it always did). A
cell is named by its nbformat id; an edit or delete of a cell that changed since the
agent read it is refused so the model reads it again.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from loom_jupyter.cells import CellChange, Provenance
from loom_jupyter.errors import ToolError
from loom_jupyter.messages import TextBlock, ToolSpec
from loom_jupyter.tools.approval import ApprovalRequest
from loom_jupyter.tools.base import ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.guard import code_rail
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema

if TYPE_CHECKING:
    from loom_jupyter.cells import ChangeAction, ChangeResult, DocCell
    from loom_jupyter.tools.base import ExecutionResult, NotebookDocument

__all__ = [
    "CellInput",
    "DeleteCell",
    "EditCell",
    "EditCellInput",
    "InsertCell",
    "InsertCellInput",
    "MoveCell",
    "MoveCellInput",
    "RunCell",
    "cell_diff",
    "change_of",
    "execution_outputs",
]

NO_FRONT = (
    "No JupyterLab or Notebook 7 page has this notebook open with the Loom extension, so "
    "its cells cannot be changed from here (this also happens in VS Code, papermill or a "
    "terminal); nothing was changed. Tell the person what to change, or use run_python."
)
CHANGE_MARK = "The change:\n"  # before the diff in an edit's result (change_of finds it)
DIFF_LINES = 40  # lines of a diff shown in a result (the cell holds the whole change)

CellId = Annotated[str, Limit(min_length=1, max_length=200)]
"""A cell's nbformat id, as read_notebook shows it."""
_SOURCE_CHARS = 200_000


@dataclass(frozen=True, kw_only=True)
class CellInput(ToolInput):
    """``delete_cell``, ``run_cell``: one cell."""

    cell_id: CellId


@dataclass(frozen=True, kw_only=True)
class EditCellInput(ToolInput):
    """``edit_cell``: the cell and its whole new source."""

    cell_id: CellId
    source: Annotated[str, Limit(max_length=_SOURCE_CHARS)]


@dataclass(frozen=True, kw_only=True)
class MoveCellInput(ToolInput):
    """``move_cell``: the cell, and the cell to put it below (``None``: the top)."""

    cell_id: CellId
    after_cell_id: Annotated[str, Limit(max_length=200)] | None


@dataclass(frozen=True, kw_only=True)
class InsertCellInput(ToolInput):
    """``insert_cell``: the new cell; no ``after_cell_id`` puts it below the person's cell."""

    source: Annotated[str, Limit(min_length=1, max_length=_SOURCE_CHARS)]
    cell_type: Literal["code", "markdown"] = "code"
    after_cell_id: Annotated[str, Limit(max_length=200)] | None = None
    run: bool = False


def cell_diff(before: str, after: str, limit: int = DIFF_LINES) -> str:
    """A unified diff of a cell's source, at most ``limit`` lines ("" when equal)."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), "before", "after", n=1, lineterm=""
        )
    )[2:]
    if len(lines) > limit:
        lines = [*lines[:limit], f"… ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)


def _document(ctx: ToolContext) -> NotebookDocument:
    if ctx.document is None or not ctx.document.available:
        raise ToolError(NO_FRONT)
    return ctx.document


def _provenance(ctx: ToolContext, action: ChangeAction) -> Provenance | None:
    if ctx.session_id is None or ctx.asked_at is None or ctx.call_id is None:
        return None
    return Provenance(ctx.session_id, ctx.asked_at, ctx.call_id, action)


def _refused(result: ChangeResult, cell_id: str | None) -> ToolError:
    if result.code == "changed":
        return ToolError(
            f"Cell {cell_id} changed since you read it — read it again (read_notebook) and "
            "make your change to what it holds now. Nothing was changed."
        )
    if result.code == "no_front":
        return ToolError(NO_FRONT)
    if result.code == "missing":
        return ToolError(
            f"There is no cell {cell_id} in the notebook (it may have been deleted); "
            "read_notebook lists the cells and their ids. Nothing was changed."
        )
    return ToolError(result.error or "The notebook could not be changed; nothing was changed.")


async def _apply(ctx: ToolContext, change: CellChange) -> ChangeResult:
    result = await _document(ctx).apply(change)
    if not result.ok:
        raise _refused(result, change.cell_id)
    return result


def _where(result: ChangeResult, ctx: ToolContext) -> str:
    """Where the cell is now, and the turn that changed it (what its marker says)."""
    at = f"position {result.index + 1}" if result.index is not None else "the notebook"
    return f"{at}, in turn {ctx.asked_at}" if ctx.asked_at is not None else at


class EditCell(TypedTool[EditCellInput]):
    """``edit_cell``: replace a cell's whole source (a diff in the cell under ``ask``)."""

    input_type = EditCellInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="edit_cell",
        description=(
            "Replace the whole source of one cell of the person's open notebook, named by its "
            "id (read_notebook lists ids). The person sees the change as a diff in the cell "
            "and may accept or reject it. Read the cell first: a cell changed since you read "
            "it is refused."
        ),
        input_schema=input_schema(EditCellInput),
    )

    def guard_rail(self, args: EditCellInput, ctx: ToolContext | None) -> str | None:
        """None: it replaces a cell's source in the live notebook (a diff the person sees);
        it writes no file and runs no code."""
        return None

    def approval_request(self, args: EditCellInput, ctx: ToolContext | None) -> ApprovalRequest:
        """The change as a diff against the source the agent last read."""
        cell_id, source = args.cell_id, args.source
        before = ctx.document.last_read(cell_id) if ctx and ctx.document else None
        detail = cell_diff(before, source) if before is not None else source
        return ApprovalRequest("edit_cell", f"edit cell {cell_id}", detail)

    async def run(self, args: EditCellInput, ctx: ToolContext) -> ToolOutput:
        """Send the edit; report what the cell holds now."""
        document = _document(ctx)
        cell_id, source = args.cell_id, args.source
        change = CellChange(
            "edit",
            cell_id=cell_id,
            source=source,
            base_source=document.last_read(cell_id),
            show_diff=ctx.approval_mode == "auto",
            provenance=_provenance(ctx, "edited"),
        )
        result = await _apply(ctx, change)
        diff = cell_diff(result.before or "", source) or "(the source was already this)"
        text = f"Edited cell {cell_id} (at {_where(result, ctx)}). {CHANGE_MARK}{diff}"
        return ToolOutput.text(text, summary=f"edited cell {cell_id}")


class DeleteCell(TypedTool[CellInput]):
    """``delete_cell``: remove one cell."""

    input_type = CellInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="delete_cell",
        description="Delete one cell of the person's open notebook, named by its id.",
        input_schema=input_schema(CellInput),
    )

    def guard_rail(self, args: CellInput, ctx: ToolContext | None) -> str | None:
        """None: it deletes a cell of the live notebook (a diff the person sees); it writes no
        file and runs no code."""
        return None

    def approval_request(self, args: CellInput, ctx: ToolContext | None) -> ApprovalRequest:
        """Shows what the cell held when the agent read it."""
        cell_id = args.cell_id
        before = ctx.document.last_read(cell_id) if ctx and ctx.document else None
        return ApprovalRequest("delete_cell", f"delete cell {cell_id}", before or "")

    async def run(self, args: CellInput, ctx: ToolContext) -> ToolOutput:
        """Send the delete; report what was removed."""
        cell_id = args.cell_id
        base = _document(ctx).last_read(cell_id)
        change = CellChange(
            "delete", cell_id=cell_id, base_source=base, provenance=_provenance(ctx, "deleted")
        )
        result = await _apply(ctx, change)
        lines = (result.before or "").count("\n") + 1
        text = f"Deleted cell {cell_id} ({lines} line(s)) from {_where(result, ctx)}."
        return ToolOutput.text(text, summary=f"deleted cell {cell_id}")


class MoveCell(TypedTool[MoveCellInput]):
    """``move_cell``: put a cell below another (or at the top)."""

    input_type = MoveCellInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="move_cell",
        description=(
            "Move one cell of the person's open notebook below the cell after_cell_id "
            "(null: to the top)."
        ),
        input_schema=input_schema(MoveCellInput),
    )

    def guard_rail(self, args: MoveCellInput, ctx: ToolContext | None) -> str | None:
        """None: it moves a cell of the live notebook (a diff the person sees); it writes no
        file and runs no code."""
        return None

    async def run(self, args: MoveCellInput, ctx: ToolContext) -> ToolOutput:
        """Send the move; report the new position."""
        cell_id, after = args.cell_id, args.after_cell_id
        change = CellChange(
            "move", cell_id=cell_id, after_cell_id=after, provenance=_provenance(ctx, "moved")
        )
        result = await _apply(ctx, change)
        below = f"below cell {after}" if after else "to the top"
        return ToolOutput.text(
            f"Moved cell {cell_id} {below} (now at {_where(result, ctx)}).",
            summary=f"moved cell {cell_id}",
        )


class RunCell(TypedTool[CellInput]):
    """``run_cell``: run a cell's source in the kernel, its outputs shown in that cell."""

    input_type = CellInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="run_cell",
        description=(
            "Run one cell of the person's open notebook in the kernel, as the person would; "
            "its outputs appear in that cell and come back to you."
        ),
        input_schema=input_schema(CellInput),
    )

    def approval_request(self, args: CellInput, ctx: ToolContext | None) -> ApprovalRequest:
        """Names the cell (when its source cannot be read; see :meth:`describe_call`)."""
        cell_id = args.cell_id
        return ApprovalRequest("run_cell", f"run cell {cell_id}", f"cell {cell_id}")

    async def describe_call(self, args: CellInput, ctx: ToolContext) -> ApprovalRequest:
        """The cell's source as it is now in the notebook: what the person approves to run."""
        cell_id = args.cell_id
        cell = _cell(await _apply(ctx, CellChange("read", include_outputs=False)), cell_id)
        lines = cell.source.count("\n") + 1
        return ApprovalRequest("run_cell", f"run cell {cell_id} ({lines} lines)", cell.source)

    def runs_code(self, args: CellInput) -> bool:
        """Always: the protected files are checked after it."""
        return True

    async def code_rail(self, args: CellInput, ctx: ToolContext) -> str | None:
        """The rail the cell's source names, as the notebook holds it now (the same text a
        ``run_python`` of it would be checked for)."""
        cell = _cell(await _apply(ctx, CellChange("read", include_outputs=False)), args.cell_id)
        return code_rail(cell.source) if cell.cell_type == "code" else None

    async def run(self, args: CellInput, ctx: ToolContext) -> ToolOutput:
        """Read the cell's source from the live notebook, run it, write its outputs there."""
        from loom_jupyter.tools.kernel import execution_output

        cell_id = args.cell_id
        cell = _cell(await _apply(ctx, CellChange("read", include_outputs=False)), cell_id)
        if cell.cell_type != "code":
            raise ToolError(f"Cell {cell_id} is a {cell.cell_type} cell; only code cells run.")
        result = await ctx.kernel.run_code(cell.source, source="run_cell", cell_id=cell_id)
        outputs = execution_outputs(result)
        change = CellChange(
            "outputs", cell_id=cell_id, outputs=outputs, execution_count=result.execution_count
        )
        await _apply(ctx, change)
        summary = f"ran cell {cell_id}" + (" (error)" if result.error else "")
        return execution_output(result, summary)


def _cell(result: ChangeResult, cell_id: str) -> DocCell:
    for cell in result.cells:
        if cell.id == cell_id:
            return cell
    raise ToolError(
        f"There is no cell {cell_id} in the notebook; read_notebook lists the cells and their ids."
    )


def execution_outputs(result: ExecutionResult) -> tuple[dict[str, Any], ...]:
    """A run's outputs as nbformat outputs, in the order a cell shows them."""
    outputs: list[dict[str, Any]] = []
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        if text:
            outputs.append({"output_type": "stream", "name": name, "text": text})
    for image in result.images:
        data = {image.media_type: image.data, "text/plain": "<Figure>"}
        outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
    if result.result is not None:
        outputs.append(
            {
                "output_type": "execute_result",
                "data": {"text/plain": result.result},
                "metadata": {},
                "execution_count": result.execution_count,
            }
        )
    if result.error:
        name, _, value = result.error.partition(":")
        outputs.append(
            {
                "output_type": "error",
                "ename": name.strip() or "Error",
                "evalue": value.strip(),
                "traceback": result.error.splitlines(),
            }
        )
    return tuple(outputs)


class InsertCell(TypedTool[InsertCellInput]):
    """``insert_cell``: a new cell below another (or at the top), run if asked."""

    input_type = InsertCellInput
    access: ClassVar[ToolAccess] = "write"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="insert_cell",
        description=(
            "Insert a new cell in the person's open notebook below the cell after_cell_id "
            "(null: at the top; leave it out to put it below the current cell), code or "
            "markdown. Set run to true to also run a code cell."
        ),
        input_schema=input_schema(InsertCellInput),
    )

    def runs_code(self, args: InsertCellInput) -> bool:
        """When it runs the code cell it inserts."""
        return args.run and args.cell_type == "code"

    def guard_rail(self, args: InsertCellInput, ctx: ToolContext | None) -> str | None:
        """A code cell it runs: the rail its source names; else none (a cell, not a file)."""
        return code_rail(args.source) if args.run and args.cell_type == "code" else None

    def approval_request(self, args: InsertCellInput, ctx: ToolContext | None) -> ApprovalRequest:
        """Shows the cell's source."""
        verb = "insert and run" if args.run else "insert"
        return ApprovalRequest("insert_cell", f"{verb} a notebook cell", args.source)

    async def run(self, args: InsertCellInput, ctx: ToolContext) -> ToolOutput:
        """Insert through the front; without one and without a position, propose the next cell."""
        source, run, after = args.source, args.run, args.after_cell_id
        front = ctx.document is not None and ctx.document.available
        if not front and after is None:
            message = await ctx.kernel.insert_cell(source, run=run)
            return ToolOutput.text(message, summary="proposed a cell")
        change = CellChange(
            "insert",
            after_cell_id=after,
            below_active=after is None,  # left out (or null): below the person's cell
            source=source,
            cell_type=args.cell_type,
            provenance=_provenance(ctx, "inserted"),
        )
        result = await _apply(ctx, change)
        cell_id = result.cell.id if result.cell is not None else "?"
        text = f"Inserted {change.cell_type} cell {cell_id} at {_where(result, ctx)}."
        if run and change.cell_type == "code":
            ran = await RunCell().run(CellInput(cell_id=cell_id), ctx)
            summary = f"inserted and ran cell {cell_id}"
            return replace(ran, content=(TextBlock(text), *ran.content), summary=summary)
        return ToolOutput.text(text, summary=f"inserted cell {cell_id}")


def change_of(result: str) -> str | None:
    """The diff at the end of an ``edit_cell`` result; None when there is none."""
    at = result.find(CHANGE_MARK)
    return result[at + len(CHANGE_MARK) :] if at >= 0 else None
