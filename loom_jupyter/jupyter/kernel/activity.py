"""What the person ran in the notebook between two turns.

:class:`CellActivity` follows the main shell's cells through ``pre_run_cell`` /
``post_run_cell`` (the agent's ``run_python`` executes code directly and fires
neither, and the coworker's own magics are skipped), recording each cell's code,
its outcome (the error's type and message) and the user variables it created or
rebound, with type and shape (secrets redacted). At the next turn the session archives
:func:`activity_note` of what was recorded as a ``system`` turn, so the model
reads it right before the person's message, and recall and export have it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from loom_jupyter.lineage import ExecutionRecord
    from loom_jupyter.tools.base import VariableEffect
    from loom_jupyter.tools.describe import Snapshot
    from loom_jupyter.tools.namespace_reader import NamespaceReader

__all__ = [
    "NOTE_TOKENS",
    "CellActivity",
    "CellRun",
    "activity_effects",
    "activity_note",
    "earlier_cells",
]

NOTE_TOKENS = 400
"""The note's budget; older cells beyond it are counted, not shown."""

_CODE_CHARS = 200
_KEPT = 200  # cells remembered between two turns (the note shows far fewer)
_OWN_MAGICS = ("%cowork", "%%cowork", "%delegate", "%%delegate", "%load_ext", "%reload_ext")
_SEEN = "_loom_cells_seen"  # on the shell: the last execution count recorded (or seen)
_LOADERS = ("_loom_autoload", "load_ipython_extension")  # the sidebar's auto-load code


@dataclass(frozen=True)
class CellRun:
    """One cell the person ran: its code, its error (if any) and the variables it set."""

    execution_count: int | None
    code: str
    error: str | None
    effects: tuple[VariableEffect, ...] = ()

    @property
    def variables(self) -> tuple[str, ...]:
        """``name: type shape`` of each variable the cell created or rebound."""
        return tuple(_variable(effect) for effect in self.effects)

    def line(self) -> str:
        """``- [7] `1/0` -> ZeroDivisionError: division by zero``."""
        count = f"[{self.execution_count}] " if self.execution_count is not None else ""
        outcomes = [f"error {self.error}"] if self.error else []
        if self.variables:
            outcomes.append("set " + ", ".join(self.variables))
        outcome = "; ".join(outcomes) or "ran"
        return f"- {count}`{self.code}` -> {outcome}"


class CellActivity:
    """Records the person's cells until :meth:`take` hands them over (thread-safe)."""

    def __init__(
        self, shell: Any, recorder: Callable[[ExecutionRecord], None] | None = None
    ) -> None:
        self._shell = shell
        self._recorder = recorder  # each cell's execution record goes here (issue 21)
        self._started_at = 0.0
        self._lock = threading.Lock()
        self._runs: list[CellRun] = []
        self._before: Snapshot | None = None
        shell.events.register("pre_run_cell", self._started)
        shell.events.register("post_run_cell", self._ended)

    def close(self) -> None:
        """Stop following cells."""
        for name, callback in (("pre_run_cell", self._started), ("post_run_cell", self._ended)):
            try:
                self._shell.events.unregister(name, callback)
            except ValueError:
                continue

    def take(self) -> list[CellRun]:
        """The cells run since the last call, oldest first; forgets them."""
        with self._lock:
            runs, self._runs = self._runs, []
        return runs

    def keep(self, runs: Sequence[CellRun]) -> None:
        """Hold ``runs`` (a predecessor's, not yet handed over) before the ones seen since."""
        with self._lock:
            self._runs = [*runs, *self._runs][-_KEPT:]

    def _started(self, info: Any) -> None:
        own = _is_own(getattr(info, "raw_cell", "") or "")
        from loom_jupyter.tools.describe import snapshot  # on the first cell (not at load)

        self._before = None if own else snapshot(self._shell.user_ns)
        self._started_at = time.perf_counter()

    def _ended(self, result: Any) -> None:
        before, self._before = self._before, None
        if before is None:
            return
        duration = time.perf_counter() - self._started_at
        info = getattr(result, "info", None)
        code = getattr(info, "raw_cell", "") or ""
        if getattr(info, "store_history", False):  # a silent run takes no count of its own
            _seen(self._shell, getattr(result, "execution_count", None))
        from loom_jupyter.lineage import execution_record
        from loom_jupyter.tools.describe import changed_variables

        error = _error_text(result)
        count = getattr(result, "execution_count", None)

        def facts(read: bool) -> tuple[tuple[VariableEffect, ...], ExecutionRecord | None]:
            """The variables the cell set and its record; unless ``read``, without running
            any value's code (no shapes, no fingerprints)."""
            ns = self._shell.user_ns
            effects = changed_variables(before, ns, shapes=read)
            if self._recorder is None:
                return effects, None
            return effects, execution_record(
                code,
                source="cell",
                changed=[effect.name for effect in effects],
                namespace=ns if read else {},
                duration_s=duration,
                error=error,
                execution_count=count,
                cell_id=getattr(info, "cell_id", None),
            )

        # Shapes and fingerprints run the values' own code (``shape``, ``repr``): a value
        # whose code hangs must not hold the person's kernel after their cell.
        effects, record = _facts_reader().within(lambda: facts(True), lambda: facts(False))
        run = CellRun(execution_count=count, code=_trimmed(code), error=error, effects=effects)
        if self._recorder is not None and record is not None:
            self._recorder(record)
        with self._lock:
            self._runs = [*self._runs, run][-_KEPT:]


