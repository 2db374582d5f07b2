"""The typed events a conversation turn yields (and the approval seam, re-exported).

Every front (magics, panel, sidebar) renders the same stream: iterate
``CoworkSession.send(text)`` and dispatch on ``event.kind`` (a ``Literal``).
Events are frozen values with JSON-friendly fields, so the sidebar can send
``dataclasses.asdict(event)`` as is.

A turn always ends with exactly one :class:`TurnDone` or :class:`TurnError`
(unless the consuming task itself is cancelled, which re-raises
``asyncio.CancelledError`` after archiving the partial answer).

The approval seam is the tools layer's: an :data:`Approver` is an async
callable taking an :class:`ApprovalRequest` (tool name, summary, ``detail`` to
show: code, command or diff) and answering ``"yes"``/``"allow"``,
``"no"``/``"deny"`` or ``"always"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from loom_jupyter.tools.approval import ApprovalAnswer, ApprovalRequest, Approver

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loom_jupyter.messages import Usage

__all__ = [
    "ApprovalAnswer",
    "ApprovalNeeded",
    "ApprovalRequest",
    "Approver",
    "Event",
    "Notice",
    "StateChanged",
    "TextDelta",
    "ThinkingDelta",
    "ToolDraft",
    "ToolFinished",
    "ToolStarted",
    "TurnDone",
    "TurnEndReason",
    "TurnError",
    "TurnStarted",
    "UsageEvent",
]

TurnEndReason = Literal[
    "end_turn",
    "stop_sequence",
    "max_tokens",
    "refusal",
    "model_context_window_exceeded",
    "iteration_limit",
    "interrupted",
    "protected_change",
]
"""Why a turn ended without an error (the model's stop reason, or ours)."""


@dataclass(frozen=True)
class TurnStarted:
    """The user's message is archived; the model is about to be asked."""

    session_id: str
    turn_number: int
    kind: Literal["turn_started"] = "turn_started"


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's answer as it streams."""

    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ThinkingDelta:
    """A piece of the model's thinking as it streams (fronts show it collapsed).

    ``redacted``: an encrypted thinking block came, whose text nobody can read. The
    finished blocks (signatures included) are archived with the assistant message.
    """

    text: str
    redacted: bool = False
    kind: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True)
class ToolDraft:
    """A piece of a tool call's JSON input as the model writes it (before it can run)."""

    call_id: str
    name: str
    piece: str
    kind: Literal["tool_draft"] = "tool_draft"


@dataclass(frozen=True)
class ToolStarted:
    """A tool call is about to run (after approval, when it needed one); ``input`` is the
    call's input as archived."""

    call_id: str
    name: str
    summary: str
    input: Mapping[str, Any] = field(default_factory=dict)
    kind: Literal["tool_started"] = "tool_started"


@dataclass(frozen=True)
class ApprovalNeeded:
    """A write tool waits for the person's decision (the approver is being asked now).

    ``detail`` is what to judge by: the code, the command, or a diff of the file.
    """

    call_id: str
    name: str
    summary: str
    detail: str
    kind: Literal["approval_needed"] = "approval_needed"


@dataclass(frozen=True)
class ToolFinished:
    """A tool call ended; its result is archived as ``turn_number``. ``input`` and
    ``result`` are what the archive holds (capped and redacted), so a front needs no
    read of the archive to show them."""

    call_id: str
    name: str
    summary: str
    is_error: bool
    turn_number: int
    input: Mapping[str, Any] = field(default_factory=dict)
    result: str = ""
    kind: Literal["tool_finished"] = "tool_finished"


@dataclass(frozen=True)
class UsageEvent:
    """One model request finished: its usage and cost (USD, 0.0 when unknown)."""

    usage: Usage
    cost_usd: float
    model: str
    kind: Literal["usage"] = "usage"


@dataclass(frozen=True)
class Notice:
    """Something the person should know that does not end the turn (retry, limit, window)."""

    message: str
    level: Literal["info", "warning"] = "info"
    kind: Literal["notice"] = "notice"


@dataclass(frozen=True)
class StateChanged:
    """The session's state or totals changed (sent after each turn).

    After ``resume``/``new``/``fork`` a front asks ``session.state_event()`` itself.
    """

    session_id: str | None
    title: str
    turn_count: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    state_yaml: str
    kind: Literal["state_changed"] = "state_changed"


@dataclass(frozen=True)
class TurnDone:
    """The turn ended; ``first_turn..last_turn`` are its archived turn numbers."""

    stop_reason: TurnEndReason
    first_turn: int
    last_turn: int
    text: str
    usage: Usage
    cost_usd: float
    message: str = ""
    kind: Literal["turn_done"] = "turn_done"


@dataclass(frozen=True)
class TurnError:
    """The turn failed; everything up to the failure is archived.

    ``message`` says what happened and what to do; ``error_class`` is the
    :mod:`loom_jupyter.errors` class name (``"RateLimitedError"``...).
    """

    message: str
    error_class: str
    first_turn: int = 0
    last_turn: int = 0
    kind: Literal["turn_error"] = "turn_error"


Event: TypeAlias = (
    TurnStarted
    | TextDelta
    | ThinkingDelta
    | ToolDraft
    | ToolStarted
    | ApprovalNeeded
    | ToolFinished
    | UsageEvent
    | Notice
    | StateChanged
    | TurnDone
    | TurnError
)
