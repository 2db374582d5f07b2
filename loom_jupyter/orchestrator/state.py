"""The mutable record of one subtask while a delegation runs, and its frozen views."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from loom_jupyter.messages import Usage
from loom_jupyter.orchestrator.judge import Verdict
from loom_jupyter.orchestrator.progress import SubtaskView
from loom_jupyter.tools.base import FileEffect, VariableEffect

if TYPE_CHECKING:
    from loom_jupyter.orchestrator.plan import PlannedSubtask
    from loom_jupyter.orchestrator.progress import SubtaskStatus
    from loom_jupyter.records import SubtaskInfo

__all__ = ["SubtaskRun", "effect_from_dict", "effect_to_dict"]


@dataclass
class SubtaskRun:
    """One subtask's progress: status, attempts, spend, result, verdicts and effects."""

    sub: PlannedSubtask
    row_id: str
    status: SubtaskStatus = "pending"
    attempt: int = 0
    started: float | None = None
    elapsed: float = 0.0
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    last_tool: str | None = None
    result: str = ""
    reason: str = ""
    verdicts: list[Verdict] = field(default_factory=list)
    effects: list[FileEffect | VariableEffect] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    stop: tuple[SubtaskStatus, str] | None = None  # what a cancellation of this run means

    @classmethod
    def from_row(cls, sub: PlannedSubtask, row: SubtaskInfo) -> SubtaskRun:
        """The run as archived: a passed one keeps its result, others start again."""
        run = cls(sub, row.id, attempt=row.attempts, sessions=json.loads(row.sessions_json))
        run.usage = Usage(row.input_tokens, row.output_tokens)
        run.cost = row.cost_usd
        run.verdicts = [Verdict(**v) for v in json.loads(row.verdicts_json)]
        if row.status == "passed":
            run.status, run.result, run.reason = "passed", row.result or "", row.reason
            run.effects = [effect_from_dict(e) for e in json.loads(row.effects_json)]
        return run

    @property
    def tokens(self) -> int:
        """Tokens this subtask used (sub-agent and judge)."""
        return self.usage.total_input_tokens + self.usage.output_tokens

    def begin(self) -> None:
        """Mark it running (the clock starts at the first attempt)."""
        self.status = "running"
        if self.started is None:
            self.started = time.monotonic()

    def end(self, status: SubtaskStatus, reason: str) -> None:
        """Mark it finished."""
        self.status, self.reason = status, reason
        if self.started is not None:
            self.elapsed = time.monotonic() - self.started
            self.started = None

    def view(self) -> SubtaskView:
        """The row of the live table."""
        running = time.monotonic() - self.started if self.started is not None else 0.0
        return SubtaskView(
            id=self.sub.id,
            description=self.sub.description,
            status=self.status,
            attempt=self.attempt,
            elapsed_s=self.elapsed + running,
            tokens=self.tokens,
            last_tool=self.last_tool,
            reason=self.reason,
        )

    def verdicts_json(self) -> str:
        """Every verdict so far, as stored."""
        return json.dumps([v.to_dict() for v in self.verdicts], ensure_ascii=False)

    def effects_json(self) -> str:
        """The variables and files the passing run produced, as stored."""
        return json.dumps([effect_to_dict(e) for e in self.effects], ensure_ascii=False)


def effect_to_dict(effect: FileEffect | VariableEffect) -> dict[str, object]:
    """An effect as JSON."""
    if isinstance(effect, FileEffect):
        return {"kind": "file", "path": effect.path, "action": effect.action}
    return {
        "kind": "variable",
        "name": effect.name,
        "type": effect.type_name,
        "shape": effect.shape,
    }


def effect_from_dict(data: dict[str, object]) -> FileEffect | VariableEffect:
    """The effect stored by :func:`effect_to_dict`."""
    if data.get("kind") == "file":
        return FileEffect(str(data["path"]), data["action"])  # type: ignore[arg-type]
    shape = data.get("shape")
    return VariableEffect(
        str(data["name"]), str(data["type"]), None if shape is None else str(shape)
    )
