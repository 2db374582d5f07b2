"""``read_notebook``: the notebook's cells, each with its id, plus the kernel's recent inputs.

When a page holds the notebook (``ctx.document``), the cells are the live document the
person sees, unsaved edits included. Otherwise the ``.ipynb`` file is read as plain JSON
with :mod:`json` (nbformat is not a runtime dependency): what was last saved, and the
kernel's history shows what ran since.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from loom_jupyter.cells import CellChange
from loom_jupyter.errors import ToolError
from loom_jupyter.messages import ToolSpec
from loom_jupyter.tools.base import FileEffect, ToolAccess, ToolContext, ToolOutput, TypedTool
from loom_jupyter.tools.schema import Limit, ToolInput, input_schema

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from loom_jupyter.cells import DocCell

__all__ = ["ReadNotebook", "ReadNotebookInput", "render_cells"]

_OUTPUT_CHARS = 600  # per output; the notebook's outputs can be huge
_SOURCE_CHARS = 4000  # per cell source
_HISTORY_CHARS = 1500  # per history entry


@dataclass(frozen=True, kw_only=True)
class ReadNotebookInput(ToolInput):
    """``read_notebook``: which cells (1-based, inclusive), their outputs, how much history."""

    start_cell: Annotated[int, Limit(ge=1)] | None = None
    end_cell: Annotated[int, Limit(ge=1)] | None = None
    include_outputs: bool = True
    history: Annotated[int, Limit(ge=0, le=100)] = 10


class ReadNotebook(TypedTool[ReadNotebookInput]):
    """``read_notebook``: numbered cells (source + trimmed outputs) and the kernel history."""

    input_type = ReadNotebookInput
    access: ClassVar[ToolAccess] = "read"
    spec: ClassVar[ToolSpec] = ToolSpec(
        name="read_notebook",
        description=(
            "Read the person's notebook as they see it (unsaved edits included when the page is "
            "open; else as last saved): numbered cells with their id (edit_cell and the other "
            "cell tools take it), source and trimmed outputs (start_cell/end_cell for a range, "
            "1-based), plus the code this kernel ran most recently (`history` entries)."
        ),
        input_schema=input_schema(ReadNotebookInput),
    )

    async def run(self, args: ReadNotebookInput, ctx: ToolContext) -> ToolOutput:
        """The cells in range, then the kernel's recent inputs."""
        live = ctx.document is not None and ctx.document.available
        parts = [await _live_part(ctx, args) if live else _notebook_part(ctx, args)]
        limit = args.history
        if limit:
            parts.append(_history_part(await ctx.kernel.input_history(limit)))
        output = ToolOutput.text("\n\n".join(parts), summary="read the notebook")
        if ctx.notebook_path is None:
            return output
        return output.with_effects(FileEffect(_shown(ctx, ctx.notebook_path), "read"))


def _shown(ctx: ToolContext, path: Path) -> str:
    try:
        return path.resolve().relative_to(ctx.notebook_dir.resolve()).as_posix()
    except ValueError:
        return str(path)


async def _live_part(ctx: ToolContext, args: ReadNotebookInput) -> str:
    """The live notebook's cells, read through the page that holds it."""
    assert ctx.document is not None
    outputs = args.include_outputs
    result = await ctx.document.apply(CellChange("read", include_outputs=outputs))
    if not result.ok:
        return _notebook_part(ctx, args) + f"\n(The open page did not answer: {result.error})"
    cells = result.cells
    start, end = _span(args, len(cells))
    body = "\n".join(
        _render_live(i, cell, outputs) for i, cell in enumerate(cells, 1) if start <= i <= end
    )
    name = ctx.notebook_path.name if ctx.notebook_path else "the notebook"
    span = (
        f"{len(cells)} cells; showing {start}-{min(end, len(cells))}; live, unsaved edits included"
    )
    return f"Notebook {name} ({span}):\n{body or '(no cells in that range)'}"


