"""The live notebook, through the one front that holds it (the notebook tools' document).

:class:`FrontDocument` sends each :class:`~loom_jupyter.cells.CellChange` as a
``notebook_request`` to the page that holds the notebook (:attr:`FrontDocument.front`,
set by the sidebar front) and waits for its ``notebook_reply``. It remembers the source
of every cell as the agent last read or wrote it (the front refuses an edit of a cell
changed since), keeps each applied change in the archive so its turn can be reverted,
and tells the model which cells the person edited between turns.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Protocol

from loom_jupyter.cells import CellChange, ChangeResult, RevertStep

if TYPE_CHECKING:
    from loom_jupyter.archive import Archive
    from loom_jupyter.cells import CellType, DocCell
    from loom_jupyter.host.wire.protocol import NotebookRequest

__all__ = ["DocumentFront", "FrontDocument"]

ANSWER_SECONDS = 30.0
"""How long a front may take to answer (a change is one model update; a read is quick)."""
NOTE_CHARS = 4000
"""The most of the person's edits told to the model before a turn."""


class DocumentFront(Protocol):
    """Where notebook requests go: the sidebar front of the page holding the notebook."""

    def holds_notebook(self) -> bool:
        """Whether an open page holds the notebook and applies changes to it."""
        ...

    def send_request(self, request: NotebookRequest) -> bool:
        """Send ``request`` to that page; False when none holds the notebook any more."""
        ...


class FrontDocument:
    """A :class:`~loom_jupyter.tools.base.NotebookDocument` over the sidebar's comm."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self.archive: Archive | None = None  # set once the host opened it
        self._front: DocumentFront | None = None  # the pages' hub, once it exists
        self._waiting: dict[str, asyncio.Future[ChangeResult]] = {}
        self._read: dict[str, str] = {}  # cell id -> source, as the agent last read or wrote it
        self._types: dict[str, CellType] = {}
        self._known: dict[str, str] | None = None  # the notebook as the model was last told

    @property
    def available(self) -> bool:
        """Whether a front holds the notebook now."""
        return self._front is not None and self._front.holds_notebook()

    def attach(self, front: DocumentFront) -> None:
        """The pages' hub carries notebook changes to the page that holds the notebook."""
        self._front = front

    def last_read(self, cell_id: str) -> str | None:
        """The cell's source as the agent last read or wrote it; None if never."""
        return self._read.get(cell_id)

    def settle(self, request_id: str, result: ChangeResult) -> None:
        """The front's answer (engine loop); a late or unknown answer is dropped."""
        future = self._waiting.get(request_id)
        if future is not None and not future.done():
            future.set_result(result)

    async def apply(self, change: CellChange) -> ChangeResult:
        """Ask the front; remember what the agent now knows; archive an applied change."""
        result = await self._ask(change)
        if result.ok:
            self._remember(change, result)
            await self._record(change, result)
        return result

    async def peek(self, change: CellChange) -> ChangeResult:
        """Ask the front (a read) without changing what the agent is known to have read:
        the sidebar's ``@`` completions and mentions look at the cells this way."""
        return await self._ask(change)

    async def _ask(self, change: CellChange) -> ChangeResult:
        front = self._front
        if front is None:
            return ChangeResult.refused("", "no_front")
        from loom_jupyter.host.wire.protocol import NotebookRequest  # with the first front

        request_id = uuid.uuid4().hex
        future: asyncio.Future[ChangeResult] = self._loop.create_future()
        self._waiting[request_id] = future
        try:
            if not front.send_request(NotebookRequest(request_id, change)):
                return ChangeResult.refused("", "no_front")
            return await asyncio.wait_for(future, ANSWER_SECONDS)
        except TimeoutError:
            return ChangeResult.refused(
                "The notebook's page did not answer in time (it may have been closed or "
                "reloaded); nothing is known to have changed: read the notebook again.",
                "timeout",
            )
        finally:
            self._waiting.pop(request_id, None)

    # -- what the agent knows -----------------------------------------------------------

    def _remember(self, change: CellChange, result: ChangeResult) -> None:
        if change.op == "read":
            self._read = {cell.id: cell.source for cell in result.cells}
            self._types = {cell.id: cell.cell_type for cell in result.cells}
            self._known = dict(self._read)
            return
        cell = result.cell
        if change.op in ("insert", "edit") and cell is not None:
            self._learn(cell.id, cell.source, cell.cell_type)
        elif change.op == "delete" and change.cell_id is not None:
            self._forget(change.cell_id)
        elif change.op == "revert":
            for step in change.steps:
                self._undone(step)

    def _learn(self, cell_id: str, source: str, cell_type: CellType) -> None:
        self._read[cell_id] = source
        self._types[cell_id] = cell_type
        if self._known is not None:
            self._known[cell_id] = source

    def _forget(self, cell_id: str) -> None:
        self._read.pop(cell_id, None)
        if self._known is not None:
            self._known.pop(cell_id, None)

    def _undone(self, step: RevertStep) -> None:
        if step.action == "inserted":
            self._forget(step.cell_id)
        elif step.action in ("edited", "deleted") and step.before is not None:
            self._learn(step.cell_id, step.before, step.cell_type)

    async def _record(self, change: CellChange, result: ChangeResult) -> None:
        """Keep an applied change for ``revert_turn``."""
        origin = change.provenance
        step = _step(change, result, self._types.get(change.cell_id or "", "code"))
        if origin is not None and step is not None and self.archive is not None:
            await self.archive.record_cell_change(
                origin.session, origin.turn, origin.tool_call, step
            )

    # -- the person's edits between turns ------------------------------------------------

    async def edits_note(self) -> str | None:
        """The cells the person changed since the model last saw the notebook, as a short
        note with diffs (None when nothing changed, or no front holds the notebook)."""
        if not self.available:
            return None
        known = self._known
        read = await self._ask(CellChange("read", include_outputs=False))
        if not read.ok:
            return None
        now = {cell.id: cell.source for cell in read.cells}
        self._known = now
        if known is None:
            return None  # the first look: nothing to compare with yet
        return _edits_note(known, read.cells)


