"""The notebook's cells as the agent reads and changes them (DESIGN §9).

Values shared by the notebook tools (``tools/cells.py``), the host that sends each
change to the front holding the notebook (``host/runtime/document.py``) and the wire between
them (``host/wire/protocol.py``: ``notebook_request`` / ``notebook_reply``). A cell is named
by its nbformat ``id``. The kernel never writes the ``.ipynb``: the front applies every
change to the live notebook, so the notebook's own undo takes it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CellChange",
    "CellType",
    "ChangeAction",
    "ChangeResult",
    "DocCell",
    "NotebookOp",
    "Provenance",
    "ResultCode",
    "RevertStep",
]

CellType = Literal["code", "markdown", "raw"]
NotebookOp = Literal["read", "insert", "edit", "delete", "move", "outputs", "revert"]
ChangeAction = Literal["inserted", "edited", "deleted", "moved"]
ResultCode = Literal["", "changed", "missing", "conflict", "failed", "no_front", "timeout"]


@dataclass(frozen=True)
class Provenance:
    """Which call made a change: kept in the cell's ``metadata.loom`` (inserted, edited)
    and, for every change, in the archive so its turn can be reverted."""

    session: str
    turn: int
    """The person's message (archive turn number) the change answered."""
    tool_call: str
    action: ChangeAction
    """What the call did; a cell's ``metadata.loom`` only ever says inserted or edited."""


@dataclass(frozen=True)
class DocCell:
    """One cell of the live notebook as the front reports it."""

    id: str
    cell_type: CellType
    source: str
    execution_count: int | None = None
    outputs: str = ""
    """The outputs as text, each trimmed by the front; images are named, never inlined."""
    error: str | None = None
    """``ename: evalue`` when the cell's last run raised."""
    provenance: Provenance | None = None


@dataclass(frozen=True)
class RevertStep:
    """Undo one change of a turn (steps come newest first)."""

    cell_id: str
    action: ChangeAction
    before: str | None = None
    """The source before the change (edited, deleted)."""
    after: str | None = None
    """The source the change left (inserted, edited): the cell must still hold it."""
    cell_type: CellType = "code"
    index: int | None = None
    """Where a deleted cell stood (0-based)."""
    after_cell_id: str | None = None
    """Where a moved cell was before the move (`null`: at the top)."""


@dataclass(frozen=True)
class CellChange:
    """What the agent asks of the notebook: a read, one change, outputs, or a revert."""

    op: NotebookOp
    cell_id: str | None = None
    after_cell_id: str | None = None
    """Insert or move below this cell; `null` puts the cell at the top."""
    source: str | None = None
    cell_type: CellType = "code"
    base_source: str | None = None
    """The source the agent last read: a cell that now holds something else is refused."""
    show_diff: bool = False
    """Keep a diff in the cell after applying, until the person dismisses it."""
    provenance: Provenance | None = None
    outputs: tuple[dict[str, Any], ...] = ()
    """nbformat outputs to put in the cell (`outputs`: a run_cell's result)."""
    execution_count: int | None = None
    steps: tuple[RevertStep, ...] = ()
    include_outputs: bool = True
    below_active: bool = False
    """Insert below the person's active cell (``after_cell_id`` is then ignored)."""


@dataclass(frozen=True)
class ChangeResult:
    """What the front did: the cells read, the cell changed, or why nothing changed."""

    ok: bool
    error: str = ""
    """When not ok: a sentence for the model (and the person)."""
    code: ResultCode = ""
    cells: tuple[DocCell, ...] = ()
    cell: DocCell | None = None
    index: int | None = None
    before: str | None = None
    """The cell's source before an edit or delete."""
    conflicts: tuple[str, ...] = ()
    """A refused revert: the cells changed since the turn."""
    was_after: str | None = None
    """A move: the id of the cell that was just above the moved one (`""`: it was first)."""

    @classmethod
    def refused(cls, error: str, code: ResultCode = "failed") -> ChangeResult:
        """Nothing changed, for ``error``."""
        return cls(False, error, code)