def _span(args: ReadNotebookInput, count: int) -> tuple[int, int]:
    start = args.start_cell if args.start_cell is not None else 1
    end = args.end_cell if args.end_cell is not None else max(count, start)  # none: (empty)
    if end < start:
        raise ToolError(f"end_cell ({end}) is before start_cell ({start}).")
    return start, end


def _render_live(number: int, cell: DocCell, outputs: bool) -> str:
    count = f", In [{cell.execution_count}]" if cell.execution_count is not None else ""
    mark = cell.provenance
    wrote = f" (Loom {mark.action} it in turn {mark.turn})" if mark is not None else ""
    label = f"[cell {number} id={cell.id}] {cell.cell_type}{count}{wrote}"
    source = _cut(cell.source, _SOURCE_CHARS)
    lines = [label, source if source.strip() else "(empty)"]
    if outputs and cell.outputs.strip():
        lines.append("  -> " + _cut(cell.outputs, _OUTPUT_CHARS * 2).replace("\n", "\n     "))
    return "\n".join(lines)


def _notebook_part(ctx: ToolContext, args: ReadNotebookInput) -> str:
    path = ctx.notebook_path
    if path is None:
        return "No notebook file is known for this session (running outside a notebook)."
    if not path.is_file():
        return f"The notebook file {path.name} is not saved on disk yet."
    cells = _load_cells(path)
    start, end = _span(args, len(cells))
    body = render_cells(cells, start, end, outputs=args.include_outputs)
    span = f"{len(cells)} cells; showing {start}-{min(end, len(cells))}"
    return f"Notebook {path.name} ({span}):\n{body}"


def _load_cells(path: Path) -> list[Mapping[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ToolError(
            f"{path.name} could not be read as a notebook ({type(exc).__name__}: {exc}). "
            "Use read_file to look at it as text."
        ) from exc
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise ToolError(f"{path.name} has no cell list; it is not an nbformat 4 notebook.")
    return [c for c in cells if isinstance(c, dict)]


def render_cells(cells: Sequence[Mapping[str, Any]], start: int, end: int, *, outputs: bool) -> str:
    """Cells ``start..end`` (1-based, inclusive) as numbered text."""
    rendered = [
        _render_cell(i, cell, outputs) for i, cell in enumerate(cells, 1) if start <= i <= end
    ]
    return "\n".join(rendered) if rendered else "(no cells in that range)"


def _render_cell(number: int, cell: Mapping[str, Any], outputs: bool) -> str:
    kind = str(cell.get("cell_type", "code"))
    count = cell.get("execution_count")
    named = f" id={cell['id']}" if cell.get("id") else ""
    label = f"[cell {number}{named}] {kind}" + (f", In [{count}]" if count is not None else "")
    source = _cut(_joined(cell.get("source", "")), _SOURCE_CHARS)
    lines = [label, source if source.strip() else "(empty)"]
    if outputs and kind == "code":
        lines += [_render_output(o) for o in cell.get("outputs", []) if isinstance(o, dict)]
    return "\n".join(lines)


def _render_output(output: Mapping[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        text = _joined(output.get("text", ""))
        return f"  -> {output.get('name', 'stdout')}: {_cut(text, _OUTPUT_CHARS)}"
    if kind == "error":
        return f"  -> error: {output.get('ename', 'Error')}: {output.get('evalue', '')}"
    data = output.get("data", {})
    if not isinstance(data, dict):
        return "  -> (output)"
    if "text/plain" in data:
        text = _cut(_joined(data["text/plain"]), _OUTPUT_CHARS)
        return f"  -> {text}" + (" [+ image]" if "image/png" in data else "")
    kinds = ", ".join(sorted(data)) or "empty"
    return f"  -> ({kinds} output)"


def _history_part(history: Sequence[tuple[int, str]]) -> str:
    if not history:
        return "Kernel history: nothing has run in this kernel yet."
    rows = [f"In [{count}]: {_cut(source, _HISTORY_CHARS)}" for count, source in history]
    return f"Kernel history (last {len(history)} runs, oldest first):\n" + "\n".join(rows)


def _joined(value: object) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _cut(text: str, limit: int) -> str:
    text = text.rstrip()
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit:,} chars cut]"
