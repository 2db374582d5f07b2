"""The numbers the live panel shows, as one frozen value, and how events change it.

Kept apart from the widgets so the text fallback, the HTML and the tests share
one source of truth.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from typing_extensions import assert_never

from loom_jupyter.engine.events import (
    ApprovalNeeded,
    Notice,
    StateChanged,
    TextDelta,
    ThinkingDelta,
    ToolDraft,
    ToolFinished,
    ToolStarted,
    TurnDone,
    TurnError,
    TurnStarted,
    UsageEvent,
)
from loom_jupyter.models.pricing import unpriced_usage
from loom_jupyter.records import FINISHED_TASK
from loom_jupyter.tools.approval import NOTEBOOK_CHANGES
from loom_jupyter.tools.cells import change_of

if TYPE_CHECKING:
    from loom_jupyter.archive import ModelCallRecord, SessionInfo, TaskInfo
    from loom_jupyter.engine.events import Event

__all__ = ["PanelData", "per_turn"]


Edits = tuple[tuple[str, str], ...]
"""Notebook changes shown in the panel: (summary, diff)."""


@dataclass(frozen=True, kw_only=True)
class PanelData:
    """A snapshot of the session for the panel."""

    title: str = ""
    prompts: int = 0  # the person's messages (what "turns" means to them)
    turns: int = 0  # archive rows: prompts, answers and tool results
    input_tokens: int = 0
    output_tokens: int = 0
    cache_tokens: int = 0
    cost_usd: float = 0.0  # of the calls whose model has a known price
    unpriced: bool = False  # some calls used a model without a known price
    activity: str = "idle"
    state_yaml: str = ""
    tasks: tuple[str, ...] = ()
    points: tuple[tuple[int, float], ...] = ()  # (tokens, cost) per turn
    task_html: str = ""  # live delegation tables (escaped HTML, see delegate_view)
    task_text: str = ""
    edits: Edits = ()  # the latest notebook changes

    @classmethod
    def build(
        cls,
        info: SessionInfo | None,
        calls: list[ModelCallRecord],
        tasks: list[TaskInfo],
        state_yaml: str,
        prompts: int = 0,
    ) -> PanelData:
        """From the archive rows of the current session (``prompts``: its user turns)."""
        running = tuple(
            f"{t.goal[:60]} ({t.status})" for t in tasks if t.status not in FINISHED_TASK
        )
        points = per_turn(calls)
        unpriced = unpriced_usage((c.model, _call_tokens(c)) for c in calls)
        if info is None:
            return cls(state_yaml=state_yaml, tasks=running, points=points, unpriced=unpriced)
        return cls(
            title=info.title or "(untitled)",
            prompts=prompts,
            turns=info.turn_count,
            input_tokens=info.input_tokens,
            output_tokens=info.output_tokens,
            cache_tokens=info.cache_creation_tokens + info.cache_read_tokens,
            cost_usd=info.cost_usd,
            unpriced=unpriced,
            state_yaml=state_yaml,
            tasks=running,
            points=points,
        )

    def apply(self, event: Event) -> PanelData:
        """The snapshot after ``event``."""
        replace = dataclasses.replace
        match event:
            case TurnStarted():
                points = (*self.points, (0, 0.0))
                return replace(self, activity="thinking", prompts=self.prompts + 1, points=points)
            case UsageEvent():
                return self._with_usage(event)
            case StateChanged():
                return replace(
                    self,
                    title=event.title or "(untitled)",
                    turns=event.turn_count,
                    state_yaml=event.state_yaml,
                )
            case ApprovalNeeded():
                return replace(self, activity=f"waiting for approval: {event.name}")
            case ToolDraft():
                return replace(self, activity=f"writing the input of {event.name}")
            case ToolStarted():
                return replace(self, activity=f"running {event.name}")
            case ToolFinished():
                return replace(self, activity="thinking", edits=_with_edit(self.edits, event))
            case TextDelta():
                return replace(self, activity="answering")
            case ThinkingDelta():
                return replace(self, activity="thinking")
            case TurnDone() | TurnError():
                return replace(self, activity="idle")
            case Notice():
                return self
            case _:
                assert_never(event)

    def _with_usage(self, event: UsageEvent) -> PanelData:
        u = event.usage
        tokens, cost = self.points[-1] if self.points else (0, 0.0)
        point = (tokens + u.total_input_tokens + u.output_tokens, cost + event.cost_usd)
        return dataclasses.replace(
            self,
            input_tokens=self.input_tokens + u.input_tokens,
            output_tokens=self.output_tokens + u.output_tokens,
            cache_tokens=self.cache_tokens
            + u.cache_creation_input_tokens
            + u.cache_read_input_tokens,
            cost_usd=self.cost_usd + event.cost_usd,
            unpriced=self.unpriced
            or unpriced_usage([(event.model, u.total_input_tokens + u.output_tokens)]),
            points=(*self.points[:-1], point),
        )


_EDITS_SHOWN = 5


def _with_edit(
    edits: tuple[tuple[str, str], ...], event: ToolFinished
) -> tuple[tuple[str, str], ...]:
    """The panel's latest notebook changes, with ``event``'s when it changed a cell."""
    if event.is_error or event.name not in NOTEBOOK_CHANGES:
        return edits
    return (*edits, (event.summary, change_of(event.result) or ""))[-_EDITS_SHOWN:]


_CONTINUES = {"tool_use", "pause_turn"}


def per_turn(calls: list[ModelCallRecord]) -> tuple[tuple[int, float], ...]:
    """(tokens, cost) per person's turn: a turn's calls end with a non-tool stop reason."""
    points: list[tuple[int, float]] = []
    tokens, cost, open_turn = 0, 0.0, False
    for call in calls:
        tokens, cost, open_turn = tokens + _call_tokens(call), cost + call.cost_usd, True
        if call.stop_reason not in _CONTINUES:
            points.append((tokens, cost))
            tokens, cost, open_turn = 0, 0.0, False
    if open_turn:
        points.append((tokens, cost))
    return tuple(points)


def _call_tokens(call: ModelCallRecord) -> int:
    return (
        call.input_tokens + call.output_tokens + call.cache_creation_tokens + call.cache_read_tokens
    )
