"""The caps of one delegation: tokens, dollars and sub-agent runs, counted as they are spent."""

from __future__ import annotations

from dataclasses import dataclass, field

from loom_jupyter.messages import Usage
from loom_jupyter.models.pricing import cost_text, unpriced_usage

__all__ = ["Budget"]


@dataclass(kw_only=True)
class Budget:
    """Limits and what has been spent against them (plan, sub-agents and judges alike)."""

    max_tokens: int
    max_usd: float
    max_runs: int
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0  # of the requests whose model has a known price
    unpriced: bool = False  # some requests ran on a model without a known price
    runs: int = 0

    @property
    def tokens(self) -> int:
        """Every input (cache writes and reads included) and output token spent."""
        return self.usage.total_input_tokens + self.usage.output_tokens

    @property
    def cost_text(self) -> str:
        """What was spent, for people: ``$0.0123``, or with ``+ price unknown``."""
        return cost_text(self.cost_usd, unknown=self.unpriced)

    def spend(self, usage: Usage, cost: float, model: str) -> None:
        """Count one model request on ``model`` (``cost`` is 0.0 for an unpriced one)."""
        self.usage, self.cost_usd = self.usage + usage, self.cost_usd + cost
        tokens = usage.total_input_tokens + usage.output_tokens
        self.unpriced = self.unpriced or unpriced_usage([(model, tokens)])

    def breach(self) -> str | None:
        """Why no more work may start (a token or dollar cap reached), else ``None``."""
        if self.tokens >= self.max_tokens:
            return f"token budget reached ({self.tokens:,} of {self.max_tokens:,} tokens)"
        if self.cost_usd >= self.max_usd:
            return f"cost budget reached (${self.cost_usd:.4f} of ${self.max_usd:.2f})"
        return None

    def take_run(self) -> str | None:
        """Count a sub-agent run; the reason when the run cap forbids it."""
        if self.runs >= self.max_runs:
            return f"run cap reached ({self.max_runs} sub-agent runs)"
        self.runs += 1
        return None
