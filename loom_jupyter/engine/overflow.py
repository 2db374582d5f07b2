"""A request that does not fit the context budget, told in numbers with what to do about it.

Three cases, checked in order: the fixed part of every request (tools, system prompt,
instructions, session state) is over the budget on its own; the person's newest message
is too long for the room left; or the tool results of the turn in progress filled it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loom_jupyter.engine.prefix import RequestPrefix

__all__ = ["Overflow"]


@dataclass(frozen=True, kw_only=True)
class Overflow:
    """The budget, and what a request that exceeds it needs (estimated tokens)."""

    budget: int
    fixed: int  # the prefix, session state, hint reserve and framing
    history: int  # the turns in view, after the window moved as far as it can
    newest_message: int  # the person's newest message in view (0: none)
    only_turn: bool  # the window holds nothing but that message
    prefix: RequestPrefix

    def explain(self) -> str:
        """What does not fit, and how to make room (the :class:`ContextBudgetError`'s text)."""
        if self.fixed >= self.budget:
            return self._fixed_part_too_big()
        head = (
            f"This request needs about {self.fixed + self.history:,} tokens, more than "
            f"{self._limit}, even with everything older left in the archive and old tool "
            "results shortened."
        )
        if self.only_turn or self.newest_message > self.budget - self.fixed:
            return f"{head} {self._message_too_long()}"
        return (
            f"{head} The tool results of this turn filled the window: send a new message to "
            "continue (earlier results stay in the archive), or raise context_budget_tokens "
            "in loom.yaml."
        )

    @property
    def _limit(self) -> str:
        return (
            f"the context budget of {self.budget:,} tokens "
            "(context_budget_tokens minus output_reserve_tokens)"
        )

    def _fixed_part_too_big(self) -> str:
        parts, shrink = self.prefix.parts(self.fixed)
        advice = [
            "raise context_budget_tokens in loom.yaml (or LOOM_CONTEXT_BUDGET_TOKENS), or "
            "unset it so the budget follows the model's context window (%cowork model "
            "shows it)",
            *shrink,
        ]
        return (
            f"The fixed part of every request needs about {self.fixed:,} tokens on its own, "
            f"more than {self._limit}, so no message fits, however short. It holds {parts}. "
            f"To make room: {'; or '.join(advice)}."
        )

    def _message_too_long(self) -> str:
        parts, shrink = self.prefix.parts(self.fixed)
        advice = [
            "shorten it, or save the text to a file in the notebook's folder and ask me "
            "to read it in parts"
        ]
        if self.newest_message <= self.fixed:  # the fixed part takes most of the budget
            advice += ["raise context_budget_tokens in loom.yaml", *shrink]
        return (
            f"Your message alone is too long: about {self.newest_message:,} tokens, with "
            f"{self.budget - self.fixed:,} left for it after the fixed part of every request "
            f"({self.fixed:,} tokens: {parts}). To send it: {'; or '.join(advice)}."
        )