def _step(change: CellChange, result: ChangeResult, cell_type: CellType) -> RevertStep | None:
    """What undoing an applied change needs (None: a read, outputs, a revert)."""
    cell_id = change.cell_id or ""
    if change.op == "insert" and result.cell is not None:
        inserted = result.cell.id
        return RevertStep(inserted, "inserted", after=change.source, cell_type=change.cell_type)
    if change.op == "edit":
        return RevertStep(cell_id, "edited", before=result.before, after=change.source)
    if change.op == "delete":
        source, index = result.before, result.index
        return RevertStep(cell_id, "deleted", source, cell_type=cell_type, index=index)
    if change.op == "move" and result.was_after is not None:
        return RevertStep(cell_id, "moved", after_cell_id=result.was_after or None)
    return None


def _edits_note(known: dict[str, str], cells: tuple[DocCell, ...]) -> str | None:
    from loom_jupyter.tools.cells import cell_diff

    lines: list[str] = []
    for position, cell in enumerate(cells, 1):
        old = known.get(cell.id)
        if old is None:
            lines.append(f"- new cell {cell.id} at position {position}")
        elif old != cell.source:
            lines.append(
                f"- cell {cell.id} (position {position}) edited:\n{cell_diff(old, cell.source, 12)}"
            )
    present = {cell.id for cell in cells}
    lines += [f"- cell {cell_id} deleted" for cell_id in known if cell_id not in present]
    if not lines:
        return None
    text = "\n".join(lines)
    if len(text) > NOTE_CHARS:
        text = text[:NOTE_CHARS] + "\n… (more edits; read_notebook shows the cells)"
    return (
        "The person edited the notebook since your last turn (read a cell again before "
        f"editing it):\n{text}"
    )
