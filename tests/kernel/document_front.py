"""A page holding a notebook, as the kernel sees it over the ``loom`` comm.

It answers ``notebook_request`` messages the way the labextension does (DESIGN §9,
``labextension/src/document.ts``), on an in-memory list of cells, so the kernel's side
of the contract is tested without a browser; the browser tests drive the real page.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from .sidebar_wire import Wire

Json = dict[str, Any]


@dataclass
class Cell:
    id: str
    source: str
    cell_type: str = "code"
    outputs: list[Json] = field(default_factory=list)
    execution_count: int | None = None
    metadata: Json = field(default_factory=dict)


@dataclass
class DocumentFront:
    """The notebook a page holds, and the requests it answered."""

    wire: Wire
    comm: str
    cells: list[Cell]
    subshell: str | None = None  # as the real page: its comm rides a kernel subshell
    on_screen: bool = True  # what its pongs say: the page shows the notebook
    answered: set[str] = field(default_factory=set)
    requests: list[Json] = field(default_factory=list)

    def serve(self) -> None:
        """Answer every notebook request (and ``ping``: this page is here) on the comm."""
        for data in self.wire.comm_events(self.comm):
            if data["type"] == "ping" and data["ping_id"] not in self.answered:
                self.answered.add(data["ping_id"])
                pong = {"type": "pong", "ping_id": data["ping_id"], "on_screen": self.on_screen}
                self.wire.send(self.comm, pong, subshell=self.subshell)
                continue
            if data["type"] != "notebook_request" or data["request_id"] in self.answered:
                continue
            self.answered.add(data["request_id"])
            self.requests.append(data["change"])
            result = self._apply(data["change"])
            reply = {"type": "notebook_reply", "request_id": data["request_id"], "result": result}
            self.wire.send(self.comm, reply, subshell=self.subshell)

    def wait(self, found: Callable[[], Any], what: str) -> Any:
        """Wait for ``found()``, answering requests meanwhile."""

        def step() -> Any:
            self.serve()
            return found()

        return self.wire.wait(step, what)

    def source_of(self, cell_id: str) -> str:
        return next(c.source for c in self.cells if c.id == cell_id)

    # -- the ops -----------------------------------------------------------------

    def _apply(self, change: Json) -> Json:
        op = change["op"]
        if op == "read":
            return ok(cells=[self._doc(c, change["include_outputs"]) for c in self.cells])
        if op == "insert":
            return self._insert(change)
        if op == "revert":
            return self._revert(change["steps"])
        at = self._index(change["cell_id"])
        if at is None:
            return refused("no such cell", "missing")
        cell = self.cells[at]
        base = change.get("base_source")
        if op in ("edit", "delete") and base is not None and base != cell.source:
            return refused("changed since read", "changed")
        if op == "edit":
            before, cell.source = cell.source, change["source"]
            self._mark(cell, change)
            return ok(cell=self._doc(cell, False), index=at, before=before)
        if op == "delete":
            del self.cells[at]
            return ok(index=at, before=cell.source)
        if op == "move":
            was_after = self.cells[at - 1].id if at > 0 else ""
            del self.cells[at]
            to = self._after(change["after_cell_id"])
            self.cells.insert(to, cell)
            return ok(cell=self._doc(cell, False), index=to, was_after=was_after)
        if op == "outputs":
            cell.outputs = list(change["outputs"])
            cell.execution_count = change["execution_count"]
            return ok(cell=self._doc(cell, True), index=at)
        raise AssertionError(op)

    def _insert(self, change: Json) -> Json:
        cell = Cell(uuid.uuid4().hex[:8], change["source"], change["cell_type"])
        self._mark(cell, change)
        active = len(self.cells)  # the person's active cell: the last one here
        to = active if change["below_active"] else self._after(change["after_cell_id"])
        self.cells.insert(to, cell)
        return ok(cell=self._doc(cell, False), index=to)

    def _revert(self, steps: list[Json]) -> Json:
        conflicts = [
            s["cell_id"]
            for s in steps
            if s["action"] in ("inserted", "edited")
            and (self._index(s["cell_id"]) is None or self.source_of(s["cell_id"]) != s["after"])
        ]
        if conflicts:
            return {**refused("changed since", "conflict"), "conflicts": conflicts}
        for step in steps:
            self._undo(step)
        return ok()

    def _undo(self, step: Json) -> None:
        at = self._index(step["cell_id"])
        if step["action"] == "inserted" and at is not None:
            del self.cells[at]
        elif step["action"] == "edited" and at is not None:
            self.cells[at].source = step["before"]
        elif step["action"] == "deleted":
            cell = Cell(step["cell_id"], step["before"], step["cell_type"])
            self.cells.insert(min(step["index"], len(self.cells)), cell)
        elif step["action"] == "moved" and at is not None:
            cell = self.cells.pop(at)
            self.cells.insert(self._after(step["after_cell_id"]), cell)

    def _mark(self, cell: Cell, change: Json) -> None:
        origin = change.get("provenance")
        if origin is not None:
            cell.metadata["loom"] = origin

    def _index(self, cell_id: str) -> int | None:
        return next((i for i, c in enumerate(self.cells) if c.id == cell_id), None)

    def _after(self, cell_id: str | None) -> int:
        if cell_id is None:
            return 0
        at = self._index(cell_id)
        return len(self.cells) if at is None else at + 1

    def _doc(self, cell: Cell, outputs: bool) -> Json:
        text = "".join(o.get("text", "") for o in cell.outputs) if outputs else ""
        return {
            "id": cell.id,
            "cell_type": cell.cell_type,
            "source": cell.source,
            "execution_count": cell.execution_count,
            "outputs": text,
            "error": None,
            "provenance": cell.metadata.get("loom"),
        }


def ok(**fields: Any) -> Json:
    base: Json = {"ok": True, "error": "", "code": "", "cells": [], "cell": None}
    return {**base, "index": None, "before": None, "conflicts": [], **fields}


def refused(error: str, code: str) -> Json:
    return {**ok(), "ok": False, "error": error, "code": code}
