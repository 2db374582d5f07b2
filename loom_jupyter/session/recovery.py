"""After a crash: what the dead kernel left, told honestly to the model and to the person.

A kernel killed with SIGKILL (or by the OOM killer) releases nothing. The next
kernel takes its lease at once (see :mod:`loom_jupyter.archive.liveness`) and
:class:`CrashRecovery` reads the tail of the session to say what happened: when,
whether a turn was running, how much of a streamed answer was kept, which tools
never finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from loom_jupyter.messages import ToolResultBlock, ToolUseBlock

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loom_jupyter.messages import Turn
    from loom_jupyter.records import LeaseTakeover

__all__ = ["KERNEL_DIED_RESULT", "CrashRecovery"]

KERNEL_DIED_RESULT = (
    "interrupted: the kernel died while this ran (killed, out of memory or crashed), so it has "
    "no result; its effects, if any, are unknown and the kernel's variables are gone."
)


@dataclass(frozen=True)
class CrashRecovery:
    """What a dead kernel left in its session."""

    died_at: str  # ISO time of the last sign of life (heartbeat or last write)
    during_turn: bool  # a turn was running: its answer is unfinished
    partial_chars: int  # characters of a streamed answer kept (0: none)
    tools_cut: tuple[str, ...]  # tools that were running
    last_turn: int

    @classmethod
    def inspect(cls, tail: Sequence[Turn], takeover: LeaseTakeover) -> CrashRecovery:
        """Read the last turns of a session whose writer died."""
        last = tail[-1] if tail else None
        times = [t for t in (takeover.heartbeat, last.created_at if last else None) if t]
        partial = [t for t in _current_exchange(tail) if t.status == "partial"]
        return cls(
            died_at=max(times) if times else "",
            during_turn=last is not None and not _finished(last),
            partial_chars=sum(len(t.content) for t in partial),
            tools_cut=tuple(call.name for call in _unanswered(tail)),
            last_turn=last.turn_number if last else 0,
        )

    @property
    def died_at_text(self) -> str:
        """The time of death for people: ``2026-11-22 21:04:11 UTC``."""
        if not self.died_at:
            return "an unknown time"
        moment = datetime.fromisoformat(self.died_at)
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")

    def banner(self) -> str:
        """One line for the person who reopens the notebook."""
        if not self.during_turn:
            return (
                f"The previous kernel died at {self.died_at_text}, between turns; nothing was lost."
            )
        kept = (
            f"the partial answer ({self.partial_chars:,} characters) is kept"
            if self.partial_chars
            else "everything archived before it is kept"
        )
        cut = f"; {', '.join(self.tools_cut)} did not finish" if self.tools_cut else ""
        return f"The previous kernel died during a turn at {self.died_at_text}: {kept}{cut}."

    def model_note(self) -> str:
        """The system turn the model reads after the cut-off answer."""
        parts = [f"[The kernel died at {self.died_at_text} during this turn."]
        if self.partial_chars:
            parts.append("The answer above was cut off where it stopped streaming.")
        if self.tools_cut:
            parts.append(f"These tools never finished: {', '.join(self.tools_cut)}.")
        parts.append(
            "The kernel's variables are gone; re-create them (rebuild_variables replays the "
            "archived executions that made them) before relying on them.]"
        )
        return " ".join(parts)


def _finished(turn: Turn) -> bool:
    """Whether ``turn`` can be the clean end of a turn: a complete answer with no tool calls."""
    return (
        turn.role in ("assistant", "system")
        and turn.status == "complete"
        and not any(isinstance(b, ToolUseBlock) for b in turn.blocks)
    )


def _current_exchange(tail: Sequence[Turn]) -> list[Turn]:
    """The turns after the last user message (the turn that was running)."""
    starts = [i for i, t in enumerate(tail) if t.role == "user"]
    return list(tail[starts[-1] + 1 :]) if starts else list(tail)


def _unanswered(tail: Sequence[Turn]) -> list[ToolUseBlock]:
    """Tool calls of the last assistant message that have no result."""
    answered = {b.tool_use_id for t in tail for b in t.blocks if isinstance(b, ToolResultBlock)}
    calls = [b for t in tail if t.role == "assistant" for b in t.blocks]
    last_assistant = next((t for t in reversed(tail) if t.role == "assistant"), None)
    if last_assistant is None:
        return []
    return [
        b
        for b in last_assistant.blocks
        if isinstance(b, ToolUseBlock) and b.id not in answered and b in calls
    ]
