"""Engine events -> sidebar messages, for one turn at a time.

The same typed events the cell renderer draws are fanned out to the sidebar;
this turns each into the protocol's messages. Dispatch is exhaustive.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import assert_never

from loom_jupyter.host.runtime.history import cap
from loom_jupyter.host.wire.protocol import (
    NoticeMsg,
    Outbound,
    Status,
    TextMsg,
    ThinkingMsg,
    ToolFinishedMsg,
    ToolInputMsg,
    ToolStartedMsg,
    TurnDoneMsg,
    TurnErrorMsg,
    TurnStartedMsg,
    UsageMsg,
)

if TYPE_CHECKING:
    from loom_jupyter.engine.events import Event, ToolFinished

__all__ = ["TurnMirror"]

Source = Literal["cell", "sidebar", "outside"]
"""Who began the turn; ``outside``: an outside agent's tool call (DESIGN §14), whose gate
events become tool messages marked with the client's name (its mirror's ``text``)."""
_TURN_TYPES = frozenset(
    {
        "turn_started",
        "text",
        "thinking",
        "tool_started",
        "tool_finished",
        "approval",
        "approval_closed",
        "usage",
        "cell",
        "notice",
        "turn_done",
        "turn_error",
    }
)


@dataclass
class TurnMirror:
    """The running turn as the sidebar sees it (one per turn)."""

    source: Source
    text: str
    client_id: str | None
    cost_before: float = 0.0
    context_budget: int = 0
    turn: int | None = None
    sent: list[dict[str, Any]] = field(default_factory=list)  # its events, for a late front
    started: dict[str, float] = field(default_factory=dict)  # call id -> monotonic start
    inputs: dict[str, dict[str, object]] = field(default_factory=dict)  # from approvals
    cost: float = 0.0
    unpriced: bool = False  # a request ran on a model without a public price
    asking: bool = False  # an approval is pending: the next tool event resumes "thinking"
    answered: bool = False  # the turn's TurnDone or TurnError is out: only its ending is left

    def messages(self, event: Event) -> list[Outbound]:
        """The messages for ``event`` (tool events carry their input and result: no read
        of the archive)."""
        turn = self.turn or 0
        if event.kind == "turn_started":
            self.turn = event.turn_number
            began: Literal["cell", "sidebar"] = "cell" if self.source == "cell" else "sidebar"
            return [
                TurnStartedMsg(event.turn_number, began, self.text, self.client_id),
                Status("thinking"),
            ]
        if event.kind == "text_delta":
            return [TextMsg(turn, event.text)]
        if event.kind == "thinking_delta":
            return [ThinkingMsg(turn, event.text, event.redacted)]
        if event.kind == "tool_draft":
            return [ToolInputMsg(turn, event.call_id, event.name, event.piece, self._outside)]
        if event.kind == "tool_started":
            self.started[event.call_id] = time.monotonic()
            inputs = self.inputs.get(event.call_id) or event.input
            started = ToolStartedMsg(
                turn, event.call_id, event.name, event.summary, dict(inputs), self._outside
            )
            return [*self._answered(), started]
        if event.kind == "approval_needed":
            self.asking = True
            return [Status("waiting-approval", f"waiting for approval: {event.name}")]
        if event.kind == "tool_finished":
            finished = self._finished(event)
            return [*self._answered(), finished]
        if event.kind == "usage":
            return [self._usage(event.usage.total_input_tokens, event.usage.output_tokens, event)]
        if event.kind == "notice":
            return [NoticeMsg(event.message, event.level)]
        if event.kind == "state_changed":
            return []
        if event.kind in ("turn_done", "turn_error"):
            self.answered = True
        if event.kind == "turn_done":
            return [TurnDoneMsg(turn, event.stop_reason, event.text), Status("idle")]
        if event.kind == "turn_error":
            return [TurnErrorMsg(self.turn, event.message, event.error_class), Status("idle")]
        assert_never(event)

    def keep(self, data: dict[str, Any]) -> None:
        """Remember one sent event of this turn (text pieces merged: one turn's size, not more).

        A front that opens mid-turn gets these after its welcome, however long
        the answer grew past the ring buffer.
        """
        if data["type"] not in _TURN_TYPES:
            return  # queue and status snapshots are in the welcome itself
        last = self.sent[-1] if self.sent else None
        if last is not None and last["type"] == data["type"] in ("text", "thinking"):
            merged = {**data, "delta": last["delta"] + data["delta"]}
            if data["type"] == "thinking":
                merged["redacted"] = last["redacted"] or data["redacted"]
            self.sent[-1] = merged
        else:
            self.sent.append(data)

    def _answered(self) -> list[Outbound]:
        """Back to "thinking" once a pending approval was answered (allowed or denied)."""
        if not self.asking:
            return []
        self.asking = False
        return [Status("thinking")]

    def _finished(self, event: ToolFinished) -> ToolFinishedMsg:
        began = self.started.pop(event.call_id, time.monotonic())
        ms = int((time.monotonic() - began) * 1000)
        return ToolFinishedMsg(
            self.turn or 0,
            event.call_id,
            event.name,
            event.summary,
            event.is_error,
            ms,
            cap(event.result),
            dict(event.input),
            self._outside,
        )

    @property
    def _outside(self) -> str:
        """The outside agent whose call this is (its tool messages carry the name), or ""."""
        return self.text if self.source == "outside" else ""

    def _usage(self, context: int, output: int, event: Event) -> UsageMsg:
        from loom_jupyter.models.pricing import priced

        self.cost += float(getattr(event, "cost_usd", 0.0))
        self.unpriced = self.unpriced or not priced(str(getattr(event, "model", "")))
        total = self.cost_before + self.cost
        return UsageMsg(context, output, total, context, self.context_budget, self.unpriced)