_FACTS_SECONDS = 3.0
"""How long the shapes and fingerprints of what a cell set may take (milliseconds normally)."""


def _facts_reader() -> NamespaceReader:
    from loom_jupyter.tools.namespace_reader import DescribeLimits, NamespaceReader

    return NamespaceReader(DescribeLimits(seconds=_FACTS_SECONDS))


def earlier_cells(shell: Any) -> list[ExecutionRecord]:
    """The cells this kernel ran before Loom loaded, as late records (issue 30): IPython's
    own history with its execution counts, the names each sets by :func:`analyze` — no
    timing and no namespace diff. Loom's own lines and the sidebar's auto-load are left
    out, and a cell recorded before (a reload of the extension) is not recorded again."""
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if not history:
        history = shell.user_ns.get("_ih") or []
    current = int(getattr(shell, "execution_count", 0) or 0)  # the loading cell's, or next
    start = int(getattr(shell, _SEEN, 0) or 0) + 1
    records = []
    for count in range(max(start, 1), min(current, len(history))):
        code = history[count] or ""
        if not code.strip() or _is_own(code) or any(mark in code for mark in _LOADERS):
            continue
        from loom_jupyter.lineage import execution_record

        records.append(
            execution_record(
                code,
                source="cell",
                changed=(),
                namespace={},
                duration_s=0.0,
                execution_count=count,
                late=True,
            )
        )
    _seen(shell, current - 1)
    return records


def _seen(shell: Any, count: int | None) -> None:
    if count is not None and count > int(getattr(shell, _SEEN, 0) or 0):
        try:
            setattr(shell, _SEEN, count)
        except AttributeError:  # a shell that takes no attributes: nothing is remembered
            return


def activity_note(runs: Sequence[CellRun], *, max_tokens: int = NOTE_TOKENS) -> str | None:
    """The note for the model: newest cell first, within ``max_tokens``; the rest counted.

    Secrets in the code or errors (a key typed into a cell) are redacted: the note
    is archived and sent to the model."""
    if not runs:
        return None
    head = (
        f"[Notebook activity: since the last turn the person ran {len(runs)} cell(s), newest first:"
    )
    budget = max_tokens * 4 - len(head) - 80  # about 4 characters a token; room for the tail
    lines: list[str] = []
    for run in reversed(runs):
        line = run.line()
        if len(line) + 1 > budget and lines:
            break
        lines.append(line[:budget])
        budget -= len(line) + 1
    hidden = len(runs) - len(lines)
    tail = f"\n(and {hidden} older cell(s) not shown)]" if hidden else "]"
    from loom_jupyter.tools.output import redact_secrets

    return redact_secrets(head + "\n" + "\n".join(lines) + tail)


def activity_effects(runs: Sequence[CellRun]) -> list[VariableEffect]:
    """The variables the cells made, oldest first (a later cell's value wins)."""
    return [effect for run in runs for effect in run.effects]


def _is_own(code: str) -> bool:
    first = code.lstrip().split(None, 1)[0] if code.strip() else ""
    return first in _OWN_MAGICS or first.startswith(("%cowork", "%%cowork"))


def _trimmed(code: str) -> str:
    flat = " ".join(code.split())
    return flat if len(flat) <= _CODE_CHARS else flat[: _CODE_CHARS - 1] + "…"


def _error_text(result: Any) -> str | None:
    error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    if error is None:
        return None
    message = " ".join(str(error).split())[:160]
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _variable(effect: VariableEffect) -> str:
    shape = f" {effect.shape}" if effect.shape else ""
    return f"{effect.name}: {effect.type_name}{shape}"
