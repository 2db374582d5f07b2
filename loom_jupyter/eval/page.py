"""A page holding the task's notebook, as the kernel sees it over the ``loom`` comm.

The harness plays the page a person's JupyterLab would be (DESIGN §9): it opens the comm
with ``documents: true`` on a kernel subshell (so it answers while a ``%cowork`` cell
runs), answers ``ping`` and applies each ``notebook_request`` to an in-memory list of
cells. A change the agent makes through the cell tools lands here and nowhere else.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NotebookPage", "PageCell"]

Json = dict[str, Any]


@dataclass
class PageCell:
    """One cell of the page's notebook."""

    id: str
    source: str
    cell_type: str = "code"
    provenance: Json | None = None


@dataclass
class NotebookPage:
    """The notebook the page holds; :meth:`answer` turns a kernel message into a reply."""

    cells: list[PageCell] = field(default_factory=list)
    comm_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def holding(cls, sources: tuple[str, ...]) -> NotebookPage:
        return cls([PageCell(f"cell-{i + 1}", s) for i, s in enumerate(sources)])

    def hello(self) -> Json:
        """The comm's opening message: a Lab page that holds the open notebook."""
        return {
            "type": "hello",
            "protocol": 1,
            "notebook_path": "",
            "since_seq": None,
            "kernel_session": None,
            "client": "lab",
            "documents": True,
        }

    def sources(self) -> list[str]:
        return [c.source for c in self.cells]

    def answer(self, data: Json) -> Json | None:
        """The reply to a message the kernel sent on the comm (``None``: nothing to say)."""
        if data.get("type") == "ping":
            return {"type": "pong", "ping_id": data.get("ping_id"), "on_screen": True}
        if data.get("type") != "notebook_request":
            return None
        result = self._apply(data.get("change") or {})
        return {"type": "notebook_reply", "request_id": data.get("request_id"), "result": result}

    def _apply(self, change: Json) -> Json:
        op = change.get("op")
        if op == "read":
            return _ok(cells=[self._doc(c) for c in self.cells])
        if op == "insert":
            return self._insert(change)
        if op == "revert":
            return _refused("this page does not revert", "refused")
        at = self._index(change.get("cell_id"))
        if at is None:
            return _refused("no such cell", "missing")
        return self._change(op, at, change)

    def _change(self, op: Any, at: int, change: Json) -> Json:
        cell = self.cells[at]
        base = change.get("base_source")
        if op in ("edit", "delete") and base is not None and base != cell.source:
            return _refused("changed since read", "changed")
        if op == "edit":
            before, cell.source = cell.source, str(change.get("source", ""))
            cell.provenance = change.get("provenance") or cell.provenance
            return _ok(cell=self._doc(cell), index=at, before=before)
        if op == "delete":
            del self.cells[at]
            return _ok(index=at, before=cell.source)
        if op == "move":
            was_after = self.cells[at - 1].id if at > 0 else ""
            del self.cells[at]
            to = self._after(change.get("after_cell_id"))
            self.cells.insert(to, cell)
            return _ok(cell=self._doc(cell), index=to, was_after=was_after)
        if op == "outputs":
            return _ok(cell=self._doc(cell), index=at)
        return _refused(f"unknown change {op!r}", "refused")

    def _insert(self, change: Json) -> Json:
        cell = PageCell(uuid.uuid4().hex[:8], str(change.get("source", "")))
        cell.cell_type = str(change.get("cell_type", "code"))
        cell.provenance = change.get("provenance")
        below = change.get("below_active")
        to = len(self.cells) if below else self._after(change.get("after_cell_id"))
        self.cells.insert(to, cell)
        return _ok(cell=self._doc(cell), index=to)

    def _index(self, cell_id: Any) -> int | None:
        return next((i for i, c in enumerate(self.cells) if c.id == cell_id), None)

    def _after(self, cell_id: Any) -> int:
        if cell_id is None:
            return 0
        at = self._index(cell_id)
        return len(self.cells) if at is None else at + 1

    def _doc(self, cell: PageCell) -> Json:
        return {
            "id": cell.id,
            "cell_type": cell.cell_type,
            "source": cell.source,
            "execution_count": None,
            "outputs": "",
            "error": None,
            "provenance": cell.provenance,
        }


def _ok(**fields: Any) -> Json:
    base: Json = {"ok": True, "error": "", "code": "", "cells": [], "cell": None}
    return {**base, "index": None, "before": None, "conflicts": [], **fields}


def _refused(error: str, code: str) -> Json:
    return {**_ok(), "ok": False, "error": error, "code": code}
